package nodeid_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/firn-id/firn/nodeid"
	"github.com/firn-id/firn/nodeid/nodeidtest"
)

// hungStore answers claims, then neither renewals nor releases while
// hung is set: each waits for its context (a row locked by a stuck
// transaction, an etcd cluster without a leader).
type hungStore struct {
	*nodeidtest.MemStore
	hung atomic.Bool
}

func (s *hungStore) Renew(ctx context.Context, c nodeid.Claim, hwm int64) (int64, error) {
	if s.hung.Load() {
		<-ctx.Done()
		return 0, ctx.Err()
	}
	return s.MemStore.Renew(ctx, c, hwm)
}

func (s *hungStore) Release(ctx context.Context, c nodeid.Claim) error {
	if s.hung.Load() {
		<-ctx.Done()
		return ctx.Err()
	}
	return s.MemStore.Release(ctx, c)
}

// TestAcquireEndedDuringAHungStore: an acquisition whose context ends
// (a Close) while its first extension waits on a store that took the
// claim and answers nothing more returns within the few seconds the
// release of that claim is given, not a third of a one-minute TTL; the
// claim expires by itself.
func TestAcquireEndedDuringAHungStore(t *testing.T) {
	store := &hungStore{MemStore: nodeidtest.NewMemStore()}
	store.hung.Store(true)
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
