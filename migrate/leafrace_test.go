package migrate_test

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/firn-id/firn/internal/legacytest"
	"github.com/firn-id/firn/internal/testseam"
	"github.com/firn-id/firn/migrate"
	"github.com/firn-id/firn/nodeid"
)

// raceTree runs before once, just ahead of the fence's first Multi: what
// a Leaf instance starting between --apply's read and its fence does.
type raceTree struct {
	migrate.LeafTree
	once   sync.Once
	before func()
}

func (r *raceTree) BumpChildren(ctx context.Context, parent string, parentData []byte, from int32, n int, marker string, data []byte) error {
	r.once.Do(r.before)
	return r.LeafTree.BumpChildren(ctx, parent, parentData, from, n, marker, data)
}

// TestLeafWorkerRegisteredBeforeTheFence: a Leaf instance registers
// after Apply read forever's children and before the fence pushes the
// child version, issues, and pauses (or crashes) through the watch.
// Its worker ID was given out before the fence, so it must end reserved
// or Apply must refuse; and a returning instance on that znode must fail
// its start check as every other fenced worker does. Before the fix
// Apply succeeded, left worker 3 out of the reservation and unfenced:
// firn took node 3 while the Leaf instance, back, started on worker 3.
func TestLeafWorkerRegisteredBeforeTheFence(t *testing.T) {
	defer testseam.SetLeafWatch(leafWatch)()
	f := newLeafFleet(t)
	for _, h := range f.hosts {
		f.run(h, 10).Stop()
	}
	late := f.host("10.0.0.4", t.TempDir())
	tree := &raceTree{LeafTree: f.tree, before: func() {
		s := f.run(late, 10)
		if s.WorkerID != 3 {
			t.Errorf("late Leaf has worker %d, want 3", s.WorkerID)
		}
		s.Stop()
	}}
	p, err := migrate.CheckLeaf(testCtx(t), migrate.LeafOptions{Tree: f.tree, Servers: "zk", Name: f.name})
	if err != nil {
		t.Fatal(err)
	}
	err = p.Apply(testCtx(t), migrate.LeafApplyOptions{Tree: tree, Registry: f.reg, Name: "the test registry", Space: leafSpace()})
	if err == nil {
		r, rerr := f.reg.Reservation(testCtx(t))
		if rerr != nil {
			t.Fatal(rerr)
		}
		if !slices.Contains(r.Nodes, 3) {
			t.Errorf("apply succeeded with reservation %v: Leaf's worker 3, given out before the fence, is not reserved", r.Nodes)
			if c, cerr := f.reg.Claim(testCtx(t), nodeid.ClaimRequest{AnyNode: true, Pool: 1024, Layout: leafSpace(), TTL: 2e9}); cerr == nil {
				t.Errorf("firn claims node %d", c.Node)
			}
		}
	} else {
		t.Logf("apply refused: %v", err)
	}
	// Whatever Apply said, the late instance must not start again on its
	// worker ID without its cache.
	if s, err := legacytest.StartSnowflake(f.host("10.0.0.4", t.TempDir())); err == nil {
		s.Stop()
		t.Errorf("the late Leaf instance returned on worker %d (from cache %t): its znode was never fenced", s.WorkerID, s.FromCache)
	}
	// A re-run reserves and fences it.
	if _, err := f.apply(); err != nil {
		t.Fatalf("re-run: %v", err)
	}
	if r, _ := f.reg.Reservation(testCtx(t)); !slices.Contains(r.Nodes, 3) {
		t.Fatalf("after a re-run, reservation %v lacks worker 3", r.Nodes)
	}
}
