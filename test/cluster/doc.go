// Package cluster is firn's fault harness: it builds firn from the tree,
// starts a real 3-member etcd on loopback ports and several `firn serve`
// processes on it, each also serving a segment tag from PostgreSQL through
// a fault proxy of its own, drives load over HTTP, injects faults with the
// production build (kill -9, SIGSTOP past the lease TTL, a pause just after
// an HWM write, a partition from etcd, the etcd leader killed, rolling
// restarts, a process cut off from the database, the database down for
// all) and records every request to a history that package history
// checks. It is a module of its own so that library users do not inherit
// it; `make chaos-short` and `make chaos` run it.
package cluster
