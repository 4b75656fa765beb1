package segment_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/firn-id/firn/internal/idtest"
	"github.com/firn-id/firn/segment"
	"github.com/firn-id/firn/segment/segmenttest"
)

func newAllocator(t testing.TB, s segment.Store, cfg segment.Config) *segment.Allocator {
	t.Helper()
	a, err := segment.NewAllocator(s, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close(context.Background()) })
	return a
}

func storeWithTag(t testing.TB, tag string, step int64) *segmenttest.MemStore {
	t.Helper()
	s := segmenttest.NewMemStore()
	if err := s.CreateTag(context.Background(), tag, 1, step, ""); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestManyAllocators runs 8 allocators × 8 goroutines on one tag: every ID
// unique, each goroutine's IDs strictly increasing.
func TestManyAllocators(t *testing.T) {
	s := storeWithTag(t, "order", 50)
	rec := idtest.NewRecorder(t)
	var wg sync.WaitGroup
	for a := range 8 {
		alloc := newAllocator(t, s, segment.Config{MaxWait: 5 * time.Second})
		for g := range 8 {
			wg.Go(func() {
				ids := make([]int64, 0, 2000)
				for i := range 2000 {
					var id int64
					var err error
					if i%2 == 0 {
						id, err = alloc.Next(context.Background(), "order")
					} else {
						dst := make([]int64, 1)
						_, err = alloc.NextN(context.Background(), "order", dst)
						id = dst[0]
					}
					if err != nil {
						t.Errorf("allocator %d goroutine %d: %v", a, g, err)
						return
					}
					ids = append(ids, id)
				}
				rec.Add(fmt.Sprintf("allocator %d goroutine %d", a, g), ids...)
			})
		}
	}
	wg.Wait()
	if rec.Len() != 8*8*2000 {
		t.Fatalf("%d IDs, want %d", rec.Len(), 8*8*2000)
	}
}

// TestOutage: buffered IDs are served through an outage, then callers get
// ErrUnavailable, then service resumes by itself, with no ID repeated.
func TestOutage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := storeWithTag(t, "t", 100)
		a := newAllocator(t, s, segment.Config{MaxWait: 50 * time.Millisecond})
		rec := idtest.NewRecorder(t)
		ctx := context.Background()
		take := func() error {
			id, err := a.Next(ctx, "t")
			if err == nil {
				rec.Add("caller", id)
			}
			return err
		}
		for range 90 { // past the prefetch point: the next range is buffered
			if err := take(); err != nil {
				t.Fatal(err)
			}
		}
		synctest.Wait()
		s.Fail(errors.New("database down"))
		served := 0
		var err error
		for err == nil {
			if err = take(); err == nil {
				served++
			}
		}
		if served < 100 {
			t.Fatalf("served %d buffered IDs during the outage, want at least the prefetched range of 100", served)
		}
		if !errors.Is(err, segment.ErrUnavailable) || !strings.Contains(err.Error(), "database down") {
			t.Fatalf("after the buffers ran dry: %v, want ErrUnavailable naming the cause", err)
		}
		s.Fail(nil)
		for i := range 500 {
			if err := take(); err != nil {
				t.Fatalf("after the store returned, call %d: %v", i, err)
			}
		}
	})
}

func TestUnknownAndNewTags(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := storeWithTag(t, "t", 10)
		a := newAllocator(t, s, segment.Config{})
		ctx := context.Background()
		if _, err := a.Next(ctx, "later"); !errors.Is(err, segment.ErrUnknownTag) {
			t.Fatalf("unknown tag: %v, want ErrUnknownTag", err)
		}
		// A tag created in the store directly is served without a restart,
		// once the second in which it is remembered as missing has passed.
		if err := s.CreateTag(ctx, "later", 500, 10, ""); err != nil {
			t.Fatal(err)
		}
		if _, err := a.Next(ctx, "later"); !errors.Is(err, segment.ErrUnknownTag) {
			t.Fatalf("within a second of the miss: %v, want ErrUnknownTag from the cache", err)
		}
		time.Sleep(time.Second)
		if id, err := a.Next(ctx, "later"); err != nil || id != 500 {
			t.Fatalf("new tag: %d, %v; want 500", id, err)
		}
	})
}

func TestNextNSpansRanges(t *testing.T) {
	s := storeWithTag(t, "t", 10)
	a := newAllocator(t, s, segment.Config{})
	dst := make([]int64, 35)
	n, err := a.NextN(context.Background(), "t", dst)
	if err != nil || n != 35 {
		t.Fatalf("NextN = %d, %v", n, err)
	}
	for i, id := range dst {
		if id != int64(i+1) {
			t.Fatalf("dst[%d] = %d, want %d (one store: dense IDs)", i, id, i+1)
		}
	}
}

// TestAdaptiveStep: ranges used up faster than the period double the step
// up to MaxStep; ranges that last over twice the period halve it, never
// below the tag's step, which Stats reports as ConfiguredStep.
func TestAdaptiveStep(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := storeWithTag(t, "t", 100)
		a := newAllocator(t, s, segment.Config{Period: time.Minute, MaxStep: 1600})
		h, err := a.Tag(context.Background(), "t")
		if err != nil {
			t.Fatal(err)
		}
		dst := make([]int64, 100)
		for range 60 {
			if _, err := h.NextN(context.Background(), dst); err != nil {
				t.Fatal(err)
			}
			synctest.Wait()
		}
		if st := h.Stats(); st.Step != 1600 || st.ConfiguredStep != 100 {
			t.Fatalf("step %d, configured %d after fast use, want the max 1600 and the tag's 100", st.Step, st.ConfiguredStep)
		}
		for range 200 {
			time.Sleep(3 * time.Minute)
			if _, err := h.NextN(context.Background(), dst); err != nil {
				t.Fatal(err)
			}
			synctest.Wait()
		}
		if st := h.Stats(); st.Step != 100 {
			t.Fatalf("step %d after slow use, want the tag's 100", st.Step)
		}
	})
}

// TestMaxWait: once a tag has had a range, a caller whose buffers are
// empty on a slow store gets ErrUnavailable after MaxWait, not after the
// store's delay.
func TestMaxWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := storeWithTag(t, "t", 10)
		a := newAllocator(t, s, segment.Config{MaxWait: 30 * time.Millisecond})
		h, err := a.Tag(context.Background(), "t")
		if err != nil {
			t.Fatal(err)
		}
		dst := make([]int64, 10)
		if _, err := h.NextN(context.Background(), dst); err != nil { // the first range, and the prefetch of the next
			t.Fatal(err)
		}
		synctest.Wait()
		s.SetDelay(time.Second)
		if _, err := h.NextN(context.Background(), dst); err != nil { // the prefetched range
			t.Fatal(err)
		}
		start := time.Now()
		_, err = h.Next(context.Background())
		if !errors.Is(err, segment.ErrUnavailable) {
			t.Fatalf("Next on a slow store: %v, want ErrUnavailable", err)
		}
		if waited := time.Since(start); waited != 30*time.Millisecond {
			t.Fatalf("waited %s, want MaxWait 30ms", waited)
		}
	})
}

// TestFirstRequestWaitsForItsRange: a tag's first request waits for its
// first range up to FirstWait, as Leaf and Tinyid do, rather than giving
// up after MaxWait (with a 60 ms database the first requests were 503).
func TestFirstRequestWaitsForItsRange(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := storeWithTag(t, "t", 10)
		a := newAllocator(t, s, segment.Config{MaxWait: 30 * time.Millisecond})
		h, err := a.Tag(context.Background(), "t") // the tag is known; its first range is not
		if err != nil {
			t.Fatal(err)
		}
		s.SetDelay(time.Second)
		start := time.Now()
		id, err := h.Next(context.Background())
		if err != nil || id != 1 {
			t.Fatalf("first Next on a store of 1 s = %d, %v; want 1", id, err)
		}
		if waited := time.Since(start); waited != time.Second {
			t.Fatalf("waited %s, want the store's 1 s", waited)
		}
		b := newAllocator(t, s, segment.Config{})
		s.SetDelay(0)
		hb, err := b.Tag(context.Background(), "t")
		if err != nil {
			t.Fatal(err)
		}
		s.SetDelay(2 * time.Second) // past FirstWait, 1.5 s
		start = time.Now()
		if _, err := hb.Next(context.Background()); !errors.Is(err, segment.ErrUnavailable) {
			t.Fatalf("first Next on a store of 2 s = %v, want ErrUnavailable", err)
		}
		if waited := time.Since(start); waited != 1500*time.Millisecond {
			t.Fatalf("waited %s, want FirstWait 1.5s", waited)
		}
	})
}

// TestPrefetchOnceATenthIsServed: the next range is asked for once a
// tenth of the current one is served, Leaf's rule.
func TestPrefetchOnceATenthIsServed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := storeWithTag(t, "t", 100)
		a := newAllocator(t, s, segment.Config{})
		h, err := a.Tag(context.Background(), "t")
		if err != nil {
			t.Fatal(err)
		}
		for i := range 10 {
			if _, err := h.Next(context.Background()); err != nil {
				t.Fatal(err)
			}
			synctest.Wait()
			if st := h.Stats(); st.Fetches != 1 || st.Prefetched != 0 {
				t.Fatalf("after %d IDs of 100: %d fetches, %d prefetched; want the first range only", i+1, st.Fetches, st.Prefetched)
			}
		}
		if _, err := h.Next(context.Background()); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if st := h.Stats(); st.Fetches != 2 || st.Prefetched == 0 {
			t.Fatalf("after 11 IDs of 100: %d fetches, %d prefetched; want the next range fetched", st.Fetches, st.Prefetched)
		}
	})
}

// TestStorePausesNeverShow: 100,000 IDs/s on one tag from Leaf's sample
// step of 2,000, a 20 s warm-up, then the store pauses for 0.5 s to 3 s
// (below the 5 s budget): no call fails, at the default settings.
func TestStorePausesNeverShow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := storeWithTag(t, "t", 2000)
		s.SetDelay(5 * time.Millisecond)
		a := newAllocator(t, s, segment.Config{})
		h, err := a.Tag(context.Background(), "t")
		if err != nil {
			t.Fatal(err)
		}
		dst := make([]int64, 1000)
		draw := func(d time.Duration) {
			t.Helper()
			for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
				if n, err := h.NextN(context.Background(), dst); err != nil {
					t.Fatalf("at %s: %d IDs, then %v", time.Now().Format("15:04:05.000"), n, err)
				}
			}
		}
		draw(20 * time.Second) // 1,000 IDs every 10 ms
		for _, pause := range []time.Duration{500 * time.Millisecond, time.Second, 3 * time.Second} {
			s.SetDelay(pause)
			draw(2 * pause)
			s.SetDelay(5 * time.Millisecond)
			draw(10 * time.Second)
		}
	})
}

// TestCallersNeverWaitWhileBuffered: with a store that answers in 50 ms
// and callers drawing steadily, once warm no call waits on the store.
func TestCallersNeverWaitWhileBuffered(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := storeWithTag(t, "t", 1000)
		s.SetDelay(50 * time.Millisecond)
		a := newAllocator(t, s, segment.Config{MaxWait: time.Second})
		h, err := a.Tag(context.Background(), "t")
		if err != nil {
			t.Fatal(err)
		}
		waits := 0
		for ms := range 5000 { // 100 IDs per ms: 100,000 IDs/s for 5 s
			for range 100 {
				before := time.Now()
				if _, err := h.Next(context.Background()); err != nil {
					t.Fatal(err)
				}
				if time.Since(before) > 0 && ms >= 2000 {
					waits++
				}
			}
			time.Sleep(time.Millisecond)
		}
		if waits > 0 {
			t.Fatalf("%d calls waited on the store after a 2 s warm-up", waits)
		}
	})
}

func TestConfigRejected(t *testing.T) {
	for _, cfg := range []segment.Config{{Threshold: 1.5}, {MaxWait: -1}, {Period: -time.Second}, {MaxStep: -3}, {MaxStep: segment.StepLimit + 1}} {
		if _, err := segment.NewAllocator(segmenttest.NewMemStore(), cfg); err == nil {
			t.Errorf("config %+v accepted", cfg)
		}
	}
}

// TestFollowsStepChanges: a step changed in the store becomes the floor of
// the allocator's next fetches, without a restart.
func TestFollowsStepChanges(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := storeWithTag(t, "t", 10)
		// Each range lasts 90 s against a 60 s period: the step neither
		// doubles nor halves on its own.
		a := newAllocator(t, s, segment.Config{Period: time.Minute})
		h, err := a.Tag(context.Background(), "t")
		if err != nil {
			t.Fatal(err)
		}
		dst := make([]int64, 10)
		if _, err := h.NextN(context.Background(), dst); err != nil {
			t.Fatal(err)
		}
		if err := s.SetStep(context.Background(), "t", 500); err != nil {
			t.Fatal(err)
		}
		for range 5 {
			time.Sleep(90 * time.Second)
			if _, err := h.NextN(context.Background(), dst); err != nil {
				t.Fatal(err)
			}
			synctest.Wait()
		}
		if st := h.Stats(); st.Step != 500 {
			t.Fatalf("step %d after the store's step became 500", st.Step)
		}
	})
}

// TestExhaustedCounter: a counter near the largest int64 (or wrapped past
// it by a store) never yields a negative or wrapped ID: the IDs below the
// bound are served, then ErrExhausted, at once and never as ErrUnavailable.
func TestExhaustedCounter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const bound = segment.MaxEnd
		s := segmenttest.NewMemStore()
		ctx := context.Background()
		if err := s.CreateTag(ctx, "near", bound-4, 2, ""); err != nil {
			t.Fatal(err)
		}
		if err := s.CreateTag(ctx, "wraps", 1, 100, ""); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Advance(ctx, "wraps", math.MaxInt64-10); err != nil { // a row set by hand
			t.Fatal(err)
		}
		a, err := segment.NewAllocator(s, segment.Config{MaxWait: 100 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close(ctx)
		for want := int64(bound - 4); want < bound; want++ {
			id, err := a.Next(ctx, "near")
			if err != nil || id != want {
				t.Fatalf("Next: %d, %v; want %d", id, err, want)
			}
		}
		for _, tag := range []string{"near", "wraps"} {
			for range 2 { // the first call meets the failed fetch, the second its error
				begun := time.Now()
				id, err := a.Next(ctx, tag)
				if !errors.Is(err, segment.ErrExhausted) || errors.Is(err, segment.ErrUnavailable) {
					t.Fatalf("%s: Next = %d, %v; want ErrExhausted, not ErrUnavailable", tag, id, err)
				}
				if waited := time.Since(begun); waited >= 100*time.Millisecond { // bubble time: exact
					t.Fatalf("%s: Next waited %s, the whole MaxWait, on a store that answered", tag, waited)
				}
			}
		}
	})
}

// TestExhaustionIsAskedAgain: an exhausted answer is given at once, yet
// the store is asked again after the retry time, so a tag comes back
// when its counter is set back by hand, or when the other store of a set,
// down while one was exhausted, answers again.
func TestExhaustionIsAskedAgain(t *testing.T) {
	recovers := func(t *testing.T, a *segment.Allocator, want int64) {
		t.Helper()
		for range 100 {
			id, err := a.Next(context.Background(), "t")
			if err == nil {
				if id != want {
					t.Fatalf("recovered with %d, want %d", id, want)
				}
				return
			}
			if !errors.Is(err, segment.ErrExhausted) && !errors.Is(err, segment.ErrUnavailable) {
				t.Fatal(err)
			}
			time.Sleep(50 * time.Millisecond)
		}
		t.Fatal("still exhausted after 5 s of bubble time")
	}
	t.Run("set back by hand", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			s := segmenttest.NewMemStore()
			s.PutRow(segment.TagInfo{Tag: "t", Next: segment.MaxEnd - 5, Step: 10, Delta: 1})
			a := newAllocator(t, s, segment.Config{MaxWait: 50 * time.Millisecond})
			if _, err := a.Next(context.Background(), "t"); !errors.Is(err, segment.ErrExhausted) {
				t.Fatalf("Next = %v, want ErrExhausted", err)
			}
			s.PutRow(segment.TagInfo{Tag: "t", Next: 1000, Step: 10, Delta: 1})
			recovers(t, a, 1000)
		})
	})
	t.Run("one store of a set exhausted, the other down", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			ctx := context.Background()
			s0, s1 := segmenttest.NewMemStore(), segmenttest.NewMemStore()
			m, err := segment.NewMulti(s0, s1)
			if err != nil {
				t.Fatal(err)
			}
			if err := m.CreateTag(ctx, "t", 1, 10, ""); err != nil {
				t.Fatal(err)
			}
			info, _ := s0.Tag(ctx, "t")
			info.Next = segment.MaxEnd - 4 - (segment.MaxEnd-4)%2 + info.Remainder // store 0's class, near the end
			s0.PutRow(info)
			s1.Fail(errors.New("store 1 down"))
			a := newAllocator(t, m, segment.Config{MaxWait: 50 * time.Millisecond, FirstWait: 50 * time.Millisecond})
			if _, err := a.Next(ctx, "t"); !errors.Is(err, segment.ErrExhausted) {
				t.Fatalf("Next = %v, want ErrExhausted among the stores' errors", err)
			}
			s1.Fail(nil)
			recovers(t, a, 1) // store 1's class: 1, 3, 5…
		})
	})
}

// TestMaxIDBoundsEveryTag: a tag bounded at 2^53−1 issues every ID up to
// it, in order, whatever the step and whether drawn one by one or in
// batches, and then only ErrExhausted; an unbounded tag goes on past it.
func TestMaxIDBoundsEveryTag(t *testing.T) {
	for _, step := range []int64{1, 3, 7, 1000} {
		synctest.Test(t, func(t *testing.T) {
			const bound = segment.JavaScriptSafe
			s := segmenttest.NewMemStore()
			ctx := context.Background()
			for _, tag := range []string{"js", "js-batch", "free"} {
				if err := s.CreateTag(ctx, tag, bound-20, step, ""); err != nil {
					t.Fatal(err)
				}
			}
			a, err := segment.NewAllocator(s, segment.Config{MaxID: func(tag string) int64 {
				if strings.HasPrefix(tag, "js") {
					return bound
				}
				return 0
			}})
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close(ctx)
			for want := int64(bound - 20); want <= bound; want++ {
				if id, err := a.Next(ctx, "js"); err != nil || id != want {
					t.Fatalf("step %d: Next = %d, %v; want %d", step, id, err, want)
				}
			}
			if id, err := a.Next(ctx, "js"); !errors.Is(err, segment.ErrExhausted) {
				t.Fatalf("step %d: past the bound Next = %d, %v; want ErrExhausted", step, id, err)
			}
			var got []int64
			buf := make([]int64, 6)
			for {
				n, err := a.NextN(ctx, "js-batch", buf)
				got = append(got, buf[:n]...)
				if err != nil {
					if !errors.Is(err, segment.ErrExhausted) {
						t.Fatalf("step %d: NextN: %v", step, err)
					}
					break
				}
			}
			if len(got) != 21 || got[0] != bound-20 || got[20] != bound {
				t.Fatalf("step %d: batches gave %d IDs, %v…%v; want %d to %d", step, len(got), got[:1], got[len(got)-1:], bound-20, bound)
			}
			for i := range 30 {
				if id, err := a.Next(ctx, "free"); err != nil || id != bound-20+int64(i) {
					t.Fatalf("unbounded tag: Next = %d, %v", id, err)
				}
			}
		})
	}
}

// TestCloseWhileDrawing: Close with callers still drawing, their
// prefetches crossing it, never panics (a fetch added to the wait group
// while Close waited on it did) and leaves no fetch running.
func TestCloseWhileDrawing(t *testing.T) {
	for range 50 {
		s := segmenttest.NewMemStore()
		a, err := segment.NewAllocator(s, segment.Config{Threshold: 0.99, MaxStep: 2})
		if err != nil {
			t.Fatal(err)
		}
		var hs []*segment.Handle
		for i := range 8 {
			tag := fmt.Sprint("t", i)
			if err := s.CreateTag(context.Background(), tag, 1, 2, ""); err != nil {
				t.Fatal(err)
			}
			h, err := a.Tag(context.Background(), tag)
			if err != nil {
				t.Fatal(err)
			}
			hs = append(hs, h)
		}
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for g := range 3 {
			wg.Go(func() {
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					_, _ = hs[(i+g)%len(hs)].Next(context.Background())
				}
			})
		}
		time.Sleep(200 * time.Microsecond)
		if err := a.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		close(stop)
		wg.Wait()
		for i, h := range hs {
			if id, err := h.Next(context.Background()); !errors.Is(err, segment.ErrClosed) {
				t.Fatalf("Next after Close: %d, %v; want ErrClosed", id, err)
			}
			if n, err := h.NextN(context.Background(), make([]int64, 3)); n != 0 || !errors.Is(err, segment.ErrClosed) {
				t.Fatalf("NextN after Close: %d IDs, %v; want none and ErrClosed", n, err)
			}
			if id, err := a.Next(context.Background(), fmt.Sprint("t", i)); !errors.Is(err, segment.ErrClosed) {
				t.Fatalf("Allocator.Next after Close: %d, %v; want ErrClosed", id, err)
			}
		}
	}
}

// countingStore counts Reserve calls, failed ones too.
type countingStore struct {
	segment.Store
	calls atomic.Int64
}

func (c *countingStore) Reserve(ctx context.Context, tag string, step int64) (segment.Range, error) {
	c.calls.Add(1)
	return c.Store.Reserve(ctx, tag, step)
}

// TestFailingFirstFetchNoStorm: a tag never served whose fetches fail at
// once (the row deleted, the database refusing) is not a slow first range:
// callers wait MaxWait, not FirstWait, and share one retry rather than
// each starting a fetch (100 callers made 3,000 store calls in 1.5 s).
func TestFailingFirstFetchNoStorm(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ms := storeWithTag(t, "t", 100)
		s := &countingStore{Store: ms}
		a := newAllocator(t, s, segment.Config{})
		h, err := a.Tag(context.Background(), "t")
		if err != nil {
			t.Fatal(err)
		}
		ms.Fail(errors.New("connection refused"))
		start := time.Now()
		var wg sync.WaitGroup
		for range 100 {
			wg.Go(func() {
				if _, err := h.Next(context.Background()); !errors.Is(err, segment.ErrUnavailable) {
					t.Errorf("Next on a refusing store = %v, want ErrUnavailable", err)
				}
			})
		}
		wg.Wait()
		if waited := time.Since(start); waited > 200*time.Millisecond {
			t.Errorf("callers waited %s on a store that refused at once, want about MaxWait", waited)
		}
		if n := s.calls.Load(); n > 10 {
			t.Errorf("%d store calls from 100 callers in %s, want a shared retry", n, time.Since(start))
		}
	})
}

// TestTinyMaxWaitDoesNotSpin: MaxWait of 1 ns made the retry interval 0,
// a busy loop for the whole first wait (forever under synctest).
func TestTinyMaxWaitDoesNotSpin(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ms := storeWithTag(t, "t", 100)
		s := &countingStore{Store: ms}
		a := newAllocator(t, s, segment.Config{MaxWait: 1})
		h, err := a.Tag(context.Background(), "t")
		if err != nil {
			t.Fatal(err)
		}
		ms.Fail(errors.New("connection refused"))
		if _, err := h.Next(context.Background()); !errors.Is(err, segment.ErrUnavailable) {
			t.Fatalf("Next = %v, want ErrUnavailable", err)
		}
		if n := s.calls.Load(); n > 10 {
			t.Fatalf("%d store calls for one Next", n)
		}
	})
}
