package migrate_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/firn-id/firn/migrate"
	"github.com/firn-id/firn/nodeid"
	"github.com/firn-id/firn/nodeid/nodeidtest"
	"github.com/firn-id/firn/snowflake"
)

// twitterPlan is a Leaf plan with a floor of node 7, a minute ahead of
// the clock, and node 5 reserved.
func twitterPlan(t *testing.T) (*migrate.Plan, snowflake.Parts) {
	t.Helper()
	l, ok := snowflake.Preset("twitter")
	if !ok {
		t.Fatal("no twitter preset")
	}
	floor, err := l.Compose(uint64(time.Now().Add(time.Minute).Sub(l.Epoch)/l.Tick), 7, 42)
	if err != nil {
		t.Fatal(err)
	}
	parts, err := l.Decompose(floor)
	if err != nil {
		t.Fatal(err)
	}
	return &migrate.Plan{From: migrate.Leaf, Layout: l, Floor: floor, FloorFrom: []string{"--floor"},
		Samples: []migrate.Sample{{What: "--floor", ID: floor, Parts: parts}}, Reserved: []uint64{5}}, parts
}

func applyOptions(l snowflake.Layout, store nodeid.Store, opened *bool) migrate.ApplyOptions {
	return migrate.ApplyOptions{
		Open: func() (nodeid.Store, func() error, error) {
			*opened = true
			return store, func() error { return nil }, nil
		},
		Registry: "memory", Source: "old", Nodes: 2, Timeout: time.Second,
		Space: nodeid.LayoutID{Fingerprint: l.Fingerprint(), Description: l.String()},
	}
}

// TestApplyRefusesBeforeWriting: a plan that cannot prove firn's IDs pass
// the old system's is refused before the registry is opened.
func TestApplyRefusesBeforeWriting(t *testing.T) {
	layoutErr := errors.New("layout twitter is exhausted")
	for _, tc := range []struct {
		name   string
		edit   func(p *migrate.Plan)
		want   string
		isWant func(error) bool
	}{
		{"no floor", func(p *migrate.Plan) { p.Floor, p.Samples = 0, nil }, "--apply needs a floor", nil},
		{"an implausible floor", func(p *migrate.Plan) { p.Samples[0].Verdict = "decodes to worker 99, which WORKER_NODE never assigned" },
			"worker 99, which WORKER_NODE never assigned; nothing written", nil},
		{"a floor past the layout", func(p *migrate.Plan) { p.Floor, p.Samples = 1<<63, nil }, "does not fit layout twitter", nil},
		{"a layout firn cannot issue IDs in", func(p *migrate.Plan) { p.LayoutErr = layoutErr }, "",
			func(err error) bool { return errors.Is(err, layoutErr) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, _ := twitterPlan(t)
			tc.edit(p)
			opened := false
			err := p.Apply(context.Background(), nil, applyOptions(p.Layout, nodeidtest.NewMemStore(), &opened))
			var re *migrate.RefusedError
			switch {
			case tc.isWant != nil && !tc.isWant(err):
				t.Errorf("Apply: %v; want the plan's layout error", err)
			case tc.isWant == nil && (!errors.As(err, &re) || !strings.Contains(re.Reason, tc.want)):
				t.Errorf("Apply: %v; want a *RefusedError saying %q", err, tc.want)
			}
			if opened || len(p.Applied) > 0 {
				t.Errorf("a refused Apply opened the registry (%v) or wrote %v", opened, p.Applied)
			}
		})
	}
}

// TestApplyMovesTheNodesPastTheFloor: the reserved node and the lowest
// others start past the floor's tick in a registry that has never seen
// the namespace; nodes past them are left alone.
func TestApplyMovesTheNodesPastTheFloor(t *testing.T) {
	p, parts := twitterPlan(t)
	store := nodeidtest.NewMemStore()
	opened := false
	if err := p.Apply(context.Background(), nil, applyOptions(p.Layout, store, &opened)); err != nil {
		t.Fatal(err)
	}
	past := parts.Time.Add(p.Layout.Tick).UnixMilli()
	for _, n := range []uint64{5, 0, 1} {
		if got := store.HWM(n); got < past {
			t.Errorf("node %d: HWM %d, want at least %d, the end of the floor's tick", n, got, past)
		}
	}
	if got := store.HWM(2); got != 0 {
		t.Errorf("node 2, past --nodes: HWM %d, want untouched", got)
	}
	if len(p.Applied) != 1 || !strings.Contains(p.Applied[0], "the HWM of 3 nodes in memory") {
		t.Errorf("Applied = %q", p.Applied)
	}
}
