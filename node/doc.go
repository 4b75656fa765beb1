// Package node keeps one node held and a checked generator serving on it,
// for a process that serves IDs (firn serve, or a program of its own).
//
// A Holder takes a node with nodeid.Acquire — waiting and trying again,
// not ready, while none can be taken, and saying why (NotReady) — builds
// a snowflake generator on its lease, and runs Config.Check on that
// generator before handing it out: the migration floor today, on every
// acquisition. Watch then watches the lease. A lost lease stops its
// generator at the HWM the store last confirmed (nodeid froze it); the
// holder retires it (never revives it), takes a new lease with a new
// owner token, checks the new generator, and hands it to the caller's
// replace function, such as server.Server.Replace. Close releases the
// lease: call it after the servers that issue from the generator have
// stopped, so no ID is issued on a node this process no longer holds.
//
// The package sits between nodeid, which must not import snowflake, and
// the servers: it imports both and nothing that serves.
package node
