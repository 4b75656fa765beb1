package client

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// splitServer is a fake server whose snowflake and segment routes fail
// or pause apart, as a real one whose generator is not ready while its
// store serves segments, or whose store is down while snowflake works.
type splitServer struct {
	*fakeServer
	snowErr  error         // snowflake batches fail with it, when set
	tagErr   error         // segment batches fail with it, when set
	snowGate chan struct{} // snowflake batches wait for it, when set
}

func (s *splitServer) batch(ctx context.Context, tag string, n int) ([]int64, bool, error) {
	if tag == "" {
		if s.snowGate != nil {
			select {
			case <-s.snowGate:
			case <-ctx.Done():
				return nil, false, &Error{Kind: ErrUnavailable, Endpoint: s.name, Code: "transport", Message: ctx.Err().Error()}
			}
		}
		if s.snowErr != nil {
			return nil, false, s.snowErr
		}
	} else if s.tagErr != nil {
		return nil, false, s.tagErr
	}
	return s.fakeServer.batch(ctx, tag, n)
}

// splitClient is fakeClient of one server, its transport a splitServer.
func splitClient(t *testing.T, s *splitServer, cfg Config) *Client {
	c, fakes := fakeClient(t, 1, cfg)
	s.fakeServer = fakes[0]
	c.pool.eps[0].t = s
	return c
}

var deadlineCfg = Config{Buffer: 10, MaxBuffer: 10, MaxBatch: 10, Attempts: 100, Backoff: time.Second, MaxBackoff: 4 * time.Second}

// TestDeadlineKeepsItsOwnFailure: every snowflake request fails
// (not_serving); a tag's refill on the same server succeeds while Next
// waits. Next's deadline still names not_serving: a failure is its
// buffer's, cleared only by that buffer's IDs.
func TestDeadlineKeepsItsOwnFailure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &splitServer{snowErr: &Error{Kind: ErrUnavailable, Endpoint: "fake-a:1", Code: "not_serving", Message: "the generator is not ready"}}
		c := splitClient(t, s, deadlineCfg)
		got := make(chan error, 1)
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			_, err := c.Next(ctx)
			got <- err
		}()
		time.Sleep(1200 * time.Millisecond) // snowflake failed at 0 s and 1 s, backs off to 3 s
		if _, err := c.Tag("orders").Next(context.Background()); err != nil {
			t.Fatalf("Tag.Next: %v", err)
		}
		err := <-got
		if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(errText(err), "not_serving") {
			t.Fatalf("Next past its deadline, every snowflake request failed not_serving: %q; want the deadline and not_serving", errText(err))
		}
	})
}

// TestDeadlineNeverBlamesAnotherBuffer: the tag's store is down
// (store_unavailable, retryable); snowflake is merely paused. Next's
// deadline is the deadline alone, not ErrUnavailable: no snowflake
// request failed.
func TestDeadlineNeverBlamesAnotherBuffer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		gate := make(chan struct{})
		s := &splitServer{tagErr: &Error{Kind: ErrUnavailable, Endpoint: "fake-a:1", Code: "store_unavailable", Message: "the store is down"},
			snowGate: gate}
		c := splitClient(t, s, deadlineCfg)
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		_, terr := c.Tag("orders").Next(ctx)
		cancel()
		ctx, cancel = context.WithTimeout(context.Background(), 100*time.Millisecond)
		_, err := c.Next(ctx)
		cancel()
		close(gate)
		t.Logf("Tag.Next: %v", terr)
		if err != context.DeadlineExceeded {
			t.Fatalf("snowflake Next past its deadline on a paused server, no snowflake request failed: %q (errors.Is ErrUnavailable: %v); want context.DeadlineExceeded alone",
				errText(err), errors.Is(err, ErrUnavailable))
		}
	})
}

func errText(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

// TestDeadlineNeverBlamesALateLoser: a refill's two requests (one a
// hedge) are paused; b answers and wins; a's request then fails (the
// server went down). The next refill goes to b alone, which pauses: a
// call cut off waiting on b gets the deadline alone, not a's failure,
// which belonged to a refill already over.
func TestDeadlineNeverBlamesALateLoser(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, fakes := fakeClient(t, 2, Config{Buffer: 10, MaxBuffer: 10, MaxBatch: 10, Attempts: 100})
		a, b := fakes[0], fakes[1]
		ga, gb := make(chan struct{}), make(chan struct{})
		a.set(func(f *fakeServer) { f.gate = ga })
		b.set(func(f *fakeServer) { f.gate = gb })
		got := make(chan error, 1)
		go func() { _, err := c.Next(context.Background()); got <- err }()
		time.Sleep(300 * time.Millisecond) // past the hedge budget: both requests out
		close(gb)                          // b wins
		if err := <-got; err != nil {
			t.Fatalf("Next: %v", err)
		}
		a.set(func(f *fakeServer) { f.down = true })
		close(ga) // a's late request fails
		synctest.Wait()
		if s := c.Stats(); s.Endpoints[0].Failures == 0 {
			t.Fatalf("stats %+v: want a's late request failed (setup)", s)
		}
		gb2 := make(chan struct{})
		b.set(func(f *fakeServer) { f.gate = gb2 })
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		var err error
		for {
			if _, err = c.Next(ctx); err != nil {
				break
			}
		}
		close(gb2)
		if err != context.DeadlineExceeded {
			t.Fatalf("Next cut off waiting on paused b, after b's success: %q; want context.DeadlineExceeded alone, not a's failure", errText(err))
		}
	})
}

// TestDeadlineNamesTheNewestFailure: a refill's request fails retryably
// (connection refused), its retry then fails for good (unauthorized: the
// refill's error, which callers get during the backoff). The next refill
// pauses. A call cut off waiting on it is told of the unauthorized answer,
// not of the older refusal.
func TestDeadlineNamesTheNewestFailure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, fakes := fakeClient(t, 1, Config{Buffer: 10, MaxBuffer: 10, MaxBatch: 10, Attempts: 3, Backoff: time.Second, MaxBackoff: time.Second})
		f := fakes[0]
		f.set(func(f *fakeServer) { f.down = true })
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		_, err := c.Next(ctx) // t=0: refused, the refill sleeps 1 s
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, ErrUnavailable) {
			t.Fatalf("setup: %v", err)
		}
		f.set(func(f *fakeServer) { f.down, f.kind = false, ErrUnauthorized })
		time.Sleep(time.Second) // t=1.5: the retry at 1 s was refused: unauthorized
		if _, err := c.Next(context.Background()); !errors.Is(err, ErrUnauthorized) {
			t.Fatalf("setup: Next during the backoff: %v; want ErrUnauthorized", err)
		}
		gate := make(chan struct{})
		f.set(func(f *fakeServer) { f.kind, f.gate = nil, gate })
		time.Sleep(time.Second) // t=2.5: the next refill (at 2 s) waits on the paused server
		ctx, cancel = context.WithTimeout(context.Background(), 500*time.Millisecond)
		_, err = c.Next(ctx)
		cancel()
		close(gate)
		if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, ErrUnavailable) && !errors.Is(err, ErrUnauthorized) {
			t.Fatalf("Next cut off after the last failure was unauthorized: %q; blames an older failure (ErrUnavailable %v, ErrUnauthorized %v)",
				errText(err), errors.Is(err, ErrUnavailable), errors.Is(err, ErrUnauthorized))
		}
	})
}

// TestRequestTimeoutIsNotTheCallersDeadline: a request that its own
// Config.Timeout ends is reported as no answer within that timeout,
// naming the server, not as "context deadline exceeded", which reads as
// the caller's deadline (the caller set none).
func TestRequestTimeoutIsNotTheCallersDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, fakes := fakeClient(t, 1, Config{Timeout: time.Second, Attempts: 1})
		gate := make(chan struct{})
		defer close(gate)
		fakes[0].set(func(f *fakeServer) { f.gate = gate })
		_, err := c.Next(context.Background())
		var e *Error
		if !errors.Is(err, ErrUnavailable) || !errors.As(err, &e) || e.Endpoint != fakes[0].name ||
			e.Message != "no answer within 1s (Config.Timeout)" || errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Next on a server that never answers: %q; want ErrUnavailable naming it and Config.Timeout", errText(err))
		}
	})
}

// lateRefusal answers every batch with the server's own refusal
// (not_serving, retryable), read as the request's Config.Timeout fires:
// the server answered, and the client has its answer in hand.
type lateRefusal struct {
	*fakeServer
	timeout time.Duration
}

func (l lateRefusal) batch(ctx context.Context, tag string, n int) ([]int64, bool, error) {
	time.Sleep(l.timeout) // the answer arrives at the deadline
	<-ctx.Done()          // and the deadline fires as it is read
	return nil, false, &Error{Kind: ErrUnavailable, Endpoint: l.name, Code: "not_serving", Message: "draining: not serving"}
}

// TestAnswerAtTheTimeoutIsKept: a server that answered (not_serving) at
// the instant its request's Config.Timeout fired is reported by its own
// code and message, not as no answer.
func TestAnswerAtTheTimeoutIsKept(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg, err := Config{Endpoints: []string{"fake-a:1"}, Timeout: time.Second, Attempts: 1}.withDefaults()
		if err != nil {
			t.Fatal(err)
		}
		c := newClient(cfg, newPool(cfg, []transport{lateRefusal{&fakeServer{name: "fake-a:1"}, time.Second}}))
		defer c.Close(context.Background())
		_, err = c.Next(context.Background())
		var e *Error
		if !errors.As(err, &e) || e.Code != "not_serving" {
			t.Fatalf("Next: %q; want the server's answer, not_serving", errText(err))
		}
	})
}
