package node_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/firn-id/firn/nodeid"
	"github.com/firn-id/firn/nodeid/nodeidtest"
)

// refusingStore answers claims as its MemStore does, but refuses every
// one while refuse is set, as a database at its connection limit does.
type refusingStore struct {
	*nodeidtest.MemStore
	refuse atomic.Bool
}

func (s *refusingStore) Claim(ctx context.Context, req nodeid.ClaimRequest) (nodeid.Claim, error) {
	if s.refuse.Load() {
		return nodeid.Claim{}, errors.New("connect: too many connections for role")
	}
	return s.MemStore.Claim(ctx, req)
}

// TestFullPoolReasonOutlivesARefusedTry: a waiter whose pool is full
// keeps saying so, for a lease TTL, when its next tries are refused (a database
// at its connection limit), naming that try too; the refusal alone,
// long after, is the reason by itself.
func TestFullPoolReasonOutlivesARefusedTry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := &refusingStore{MemStore: nodeidtest.NewMemStore()}
		cfg := config(store)
		for range 4 {
			l, err := nodeid.Acquire(t.Context(), store.MemStore, cfg.Lease)
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close(context.Background())
		}
		h := newHolder(t, cfg)
		go h.Acquire(t.Context())
		time.Sleep(time.Second)
		synctest.Wait()
		store.refuse.Store(true)
		time.Sleep(time.Second)
		synctest.Wait()
		err := h.NotReady()
		if err == nil || !strings.Contains(err.Error(), "4 of 4 held") || !strings.Contains(err.Error(), "too many connections") {
			t.Fatalf("NotReady a second after a refused try, the pool full before = %v; want both", err)
		}
		time.Sleep(30 * time.Second)
		synctest.Wait()
		if err := h.NotReady(); err == nil || strings.Contains(err.Error(), "4 of 4 held") {
			t.Fatalf("NotReady 30 s into refusals = %v; want the refusal alone", err)
		}
		h.Close(context.Background())
	})
}
