package node_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/firn-id/firn/node"
	"github.com/firn-id/firn/nodeid"
	"github.com/firn-id/firn/nodeid/nodeidtest"
	"github.com/firn-id/firn/snowflake"
)

// onceConfig is firn next's shape: node 0 asked for by number, a 25 ms
// window.
func onceConfig(store nodeid.Store, l snowflake.Layout) (nodeid.Config, snowflake.Config) {
	cfg := config(store)
	zero := uint64(0)
	lc := cfg.Lease
	lc.Node = &zero
	lc.Layout = node.LayoutID(l)
	lc.NodeBits = l.NodeBits()
	lc.Window = 25 * time.Millisecond
	return lc, snowflake.Config{Layout: l}
}

// runOnce runs node.Once within d and reports whether f ran and what
// Once returned.
func runOnce(t *testing.T, d time.Duration, store nodeid.Store, lc nodeid.Config, gc snowflake.Config) (bool, time.Duration, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), d)
	defer cancel()
	ran := false
	start := time.Now()
	err := node.Once(ctx, store, lc, gc, func(g *snowflake.Generator, lease *nodeid.Lease) error {
		ran = true
		_, err := g.Next(ctx)
		return err
	})
	return ran, time.Since(start), err
}

// TestOnceStartsAheadWhenAsked: with StartAhead (firn next --start-ahead,
// after firn admin advance past a restored backup), a job on a node whose
// HWM is an hour ahead runs at once, at the HWM.
func TestOnceStartsAheadWhenAsked(t *testing.T) {
	store := nodeidtest.NewMemStore()
	lc, gc := onceConfig(store, layout)
	lc.StartAhead = true
	store.SetHWM(0, time.Now().Add(time.Hour).UnixMilli())
	ran, took, err := runOnce(t, 2*time.Second, store, lc, gc)
	if !ran || err != nil {
		t.Fatalf("StartAhead with the HWM 1h ahead: f ran=%v after %s, err=%v; want it to run at once at the HWM", ran, took.Round(time.Millisecond), err)
	}
}

// TestOnceStartsAtOnceWithinBound: a job on a node whose HWM is ahead of
// the clock by less than MaxBehind (a server restarted a moment ago
// leaves that) starts at the HWM at once, as docs/design.md says.
func TestOnceStartsAtOnceWithinBound(t *testing.T) {
	store := nodeidtest.NewMemStore()
	lc, gc := onceConfig(store, layout)
	store.SetHWM(0, time.Now().Add(8*time.Second).UnixMilli())
	ran, took, err := runOnce(t, 2*time.Second, store, lc, gc)
	if !ran || err != nil {
		t.Fatalf("HWM 8s ahead, within MaxBehind (10s): f ran=%v after %s, err=%v; want it to start at the HWM at once", ran, took.Round(time.Millisecond), err)
	}
}

// TestOnceRefusesANodeCenturiesAhead: a node whose HWM is 300 years ahead
// (a typo in firn admin advance, a clock once set to 2326) is refused at
// once with a *nodeid.BehindHWMError: how far behind the clock is must
// not wrap past 292 years of nanoseconds.
func TestOnceRefusesANodeCenturiesAhead(t *testing.T) {
	store := nodeidtest.NewMemStore()
	lc, gc := onceConfig(store, layout)
	store.SetHWM(0, time.Now().AddDate(300, 0, 0).UnixMilli())
	ran, took, err := runOnce(t, 2*time.Second, store, lc, gc)
	if ran {
		t.Fatalf("f ran on a node 300 years ahead")
	}
	if errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("HWM 300y ahead: Once slept until its deadline (%s) instead of refusing the node: %v", took.Round(time.Millisecond), err)
	}
	var be *nodeid.BehindHWMError
	if !errors.As(err, &be) {
		t.Fatalf("HWM 300y ahead: %v, want a *nodeid.BehindHWMError", err)
	}
}

// TestOnceWritesLittle: a one-shot job for one ID on a layout of 2 s
// ticks costs the store a handful of writes, not a renewal every few
// milliseconds while it waits for anything.
func TestOnceWritesLittle(t *testing.T) {
	const tick = 2 * time.Second
	l := tickLayout(tick)
	l.Epoch = time.Now().Add(-100 * time.Millisecond).Truncate(time.Millisecond)
	store := nodeidtest.NewMemStore()
	lc, gc := onceConfig(store, l)
	for i := range 2 {
		before := store.Writes()
		ran, took, err := runOnce(t, 10*time.Second, store, lc, gc)
		if !ran || err != nil {
			t.Fatalf("job %d: ran=%v err=%v", i, ran, err)
		}
		w := store.Writes() - before
		t.Logf("job %d took %s, %d store writes", i, took.Round(time.Millisecond), w)
		if w > 20 {
			t.Fatalf("job %d for one ID: %d store writes in %s", i, w, took.Round(time.Millisecond))
		}
	}
}

// TestHolderPassesOverANodeCenturiesAhead: with node 0's HWM 300 years
// ahead and nodes 1..3 free, a holder takes a free node rather than be
// refused node 0 by its generator (and again at every restart).
func TestHolderPassesOverANodeCenturiesAhead(t *testing.T) {
	store := nodeidtest.NewMemStore()
	store.SetHWM(0, time.Now().AddDate(300, 0, 0).UnixMilli())
	h := newHolder(t, config(store))
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
	defer cancel()
	_, lease, err := h.Acquire(ctx)
	if err != nil {
		t.Fatalf("nodes 1..3 free, node 0 300y ahead: Acquire: %v", err)
	}
	if lease.Node() == 0 {
		t.Fatal("took node 0")
	}
}
