package client

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/uuid"
	"github.com/oklog/ulid/v2"

	"github.com/firn-id/firn/idtext"
	"github.com/firn-id/firn/internal/idtest"
)

// fakeServer hands out IDs from one shared counter, so IDs of several
// fake servers never repeat, as real servers sharing a registry.
type fakeServer struct {
	counter *atomic.Int64
	name    string
	issued  *sync.Map // ID → time.Time it was issued, when set

	mu      sync.Mutex
	down    bool          // batch and check fail as a dead server
	gate    chan struct{} // when set, batch and check wait for it to close (a paused server)
	delay   func() time.Duration
	kind    error // when set, batch fails with this kind
	batches int
}

func (f *fakeServer) state() (bool, chan struct{}, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.down, f.gate, f.kind
}

func (f *fakeServer) set(fn func(f *fakeServer)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn(f)
}

// wait blocks while the server is paused (its gate is set and open).
func (f *fakeServer) wait(ctx context.Context) error {
	_, gate, _ := f.state()
	if gate == nil {
		return nil
	}
	select {
	case <-gate:
		return nil
	case <-ctx.Done():
		return &Error{Kind: ErrUnavailable, Endpoint: f.name, Code: "transport", Message: ctx.Err().Error()}
	}
}

// batch issues IDs at once, then takes delay (a slow link) to answer.
func (f *fakeServer) batch(ctx context.Context, tag string, n int) ([]int64, bool, error) {
	if err := f.wait(ctx); err != nil {
		return nil, false, err
	}
	down, _, kind := f.state()
	if down {
		return nil, false, &Error{Kind: ErrUnavailable, Endpoint: f.name, Code: "transport", Message: "connection refused"}
	}
	if kind != nil {
		return nil, false, &Error{Kind: kind, Endpoint: f.name, Code: "refused", Message: "refused"}
	}
	var delay time.Duration
	f.set(func(f *fakeServer) {
		f.batches++
		if f.delay != nil {
			delay = f.delay()
		}
	})
	end := f.counter.Add(int64(n))
	ids := make([]int64, n)
	now := time.Now()
	for i := range ids {
		ids[i] = end - int64(n) + int64(i) + 1
		if f.issued != nil {
			f.issued.Store(ids[i], now)
		}
	}
	if delay > 0 {
		t := time.NewTimer(delay)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return nil, false, &Error{Kind: ErrUnavailable, Endpoint: f.name, Code: "transport", Message: ctx.Err().Error()}
		}
	}
	return ids, false, nil
}

func (f *fakeServer) check(ctx context.Context) error {
	if err := f.wait(ctx); err != nil {
		return err
	}
	if down, _, _ := f.state(); down {
		return &Error{Kind: ErrUnavailable, Endpoint: f.name, Code: "transport", Message: "connection refused"}
	}
	return nil
}

func (f *fakeServer) close() error { return nil }

// wide makes no 128-bit IDs: the fake serves int64 batches only.
func (f *fakeServer) wide(context.Context, string, int) ([]string, error) {
	return nil, &Error{Kind: ErrInvalid, Code: "unsupported", Message: "the fake server makes no 128-bit IDs"}
}

// fakeClient returns a client of n fake servers.
func fakeClient(t testing.TB, n int, cfg Config) (*Client, []*fakeServer) {
	t.Helper()
	for i := range n {
		cfg.Endpoints = append(cfg.Endpoints, "fake-"+string(rune('a'+i))+":1")
	}
	cfg, err := cfg.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	var counter atomic.Int64
	var fakes []*fakeServer
	var ts []transport
	for _, e := range cfg.Endpoints {
		f := &fakeServer{counter: &counter, name: e}
		fakes = append(fakes, f)
		ts = append(ts, f)
	}
	c := newClient(cfg, newPool(cfg, ts))
	t.Cleanup(func() {
		if err := c.Close(context.Background()); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return c, fakes
}

// TestRefillNeverBlocksCallers: while every refill hangs, callers keep
// taking the buffered IDs without waiting (in a bubble, a caller that
// waited on the hung refill would deadlock the test); once the buffer is
// dry a caller waits, and the refill's end serves it.
func TestRefillNeverBlocksCallers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, fakes := fakeClient(t, 1, Config{Buffer: 100, MaxBuffer: 100, MaxBatch: 100, Parallel: 1, Timeout: time.Hour})
		ctx := context.Background()
		rec := idtest.NewRecorder(t)
		first, err := c.Tag("order").Next(ctx) // the first fill: the caller waits
		if err != nil {
			t.Fatal(err)
		}
		rec.AddUnordered(first)
		gate := make(chan struct{})
		fakes[0].set(func(f *fakeServer) { f.gate = gate })
		for range 99 {
			id, err := c.Tag("order").Next(ctx)
			if err != nil {
				t.Fatal(err)
			}
			rec.AddUnordered(id)
		}
		synctest.Wait()
		if s := c.Stats().Buffers[1]; s.Buffered != 0 || s.Refills != 1 {
			t.Fatalf("after the buffer: %+v, want it empty after one refill", s)
		}
		got := make(chan int64)
		go func() {
			id, err := c.Tag("order").Next(ctx)
			if err != nil {
				t.Error(err)
			}
			got <- id
		}()
		synctest.Wait() // the caller is now waiting on the hung refill
		select {
		case id := <-got:
			t.Fatalf("Next returned %d from an empty buffer while the refill hung", id)
		default:
		}
		close(gate)
		rec.AddUnordered(<-got)
		if rec.Len() != 101 {
			t.Fatalf("%d IDs recorded, want 101", rec.Len())
		}
	})
}

// TestRefillStartsBeforeTheBufferIsDry: a refill is under way once the
// level falls below Refill of the size, so a steady caller never waits.
func TestRefillStartsBeforeTheBufferIsDry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, fakes := fakeClient(t, 1, Config{Buffer: 1000, MaxBuffer: 1000, MaxBatch: 250, Refill: 0.5})
		ctx := context.Background()
		tag := c.Tag("order")
		if _, err := tag.Next(ctx); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		// The first ID may be taken before or after the fill completes.
		if s := tag.b.stats(); s.Buffered != 999 && s.Buffered != 1000 {
			t.Fatalf("after the first fill: %+v, want 999 or 1000 buffered", s)
		}
		before := tag.b.stats().Refills
		dst := make([]int64, 500)
		if _, err := tag.NextN(ctx, dst); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		// 500 or 499 left is at or below the mark of 500: topped up to
		// exactly 1,000, by batches of at most 250.
		s := tag.b.stats()
		if s.Buffered != 1000 || s.Refills < before+2 || s.Fetched != 1501 {
			t.Fatalf("after taking past the mark: %+v, want topped up to 1000 by 2 or 3 more refills", s)
		}
		fakes[0].set(func(f *fakeServer) {
			if uint64(f.batches) != s.Refills {
				t.Errorf("server saw %d batches, the client counted %d", f.batches, s.Refills)
			}
		})
	})
}

// TestFailover: a dead server's share goes to the others, with no error
// for the caller; the dead one is skipped until its health check passes.
func TestFailover(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, fakes := fakeClient(t, 3, Config{Buffer: 10, MaxBuffer: 10, MaxBatch: 10, HealthInterval: time.Second})
		ctx := context.Background()
		rec := idtest.NewRecorder(t)
		fakes[1].set(func(f *fakeServer) { f.down = true })
		dst := make([]int64, 10)
		for range 100 {
			n, err := c.NextN(ctx, dst)
			if err != nil {
				t.Fatalf("NextN with one of three servers down: %v", err)
			}
			rec.AddUnordered(dst[:n]...)
		}
		s := c.Stats()
		if s.Failovers == 0 || s.Endpoints[1].Healthy || s.Endpoints[1].Failures != 1 {
			t.Fatalf("stats %+v: want a failover, server b down after one failure (then skipped)", s)
		}
		fakes[1].set(func(f *fakeServer) { f.down = false })
		time.Sleep(time.Second + time.Millisecond)
		synctest.Wait()
		if !c.Stats().Endpoints[1].Healthy {
			t.Fatal("server b is still down after its health check passed")
		}
		for range 100 {
			n, err := c.NextN(ctx, dst)
			if err != nil {
				t.Fatal(err)
			}
			rec.AddUnordered(dst[:n]...)
		}
		fakes[1].set(func(f *fakeServer) {
			if f.batches == 0 {
				t.Error("server b got no request after it came back")
			}
		})
	})
}

// TestAllDown: the buffered IDs are served, then ErrUnavailable as an
// *Error; once a server answers again, calls succeed without a restart.
func TestAllDown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, fakes := fakeClient(t, 2, Config{Buffer: 100, MaxBuffer: 100, MaxBatch: 100, HealthInterval: 100 * time.Millisecond})
		ctx := context.Background()
		rec := idtest.NewRecorder(t)
		tag := c.Tag("order")
		id, err := tag.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		rec.AddUnordered(id)
		synctest.Wait()
		for _, f := range fakes {
			f.set(func(f *fakeServer) { f.down = true })
		}
		served := 1
		for {
			id, err := tag.Next(ctx)
			if err != nil {
				var e *Error
				if !errors.Is(err, ErrUnavailable) || !errors.As(err, &e) || e.Code != "transport" {
					t.Fatalf("Next with every server down: %v, want an *Error of ErrUnavailable", err)
				}
				break
			}
			rec.AddUnordered(id)
			served++
		}
		if served < 100 {
			t.Fatalf("%d IDs served before the error, want the 100 fetched", served)
		}
		if _, err := tag.Next(ctx); !errors.Is(err, ErrUnavailable) {
			t.Fatalf("Next again: %v, want ErrUnavailable at once", err)
		}
		fakes[0].set(func(f *fakeServer) { f.down = false })
		time.Sleep(2 * time.Second) // past the backoff and a health check
		for range 300 {
			id, err := tag.Next(ctx)
			if err != nil {
				t.Fatalf("Next after a server came back: %v", err)
			}
			rec.AddUnordered(id)
		}
	})
}

// TestErrorsThatNoOtherServerFixes are returned at once, without failover.
func TestErrorsThatNoOtherServerFixes(t *testing.T) {
	for _, kind := range []error{ErrUnknownTag, ErrUnauthorized, ErrInvalid} {
		t.Run(kind.Error(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c, fakes := fakeClient(t, 3, Config{})
				for _, f := range fakes {
					f.set(func(f *fakeServer) { f.kind = kind })
				}
				_, err := c.Tag("nope").Next(context.Background())
				if !errors.Is(err, kind) {
					t.Fatalf("Next: %v, want %v", err, kind)
				}
				if s := c.Stats(); s.Failovers != 0 || !s.Endpoints[0].Healthy {
					t.Fatalf("stats %+v: want no failover, every server healthy", s)
				}
			})
		})
	}
}

// TestMaxAge: snowflake IDs older than MaxAge are dropped, not served;
// segment IDs do not age.
func TestMaxAge(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, _ := fakeClient(t, 1, Config{Buffer: 100, MaxBuffer: 100, MaxBatch: 100, MaxAge: time.Second})
		ctx := context.Background()
		first, err := c.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		seg, err := c.Tag("order").Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(1500 * time.Millisecond)
		next, err := c.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if next <= first+99 {
			t.Fatalf("after 1.5 s Next returned %d, from the batch of %d fetched then", next, first)
		}
		if s := c.Stats().Buffers[0]; s.Dropped < 99 {
			t.Fatalf("snowflake buffer %+v: want the 99 stale IDs dropped", s)
		}
		seg2, err := c.Tag("order").Next(ctx)
		if err != nil || seg2 != seg+1 {
			t.Fatalf("segment after 1.5 s: %d, %v; want %d from the buffer", seg2, err, seg+1)
		}
	})
}

// TestClose: calls after Close return ErrClosed; an empty tag ErrInvalid,
// and it leaves no buffer in Stats.
func TestClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, _ := fakeClient(t, 1, Config{})
		ctx := context.Background()
		if _, err := c.Tag("").Next(ctx); !errors.Is(err, ErrInvalid) {
			t.Fatalf("empty tag: %v, want ErrInvalid", err)
		}
		if b := c.Stats().Buffers; len(b) != 1 {
			t.Fatalf("Stats after only a refused tag: %+v; want the snowflake buffer alone", b)
		}
		if _, err := c.Next(ctx); err != nil {
			t.Fatal(err)
		}
		if err := c.Close(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Next(ctx); !errors.Is(err, ErrClosed) {
			t.Fatalf("Next after Close: %v, want ErrClosed", err)
		}
		if _, err := c.Tag("late").NextN(ctx, make([]int64, 3)); !errors.Is(err, ErrClosed) {
			t.Fatalf("a tag after Close: %v, want ErrClosed", err)
		}
		if n, err := c.NextUUIDs(ctx, make([]uuid.UUID, 3)); n != 0 || !errors.Is(err, ErrClosed) {
			t.Fatalf("NextUUIDs after Close: %d, %v; want ErrClosed", n, err)
		}
		if n, err := c.NextULIDs(ctx, make([]ulid.ULID, 3)); n != 0 || !errors.Is(err, ErrClosed) {
			t.Fatalf("NextULIDs after Close: %d, %v; want ErrClosed", n, err)
		}
	})
}

// TestConcurrentCallers: many goroutines, one buffer, every ID once.
func TestConcurrentCallers(t *testing.T) {
	c, _ := fakeClient(t, 2, Config{Buffer: 64, MaxBuffer: 4096, MaxBatch: 100, Parallel: 3})
	rec := idtest.NewRecorder(t)
	var wg sync.WaitGroup
	var mu sync.Mutex
	for g := range 8 {
		wg.Go(func() {
			local := make([]int64, 0, 20_000)
			dst := make([]int64, 7)
			tag := c.Tag("order")
			for i := range 2_000 {
				var err error
				if g%2 == 0 {
					var id int64
					id, err = tag.Next(context.Background())
					local = append(local, id)
				} else {
					var n int
					n, err = tag.NextN(context.Background(), dst[:1+i%7])
					local = append(local, dst[:n]...)
				}
				if err != nil {
					t.Error(err)
					return
				}
			}
			mu.Lock()
			rec.AddUnordered(local...)
			mu.Unlock()
		})
	}
	wg.Wait()
}

// TestRefillAfterTheSizeShrank: a chunk installed while the rate was high
// has its mark where the old size put it; when the rate has dropped by
// then, the mark moves, and a refill still starts before the buffer is
// dry.
func TestRefillAfterTheSizeShrank(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, fakes := fakeClient(t, 1, Config{Buffer: 10, MaxBuffer: 100_000, MaxBatch: 100_000, Parallel: 1})
		ctx := context.Background()
		tag := c.Tag("order")
		dst := make([]int64, 4000)
		for range 20 { // 40,000 IDs/s for 2 s: a size of about 10,000
			if _, err := tag.NextN(ctx, dst); err != nil {
				t.Fatal(err)
			}
			time.Sleep(100 * time.Millisecond)
		}
		synctest.Wait()
		time.Sleep(5 * time.Second) // idle: the rate, then the size, falls
		gate := make(chan struct{})
		fakes[0].set(func(f *fakeServer) { f.gate = gate })
		one := make([]int64, 1)
		for {
			tag.b.mu.Lock()
			empty := tag.b.cur.Load().left() == 0 && tag.b.queued == 0
			inflight := tag.b.inflight
			tag.b.mu.Unlock()
			if empty {
				if inflight == 0 {
					t.Fatalf("the buffer ran dry with no refill under way: %+v", tag.b.stats())
				}
				break
			}
			if _, err := tag.NextN(ctx, one); err != nil {
				t.Fatal(err)
			}
		}
		close(gate)
	})
}

// TestAnswersSlowerThanMaxAge: a server whose snowflake answers take
// longer than MaxAge gives callers an error, not an endless wait for IDs
// that are dropped as too old on arrival.
func TestAnswersSlowerThanMaxAge(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, fakes := fakeClient(t, 1, Config{MaxAge: time.Second, Timeout: 5 * time.Second, Attempts: 1})
		gate := make(chan struct{})
		fakes[0].set(func(f *fakeServer) { f.gate = gate })
		go func() {
			time.Sleep(1500 * time.Millisecond)
			close(gate)
		}()
		_, err := c.Next(context.Background())
		var e *Error
		if !errors.Is(err, ErrUnavailable) || !errors.As(err, &e) || e.Code != "too_slow" {
			t.Fatalf("Next with answers 1.5 s late: %v, want ErrUnavailable too_slow", err)
		}
	})
}

// TestErrorClearedBySuccess: a refill that succeeds after one that failed
// leaves no stale error for the callers after it.
func TestErrorClearedBySuccess(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, fakes := fakeClient(t, 1, Config{Buffer: 10, MaxBuffer: 10, MaxBatch: 10, Attempts: 1})
		ctx := context.Background()
		tag := c.Tag("order")
		fakes[0].set(func(f *fakeServer) { f.down = true })
		if _, err := tag.Next(ctx); !errors.Is(err, ErrUnavailable) {
			t.Fatalf("server down: %v", err)
		}
		fakes[0].set(func(f *fakeServer) { f.down = false })
		time.Sleep(time.Second) // past the backoff
		for range 100 {
			if _, err := tag.Next(ctx); err != nil {
				t.Fatalf("after the server came back: %v", err)
			}
		}
	})
}

// TestDeadlineNamesTheLastFailure: a call whose context ends while it
// waits on refills that keep failing returns the context's error and the
// last failure, naming the server; once a server answered again, a call
// cut off while it waits on a slow server returns the context's error
// alone (no failure since to blame).
func TestDeadlineNamesTheLastFailure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, fakes := fakeClient(t, 2, Config{Buffer: 10, MaxBuffer: 10, MaxBatch: 10, Attempts: 100, Backoff: time.Second, MaxBackoff: time.Second})
		for _, f := range fakes {
			f.set(func(f *fakeServer) { f.down = true })
		}
		ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
		_, err := c.Next(ctx)
		cancel()
		var e *Error
		if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, ErrUnavailable) || !errors.As(err, &e) ||
			e.Code != "transport" || !strings.Contains(err.Error(), "fake-") || !strings.Contains(err.Error(), "connection refused") {
			t.Fatalf("Next past its deadline with every server down: %v; want the deadline and the last failure, naming its server", err)
		}
		for _, f := range fakes {
			f.set(func(f *fakeServer) { f.down = false })
		}
		time.Sleep(3 * time.Second) // past the backoff: the refill answers
		if _, err := c.Next(context.Background()); err != nil {
			t.Fatalf("Next once the servers are back: %v", err)
		}
		gate := make(chan struct{})
		for _, f := range fakes {
			f.set(func(f *fakeServer) { f.gate = gate })
		}
		ctx, cancel = context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		for {
			if _, err = c.Next(ctx); err != nil {
				break
			}
		}
		close(gate)
		if err != context.DeadlineExceeded {
			t.Fatalf("Next past its deadline on paused servers, no failure since the last answer: %v; want context.DeadlineExceeded alone", err)
		}
	})
}

// TestNextText: NextText writes the next ID in Config.Encoding, which
// reads back to an ID that follows the previous one.
func TestNextText(t *testing.T) {
	for _, enc := range []idtext.Encoding{idtext.Decimal, idtext.Base62, idtext.Base32} {
		c, _ := fakeClient(t, 1, Config{Encoding: enc})
		ctx := context.Background()
		prev, err := c.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, next := range []func(context.Context) (string, error){c.NextText, c.Tag("order").NextText} {
			s, err := next(ctx)
			if err != nil {
				t.Fatal(err)
			}
			id, err := enc.Parse(s)
			if err != nil || int64(id) <= 0 {
				t.Fatalf("%s: NextText = %q: %v", enc, s, err)
			}
			if enc != idtext.Decimal && len(s) < 11 {
				t.Fatalf("%s: %q is not fixed width", enc, s)
			}
		}
		if prev <= 0 {
			t.Fatalf("Next = %d", prev)
		}
	}
}
