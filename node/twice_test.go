package node_test

import (
	"errors"
	"testing"
	"testing/synctest"

	"github.com/firn-id/firn/node"
	"github.com/firn-id/firn/nodeid/nodeidtest"
)

// TestConcurrentAcquireTakesOneNode: two Acquires at once on one holder
// take one node between them; the other is refused with ErrAcquired,
// not handed a second generator the holder would never watch or release.
func TestConcurrentAcquireTakesOneNode(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHolder(t, config(nodeidtest.NewMemStore()))
		errs := make(chan error, 2)
		for range 2 {
			go func() {
				_, _, err := h.Acquire(t.Context())
				errs <- err
			}()
		}
		a, b := <-errs, <-errs
		if (a == nil) == (b == nil) || !errors.Is(errors.Join(a, b), node.ErrAcquired) {
			t.Fatalf("two Acquires at once: %v and %v; want one node and ErrAcquired", a, b)
		}
	})
}
