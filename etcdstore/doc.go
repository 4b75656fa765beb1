// Package etcdstore keeps node IDs, leases and HWMs in etcd, the cluster
// default.
//
// A namespace is a key prefix. A node is held by a key on an etcd lease,
// so it is recycled when its holder stops renewing; the node's HWM lives in
// a key of its own, on no lease, and outlives every holder. Every HWM write
// is a transaction fenced by the holder's lease and the HWM key's revision.
//
// Store.Segments serves segment mode from the same prefix: each tag's
// counter is a key moved by compare-and-swap on its revision.
//
// etcd restores a lease's full TTL when a new leader takes over, so after
// a leader change a dead holder's node may take up to one more TTL to be
// free again.
package etcdstore
