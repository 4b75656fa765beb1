package nodeid_test

import (
	"context"
	"testing"
	"time"

	"github.com/firn-id/firn/nodeid"
	"github.com/firn-id/firn/nodeid/nodeidtest"
)

// TestAcquireEndedDuringAHungStore: an acquisition whose context ends
// (a Close) while its first extension waits on a store that took the
// claim and answers nothing more returns within the few seconds the
// release of that claim is given, not a third of a one-minute TTL; the
// claim expires by itself.
func TestAcquireEndedDuringAHungStore(t *testing.T) {
	store := nodeidtest.NewHungStore()
	cfg := config(bubbleLayout())
	cfg.TTL = time.Minute
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	start := time.Now()
	go func() {
		_, err := nodeid.Acquire(ctx, store, cfg)
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("Acquire succeeded with no extension confirmed")
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("Acquire still releasing after %s, its context ended at 300 ms (TTL 1 min)", time.Since(start).Round(time.Millisecond))
	}
}
