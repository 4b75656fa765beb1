package nodeidtest

import (
	"context"
	"sync/atomic"

	"github.com/firn-id/firn/nodeid"
)

// HungStore answers claims as its MemStore does; while Hung is set, every
// renewal and release waits for its context to end, as a store that took
// a claim and then stopped answering does (a row locked by a stuck
// transaction, an etcd cluster without a leader).
type HungStore struct {
	*MemStore
	Hung atomic.Bool
}

// NewHungStore returns a HungStore over a new MemStore, hung.
func NewHungStore() *HungStore {
	s := &HungStore{MemStore: NewMemStore()}
	s.Hung.Store(true)
	return s
}

// Renew implements nodeid.Store.
func (s *HungStore) Renew(ctx context.Context, c nodeid.Claim, hwm int64) (int64, error) {
	if s.Hung.Load() {
		<-ctx.Done()
		return 0, ctx.Err()
	}
	return s.MemStore.Renew(ctx, c, hwm)
}

// Release implements nodeid.Store.
func (s *HungStore) Release(ctx context.Context, c nodeid.Claim) error {
	if s.Hung.Load() {
		<-ctx.Done()
		return ctx.Err()
	}
	return s.MemStore.Release(ctx, c)
}
