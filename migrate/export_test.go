package migrate

import "time"

// SetLeafWait shortens Apply's liveness watch for a test whose Leaf
// stand-ins heartbeat faster than Leaf; it returns what restores it.
func SetLeafWait(d time.Duration) (restore func()) {
	old := leafWait
	leafWait = d
	return func() { leafWait = old }
}
