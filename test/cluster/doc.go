// Package cluster is firn's fault harness: it builds firn from the tree,
// starts a node store on loopback ports (Config.Store: a real 3-member
// etcd, a PostgreSQL or MariaDB server of its own, or a 3-member ZooKeeper
// ensemble) and several `firn serve` processes on it, each also serving a
// segment tag from a set of two databases (PostgreSQL and MariaDB, one
// residue class each) through fault proxies of its own, and, beside them
// on the same node pool (Config.Embedded), processes of cmd/embedded, an
// application that embeds firn through package ids and hands its IDs out
// on firn serve's batch route; it drives load over HTTP and through the
// Go client, injects faults with the production build (kill -9, SIGSTOP
// past the lease TTL, a pause just after an HWM write, a partition from
// the node store, the store crashed — etcd's or ZooKeeper's leader, the
// database server — rolling restarts, a process cut off from the segment
// databases, the databases down for all, one of the two down; kill -9,
// SIGSTOP and the partition also on each embedding process) and records
// every request to a history that package history checks. Every process
// runs the test build, which records its node-store operations for
// package storecheck's linearizability check, unless
// FIRN_CHAOS_BUILD=production (IDs checked, no store history). It is a
// module of its own so that library users do not inherit it; `make
// chaos-short` and `make chaos` run it.
package cluster
