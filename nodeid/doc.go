// Package nodeid hands out node IDs and keeps each node's high-water mark
// (HWM) ahead of its generator.
//
// Acquire claims a node ID from a Store — etcd, SQL, a local file, or a
// static or derived value kept in a local file — and returns a Lease. The
// lease keeps the claim alive in the background and extends the node's HWM
// to the generator's own time plus a window, in one write fenced by a token
// unique to this acquisition. A Lease satisfies the Reservation interface
// of package snowflake (without importing it): the generator issues no tick
// that ends after the last HWM the store confirmed, and whoever takes the
// node next starts at or after that HWM. Together the two never issue the
// same tick, whatever the clocks or the network do; a lost lease stops the
// generator at its HWM and reports why.
//
// Stores implement Store; package nodeidtest holds the conformance suite
// every store passes and an in-memory store for tests.
package nodeid
