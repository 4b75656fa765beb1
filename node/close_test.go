package node_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/firn-id/firn/node"
	"github.com/firn-id/firn/nodeid"
	"github.com/firn-id/firn/nodeid/nodeidtest"
)

// TestCloseDuringFirstAcquire: with every node held, Acquire waits; Close
// returns at once, having nothing to release, and ends the wait with
// ErrClosed. A wait left running would claim the first node to free
// after Close returned, and hold it until its own ctx ended.
func TestCloseDuringFirstAcquire(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := nodeidtest.NewMemStore()
		cfg := config(store)
		for range 4 {
			l, err := nodeid.Acquire(t.Context(), store, cfg.Lease)
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close(context.Background())
		}
		h := newHolder(t, cfg)
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		got := make(chan error, 1)
		go func() {
			_, _, err := h.Acquire(ctx)
			got <- err
		}()
		time.Sleep(time.Second)
		if err := h.Close(t.Context()); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Minute)
		select {
		case err := <-got:
			if !errors.Is(err, node.ErrClosed) {
				t.Errorf("Acquire after Close = %v, want ErrClosed", err)
			}
		default:
			t.Errorf("Acquire still waiting a minute after Close returned; NotReady = %v", h.NotReady())
			cancel()
			<-got
		}
	})
}

// TestWatchEndsDuringReacquisition: the watch's context ending while a
// lost lease is being replaced, the store failing every claim, ends the
// holder with the context's error, as Err promises, not the last
// attempt's.
func TestWatchEndsDuringReacquisition(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := nodeidtest.NewMemStore()
		h := newHolder(t, config(store))
		_, l, err := h.Acquire(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		_, replace := replacer()
		if err := h.Watch(ctx, replace); err != nil {
			t.Fatal(err)
		}
		store.Cut(l.Token(), errors.New("cut off"))
		<-l.Done()
		store.Fail(errors.New("store down"))
		time.Sleep(5 * time.Second) // past the retirement, into the claims
		cancel()
		<-h.Done()
		if !errors.Is(h.Err(), context.Canceled) {
			t.Errorf("Err after the watch's context ended = %v, want context.Canceled", h.Err())
		}
	})
}
