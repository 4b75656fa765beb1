package client

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/firn-id/firn/internal/idtest"
)

// constant returns a delay function that always answers d.
func constant(d time.Duration) func() time.Duration { return func() time.Duration { return d } }

// steady takes n IDs a tick apart from c's snowflake buffer, or from tag
// when it is set, records them, and returns the longest time one call
// waited (in the bubble's time, which only the client's own waiting
// moves) and the first error.
func steady(c *Client, tag string, rec *idtest.Recorder, n int, tick time.Duration) (time.Duration, error) {
	ctx := context.Background()
	next := c.Next
	if tag != "" {
		next = c.Tag(tag).Next
	}
	var longest time.Duration
	for range n {
		start := time.Now()
		id, err := next(ctx)
		if err != nil {
			return longest, err
		}
		longest = max(longest, time.Since(start))
		rec.AddUnordered(id)
		time.Sleep(tick)
	}
	return longest, nil
}

// TestPausedServerIsHedged: a server that stops answering (its process
// paused) costs callers no error and at most a hedge budget of waiting:
// its refill goes to another server once the budget is past, and the
// paused server is skipped while its request is out.
func TestPausedServerIsHedged(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, fakes := fakeClient(t, 3, Config{Buffer: 100, MaxBuffer: 100, MaxBatch: 50, Parallel: 1})
		for _, f := range fakes {
			f.set(func(f *fakeServer) { f.delay = constant(time.Millisecond) })
		}
		rec := idtest.NewRecorder(t)
		if _, err := steady(c, "", rec, 1000, 100*time.Microsecond); err != nil {
			t.Fatal(err)
		}
		fakes[1].set(func(f *fakeServer) { f.gate = make(chan struct{}) })
		longest, err := steady(c, "", rec, 20_000, 100*time.Microsecond)
		if err != nil {
			t.Fatalf("with one of three servers paused, a caller saw %v", err)
		}
		s := c.Stats()
		if s.Hedges == 0 || s.Endpoints[1].Slow == 0 {
			t.Fatalf("stats %+v: want hedges, the paused server counted slow", s)
		}
		// The budget is 4× a 1 ms latency, at least 5 ms; a refill starts
		// with half the buffer left, 5 ms of IDs at this rate.
		if longest > 6*time.Millisecond {
			t.Fatalf("a caller waited %s with one server paused, want at most a hedge budget", longest)
		}
		t.Logf("paused: longest wait %s; stats %+v", longest, s)
	})
}

// TestTooOldAnswerCountsAgainstItsServer: a server whose snowflake answers
// arrive as old as MaxAge is marked down and counted, its IDs are never
// served, and the callers never see an error while the others answer.
func TestTooOldAnswerCountsAgainstItsServer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var issued sync.Map
		c, fakes := fakeClient(t, 3, Config{Buffer: 100, MaxBuffer: 100, MaxBatch: 50, MaxAge: time.Second, Timeout: 5 * time.Second})
		for i, f := range fakes {
			d := time.Millisecond
			if i == 1 {
				d = 1500 * time.Millisecond
			}
			f.set(func(f *fakeServer) { f.delay, f.issued = constant(d), &issued })
		}
		rec := idtest.NewRecorder(t)
		ctx := context.Background()
		for range 5000 {
			id, err := c.Next(ctx)
			if err != nil {
				t.Fatalf("with one server answering late: %v", err)
			}
			at, _ := issued.Load(id)
			if age := time.Since(at.(time.Time)); age >= time.Second {
				t.Fatalf("ID %d served %s after it was issued, past MaxAge", id, age)
			}
			rec.AddUnordered(id)
			time.Sleep(time.Millisecond)
		}
		if s := c.Stats().Endpoints[1]; s.Failures == 0 || s.Slow == 0 {
			t.Fatalf("the late server: %+v, want its too-old answers counted as failures", s)
		}
	})
}

// TestFirstFetchOfATagIsNotSlowness: a server's first answer for a tag
// may wait for its store's first range; it is not counted against it.
func TestFirstFetchOfATagIsNotSlowness(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, fakes := fakeClient(t, 2, Config{Buffer: 100, MaxBuffer: 100, MaxBatch: 100})
		for _, f := range fakes {
			first := true
			f.set(func(f *fakeServer) {
				f.delay = func() time.Duration {
					if first {
						first = false
						return 400 * time.Millisecond
					}
					return time.Millisecond
				}
			})
		}
		rec := idtest.NewRecorder(t)
		if _, err := steady(c, "order", rec, 500, time.Millisecond); err != nil {
			t.Fatal(err)
		}
		s := c.Stats()
		if s.Hedges == 0 {
			t.Fatalf("stats %+v: the first fetch, slower than the budget of an unmeasured server, was not hedged", s)
		}
		for _, e := range s.Endpoints {
			if e.Slow != 0 || e.Failures != 0 || !e.Healthy {
				t.Fatalf("stats %+v: a tag's first fetch counted against a server", s)
			}
		}
	})
}

// TestErrorNamesEveryServerTried: when no server answers, the error says
// which servers were tried and why each failed.
func TestErrorNamesEveryServerTried(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, fakes := fakeClient(t, 3, Config{MaxAge: time.Second, Timeout: 5 * time.Second})
		fakes[0].set(func(f *fakeServer) { f.down = true })
		fakes[1].set(func(f *fakeServer) { f.delay = constant(2 * time.Second) })
		fakes[2].set(func(f *fakeServer) { f.down = true })
		_, err := c.Next(context.Background())
		var e *Error
		if !errors.Is(err, ErrUnavailable) || !errors.As(err, &e) {
			t.Fatalf("Next: %v, want an *Error of ErrUnavailable", err)
		}
		named := map[string]string{}
		for _, tr := range e.Tried {
			named[tr.Endpoint] = tr.Code
		}
		if len(named) != 3 || named[fakes[1].name] != "too_slow" || named[fakes[0].name] != "transport" || e.Endpoint == "" {
			t.Fatalf("error %v: tried %v, want every server named with its failure", err, named)
		}
	})
}

// TestRejoinWithinOneHealthInterval: a server down for long is back in
// rotation within one health interval of answering again, even while
// another server's health check hangs.
func TestRejoinWithinOneHealthInterval(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, fakes := fakeClient(t, 3, Config{HealthInterval: 500 * time.Millisecond, Timeout: 2 * time.Second})
		fakes[1].set(func(f *fakeServer) { f.down = true })
		fakes[2].set(func(f *fakeServer) { f.gate = make(chan struct{}) })
		c.pool.markDown(c.pool.eps[2])
		c.pool.markDown(c.pool.eps[1])
		time.Sleep(30*time.Second + 123*time.Millisecond)
		fakes[1].set(func(f *fakeServer) { f.down = false })
		time.Sleep(500 * time.Millisecond)
		synctest.Wait()
		if s := c.Stats().Endpoints; !s[1].Healthy || s[2].Healthy {
			t.Fatalf("one interval after it answered again: %+v, want b healthy, c (paused) not", s)
		}
	})
}

// TestRefillsFollowLatency: the faster server gets most refills.
func TestRefillsFollowLatency(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, fakes := fakeClient(t, 2, Config{Buffer: 100, MaxBuffer: 100, MaxBatch: 20})
		fakes[0].set(func(f *fakeServer) { f.delay = constant(time.Millisecond) })
		fakes[1].set(func(f *fakeServer) { f.delay = constant(4 * time.Millisecond) })
		rec := idtest.NewRecorder(t)
		if _, err := steady(c, "order", rec, 10_000, 100*time.Microsecond); err != nil {
			t.Fatal(err)
		}
		var fast, slow int
		fakes[0].set(func(f *fakeServer) { fast = f.batches })
		fakes[1].set(func(f *fakeServer) { slow = f.batches })
		if fast < 2*slow {
			t.Fatalf("the 1 ms server got %d refills, the 4 ms one %d: want the faster one most", fast, slow)
		}
	})
}

// TestNoIDTwiceUnderFaults is a property test of the buffer as an
// ID-issuing path: with servers that answer at random speeds, fail,
// pause and come back, hedged requests and late answers, no ID is handed
// out twice, and no snowflake ID is handed out MaxAge or more after its
// server issued it.
func TestNoIDTwiceUnderFaults(t *testing.T) {
	for seed := range uint64(8) {
		t.Run("seed", func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { noIDTwice(t, seed) })
		})
	}
}

func noIDTwice(t *testing.T, seed uint64) {
	var issued sync.Map
	cfg := Config{Buffer: 50, MaxBuffer: 400, MaxBatch: 40, Parallel: 3, MaxAge: 500 * time.Millisecond,
		Timeout: time.Second, HealthInterval: 100 * time.Millisecond}
	c, fakes := fakeClient(t, 3, cfg)
	var rmu sync.Mutex
	r := rand.New(rand.NewPCG(seed, 18))
	random := func(n int) int {
		rmu.Lock()
		defer rmu.Unlock()
		return r.IntN(n)
	}
	for _, f := range fakes {
		f.set(func(f *fakeServer) {
			f.issued = &issued
			f.delay = func() time.Duration {
				switch p := random(100); {
				case p < 80:
					return time.Duration(1+random(5)) * time.Millisecond
				case p < 95:
					return time.Duration(random(300)) * time.Millisecond
				default:
					return time.Duration(400+random(800)) * time.Millisecond
				}
			}
		})
	}
	stop := make(chan struct{})
	var faults sync.WaitGroup
	faults.Go(func() { // a server goes down or pauses, then returns
		for {
			select {
			case <-stop:
				return
			case <-time.After(time.Duration(50+random(300)) * time.Millisecond):
			}
			f := fakes[random(len(fakes))]
			gate := make(chan struct{})
			pause := random(2) == 0
			f.set(func(f *fakeServer) {
				if pause {
					f.gate = gate
				} else {
					f.down = true
				}
			})
			time.Sleep(time.Duration(random(700)) * time.Millisecond)
			f.set(func(f *fakeServer) { f.down, f.gate = false, nil })
			close(gate)
		}
	})
	snow, seg := idtest.NewRecorder(t), idtest.NewRecorder(t)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			ctx := context.Background()
			dst := make([]int64, 1+g*7)
			for range 3000 {
				var n int
				var err error
				if g%2 == 0 {
					// An ID is taken fresh when it is taken before
					// MaxAge has passed since it was issued: a call
					// that waits for a refill returns the IDs it took
					// before the wait with the others, so the check is
					// against the start of the call.
					start := time.Now()
					if g == 0 {
						dst[0], err = c.Next(ctx)
						if n = 1; err != nil {
							n = 0
						}
						start = time.Now()
					} else {
						n, err = c.NextN(ctx, dst)
					}
					for _, id := range dst[:n] {
						at, _ := issued.Load(id)
						// The bubble's timers fire on their instant, so a
						// chunk goes stale exactly MaxAge after its request.
						if age := start.Sub(at.(time.Time)); age > cfg.MaxAge {
							t.Errorf("snowflake ID %d served %s after it was issued, past MaxAge", id, age)
						}
					}
					snow.AddUnordered(dst[:n]...)
				} else {
					n, err = c.Tag("order").NextN(ctx, dst)
					seg.AddUnordered(dst[:n]...)
				}
				if err != nil && !errors.Is(err, ErrUnavailable) {
					t.Errorf("NextN: %v", err)
					return
				}
				time.Sleep(time.Duration(random(3)) * time.Millisecond)
			}
		})
	}
	wg.Wait()
	close(stop)
	faults.Wait()
	if snow.Len() == 0 || seg.Len() == 0 {
		t.Fatalf("%d snowflake and %d segment IDs served: the faults stopped every caller", snow.Len(), seg.Len())
	}
}

// TestRecoveredServerGetsRefillsAgain: a server that was slow is not
// starved for good: its old latency fades, it is tried, measured anew,
// and takes its share again.
func TestRecoveredServerGetsRefillsAgain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, fakes := fakeClient(t, 2, Config{Buffer: 100, MaxBuffer: 100, MaxBatch: 20})
		fakes[0].set(func(f *fakeServer) { f.delay = constant(time.Millisecond) })
		fakes[1].set(func(f *fakeServer) { f.delay = constant(200 * time.Millisecond) })
		rec := idtest.NewRecorder(t)
		if _, err := steady(c, "order", rec, 20_000, 100*time.Microsecond); err != nil {
			t.Fatal(err)
		}
		var before int
		fakes[1].set(func(f *fakeServer) { f.delay, before = constant(time.Millisecond), f.batches })
		if _, err := steady(c, "order", rec, 100_000, 100*time.Microsecond); err != nil {
			t.Fatal(err)
		}
		var after, fast int
		fakes[1].set(func(f *fakeServer) { after = f.batches - before })
		fakes[0].set(func(f *fakeServer) { fast = f.batches })
		if after*10 < fast {
			t.Fatalf("after it recovered, the once-slow server got %d refills, the other %d in all", after, fast)
		}
		if l := c.Stats().Endpoints[1].Latency; l > 10*time.Millisecond {
			t.Fatalf("the recovered server's latency is still %s", l)
		}
	})
}
