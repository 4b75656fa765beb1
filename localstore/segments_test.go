package localstore_test

import (
	"context"
	"testing"

	"github.com/firn-id/firn/segment"
	"github.com/firn-id/firn/segment/segmenttest"
)

func TestSegmentConformance(t *testing.T) {
	segmenttest.RunStoreTests(t, func(t *testing.T) segment.Store { return open(t, t.TempDir()).Segments() })
}

// TestSegmentsSurviveReopen: a range handed out before a crash is never
// handed out again.
func TestSegmentsSurviveReopen(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	s := open(t, dir)
	g := s.Segments()
	if err := g.CreateTag(ctx, "order", 1, 100, "orders"); err != nil {
		t.Fatal(err)
	}
	r, err := g.Reserve(ctx, "order", 100)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	r2, err := open(t, dir).Segments().Reserve(ctx, "order", 100)
	if err != nil || r2.Start != r.End {
		t.Fatalf("after reopen: %+v, %v; want a range from %d", r2, err, r.End)
	}
}
