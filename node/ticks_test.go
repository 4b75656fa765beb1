package node_test

import (
	"context"
	"testing"
	"time"

	"github.com/firn-id/firn/node"
	"github.com/firn-id/firn/nodeid"
	"github.com/firn-id/firn/nodeid/nodeidtest"
	"github.com/firn-id/firn/snowflake"
)

// tickLayout is a layout of tick d with one node bit.
func tickLayout(d time.Duration) snowflake.Layout {
	return snowflake.Layout{Name: "long", Epoch: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), Tick: d,
		TimeBits: 40, Node: []snowflake.Field{{Name: "node", Bits: 1}}, SequenceBits: 8}
}

func tickConfig(store nodeid.Store, l snowflake.Layout) node.Config {
	cfg := config(store)
	cfg.Lease.NodeBits = 1
	cfg.Lease.Layout = node.LayoutID(l)
	cfg.Generator = snowflake.Config{Layout: l}
	return cfg
}

// TestLongTickRestarts: a node of a layout whose tick is longer than the
// default bound on starting ahead of the clock (10 s) is taken again at
// once after a release, twice in a row: each holder left the HWM a tick
// and its window ahead, and the next starts past it, issuing higher IDs.
func TestLongTickRestarts(t *testing.T) {
	store := nodeidtest.NewMemStore()
	cfg := tickConfig(store, tickLayout(time.Hour))
	var last int64
	for i := range 3 {
		h := newHolder(t, cfg)
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		g, lease, err := h.Acquire(ctx)
		if err != nil {
			cancel()
			t.Fatalf("holder %d of a 1 h tick layout: %v", i, err)
		}
		id, err := g.Next(ctx)
		cancel()
		if err != nil {
			t.Fatalf("holder %d on node %d: Next: %v", i, lease.Node(), err)
		}
		if id <= last {
			t.Fatalf("holder %d issued %d after %d", i, id, last)
		}
		last = id
		if err := h.Close(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
}

// TestLeaseReservesWholeTicks: every HWM a holder's lease confirms ends a
// tick of the generator's layout, and covers the tick the generator
// stands in.
func TestLeaseReservesWholeTicks(t *testing.T) {
	l := tickLayout(70 * time.Millisecond)
	store := nodeidtest.NewMemStore()
	h := newHolder(t, tickConfig(store, l))
	g, lease, err := h.Acquire(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for range 5 {
		lim := lease.Limit()
		if (lim-l.Epoch.UnixMilli())%70 != 0 {
			t.Fatalf("HWM %d is not the end of a 70 ms tick of epoch %d", lim, l.Epoch.UnixMilli())
		}
		if end := g.Now().Truncate(70 * time.Millisecond).Add(70 * time.Millisecond); time.UnixMilli(lim).Before(end) {
			t.Fatalf("HWM %s short of the end %s of the generator's tick", time.UnixMilli(lim), end)
		}
		if _, err := g.Next(t.Context()); err != nil {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestOnceTakesOneTickPerJob: one-shot jobs in a tight loop on a layout
// of long ticks each take one whole tick, not two: job i starts at most
// i ticks and a window ahead of the clock, and every ID is above the
// last job's.
func TestOnceTakesOneTickPerJob(t *testing.T) {
	const tick = 200 * time.Millisecond
	l := tickLayout(tick)
	store := nodeidtest.NewMemStore()
	cfg := tickConfig(store, l)
	lc := cfg.Lease
	lc.Window = 25 * time.Millisecond // firn next's, for one ID
	var last int64
	for i := range 8 {
		err := node.Once(t.Context(), store, lc, cfg.Generator, func(g *snowflake.Generator, lease *nodeid.Lease) error {
			if ahead := time.Until(time.UnixMilli(lease.Start())); ahead > time.Duration(i)*tick+lc.Window+50*time.Millisecond {
				t.Errorf("job %d starts %s ahead of the clock; want at most %d ticks and a window", i, ahead, i)
			}
			for {
				id, err := g.Next(t.Context())
				if node.Waiting(err, lease) {
					time.Sleep(5 * time.Millisecond)
					continue
				}
				if err == nil && id <= last {
					t.Errorf("job %d issued %d after %d", i, id, last)
				}
				last = id
				return err
			}
		})
		if err != nil {
			t.Fatalf("job %d: %v", i, err)
		}
	}
}
