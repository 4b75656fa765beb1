package segment_test

import (
	"context"
	"errors"
	"testing"

	"github.com/firn-id/firn/segment"
	"github.com/firn-id/firn/segment/segmenttest"
)

// TestSiteMulti: one tag served by two sites, each from stores of its own
// in the classes segment.Residues gives its site value: the IDs are
// disjoint, and a tag created before sites (rows of another delta) is
// refused.
func TestSiteMulti(t *testing.T) {
	ctx := context.Background()
	seen := map[int64]int64{}
	for _, v := range []int64{1, 3} {
		stores := []segment.Store{segmenttest.NewMemStore(), segmenttest.NewMemStore()}
		m, err := segment.NewSiteMulti(segment.Residues{Values: 4, Stores: 2, Value: v}, stores...)
		if err != nil {
			t.Fatal(err)
		}
		if err := m.CreateTag(ctx, "order", 1, 100, ""); err != nil {
			t.Fatal(err)
		}
		for range 3 {
			r, err := m.Reserve(ctx, "order", 100)
			if err != nil {
				t.Fatal(err)
			}
			for id := r.Start; id < r.End; id += r.Delta {
				if id%8 != v*2 && id%8 != v*2+1 {
					t.Fatalf("site %d issued %d, outside its classes %d and %d mod 8", v, id, v*2, v*2+1)
				}
				if prev, dup := seen[id]; dup {
					t.Fatalf("ID %d issued by sites %d and %d", id, prev, v)
				}
				seen[id] = v
			}
		}
	}
	old := segmenttest.NewMemStore()
	if err := old.CreateTagResidue(ctx, "legacy", 1, 100, 1, 0, ""); err != nil {
		t.Fatal(err)
	}
	m, err := segment.NewSiteMulti(segment.Residues{Values: 4, Stores: 1, Value: 2}, old)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Reserve(ctx, "legacy", 100); !errors.Is(err, segment.ErrResidues) {
		t.Fatalf("a tag created before sites: %v; want refused (ErrResidues)", err)
	}
	if _, err := segment.NewSiteMulti(segment.Residues{Values: 4, Stores: 2, Value: 4}, old, old); err == nil {
		t.Fatal("a site value past the layout's values was accepted")
	}
}
