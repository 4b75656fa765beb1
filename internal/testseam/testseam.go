// Package testseam holds the waits the module's own tests shorten. It is
// internal, so only this module's code can import it, and nothing in
// firn's packages or commands sets it: a production binary keeps every
// wait at its value. A test that shortens one does so for a stand-in that
// moves as much faster as the wait is shorter.
package testseam

import (
	"sync/atomic"
	"time"
)

var leafWatch atomic.Int64

// LeafWatch is the liveness watch of a Leaf takeover a test set, or 0:
// migrate then keeps its own, two of Leaf's heartbeats plus the margin.
func LeafWatch() time.Duration { return time.Duration(leafWatch.Load()) }

// SetLeafWatch shortens the liveness watch for a test whose Leaf
// stand-ins heartbeat faster than Leaf; it returns what restores it.
func SetLeafWatch(d time.Duration) (restore func()) {
	old := leafWatch.Swap(int64(d))
	return func() { leafWatch.Store(old) }
}
