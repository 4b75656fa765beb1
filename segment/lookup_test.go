package segment_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/firn-id/firn/segment"
	"github.com/firn-id/firn/segment/segmenttest"
)

// gatedStore counts the store's answers about single tags, each held
// until gate is closed.
type gatedStore struct {
	*segmenttest.MemStore
	gate  chan struct{}
	calls atomic.Int64
}

func (s *gatedStore) Tag(ctx context.Context, tag string) (segment.TagInfo, error) {
	s.calls.Add(1)
	<-s.gate
	return s.MemStore.Tag(ctx, tag)
}

// TestLookupsOfOneTagShareOneQuestion: callers asking for one tag while
// the store answers share its answer; a tag found missing is not asked
// for again within UnknownFor, and the memory of missing tags stays
// within MaxUnknownTags however many distinct names are asked for.
func TestLookupsOfOneTagShareOneQuestion(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &gatedStore{MemStore: segmenttest.NewMemStore(), gate: make(chan struct{})}
		a, err := segment.NewAllocator(s, segment.Config{})
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close(context.Background())
		errs := make(chan error, 50)
		for range 50 {
			go func() { _, err := a.Tag(context.Background(), "missing"); errs <- err }()
		}
		synctest.Wait()
		close(s.gate)
		for range 50 {
			if err := <-errs; !errors.Is(err, segment.ErrUnknownTag) {
				t.Fatalf("Tag = %v; want ErrUnknownTag", err)
			}
		}
		if _, err := a.Tag(context.Background(), "missing"); !errors.Is(err, segment.ErrUnknownTag) || s.calls.Load() != 1 {
			t.Fatalf("51 lookups of one missing tag asked the store %d times (%v); want once", s.calls.Load(), err)
		}
		for i := range 3 * segment.MaxUnknownTags {
			_, _ = a.Tag(context.Background(), fmt.Sprintf("made-up-%d", i))
			if n := segment.UnknownTags(a); n > segment.MaxUnknownTags {
				t.Fatalf("after %d made-up names, %d remembered; want at most %d", i+1, n, segment.MaxUnknownTags)
			}
		}
	})
}
