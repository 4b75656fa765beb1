package segment

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

// counterStore is a store of one tag whose counter a test sets.
type counterStore struct {
	Store
	next int64
}

func (s *counterStore) Reserve(_ context.Context, _ string, step int64) (Range, error) {
	if err := CanReserve(s.next, step); err != nil {
		return Range{}, err
	}
	r := Range{Start: s.next, End: s.next + step, Delta: 1, Step: step}
	s.next += step
	return r, nil
}

func (s *counterStore) Tag(_ context.Context, tag string) (TagInfo, error) {
	return TagInfo{Tag: tag, Next: s.next, Step: 10, Delta: 1}, nil
}

// TestExhaustedTagAfterTheClockWentBack: the retry time after an
// exhausted answer is wall-clock time; with the clock set back an hour
// (here: the retry time moved an hour ahead), a counter set back by hand
// is still seen within the longest backoff, not an hour later.
func TestExhaustedTagAfterTheClockWentBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &counterStore{next: MaxEnd - 5}
		a, err := NewAllocator(s, Config{MaxWait: 50 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close(context.Background())
		h, err := a.Tag(context.Background(), "t")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := h.Next(context.Background()); !errors.Is(err, ErrExhausted) {
			t.Fatalf("Next = %v, want ErrExhausted", err)
		}
		h.retryAt.Store(h.retryAt.Load() + int64(time.Hour))
		s.next = 1000
		for waited := time.Duration(0); waited <= maxBackoff; waited += 100 * time.Millisecond {
			if id, err := h.Next(context.Background()); err == nil {
				if id != 1000 {
					t.Fatalf("recovered with %d, want 1000", id)
				}
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Fatalf("still exhausted %s after the counter was set back", maxBackoff)
	})
}
