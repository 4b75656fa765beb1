package snowflake_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/firn-id/firn/internal/idtest"
	"github.com/firn-id/firn/snowflake"
)

func preset(t testing.TB, name string) snowflake.Layout {
	t.Helper()
	l, ok := snowflake.Preset(name)
	if !ok {
		t.Fatalf("no preset %q", name)
	}
	return l
}

func TestNewRejects(t *testing.T) {
	game := snowflake.Layout{Name: "game", Epoch: time.UnixMilli(1e12), Tick: time.Second,
		TimeBits: 37, Node: []snowflake.Field{{Name: "server", Bits: 20}}, SequenceBits: 16}
	tests := []struct {
		name      string
		cfg       snowflake.Config
		wantIs    error
		wantAs    any
		wantInMsg string
	}{
		{name: "no reservation", cfg: snowflake.Config{}, wantIs: snowflake.ErrNoReservation},
		{name: "decode-only layout", cfg: snowflake.Config{Layout: preset(t, "discord"), Reservation: snowflake.Unreserved()},
			wantAs: new(*snowflake.LayoutError), wantInMsg: "64 bits"},
		{name: "73-bit layout", cfg: snowflake.Config{Layout: game, Reservation: snowflake.Unreserved()},
			wantAs: new(*snowflake.LayoutError), wantInMsg: "37 time + 20 node + 16 sequence = 73 bits"},
		{name: "node out of range", cfg: snowflake.Config{Layout: preset(t, "twitter"), Node: 1024, Reservation: snowflake.Unreserved()},
			wantAs: new(*snowflake.RangeError), wantInMsg: "node 1024 out of range 0..1023"},
		{name: "epoch in the future", cfg: snowflake.Config{Layout: snowflake.Layout{Epoch: time.Now().Add(time.Hour).Truncate(time.Millisecond),
			Tick: time.Millisecond, TimeBits: 41, SequenceBits: 12}, Reservation: snowflake.Unreserved()},
			wantAs: new(*snowflake.ClockBehindError)},
		{name: "jitter over half", cfg: snowflake.Config{SequenceJitter: 2049, Reservation: snowflake.Unreserved()}, wantInMsg: "over half"},
		{name: "max wait under a tick", cfg: snowflake.Config{Layout: preset(t, "baidu"), MaxWait: time.Millisecond, Reservation: snowflake.Unreserved()},
			wantInMsg: "shorter than one tick"},
		{name: "bad policy", cfg: snowflake.Config{Exhausted: 7, Reservation: snowflake.Unreserved()}, wantInMsg: "unknown policy"},
		{name: "catch-up rate", cfg: snowflake.Config{CatchUpRate: 2, Reservation: snowflake.Unreserved()}, wantInMsg: "catch-up rate"},
		{name: "shed rate", cfg: snowflake.Config{ShedRate: 0.6, Reservation: snowflake.Unreserved()}, wantInMsg: "shed rate"},
		{name: "negative shed rate", cfg: snowflake.Config{ShedRate: -0.1, Reservation: snowflake.Unreserved()}, wantInMsg: "shed rate"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, err := snowflake.New(tt.cfg)
			if err == nil {
				t.Fatalf("New = %v, nil; want an error", g)
			}
			if tt.wantIs != nil && !errors.Is(err, tt.wantIs) {
				t.Errorf("err = %v, want errors.Is %v", err, tt.wantIs)
			}
			if tt.wantAs != nil && !errors.As(err, tt.wantAs) {
				t.Errorf("err = %v (%T), want errors.As %T", err, err, tt.wantAs)
			}
			if tt.wantInMsg != "" && !contains(err.Error(), tt.wantInMsg) {
				t.Errorf("err = %q, want it to contain %q", err, tt.wantInMsg)
			}
		})
	}
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

func TestReservationBindsOnce(t *testing.T) {
	res := snowflake.Unreserved()
	if _, err := snowflake.New(snowflake.Config{Reservation: res}); err != nil {
		t.Fatal(err)
	}
	if _, err := snowflake.New(snowflake.Config{Reservation: res, Node: 1}); !errors.Is(err, snowflake.ErrAlreadyBound) {
		t.Fatalf("second generator on one reservation: %v, want ErrAlreadyBound", err)
	}
}

func TestDefaultIsFirnLayout(t *testing.T) {
	g, err := snowflake.New(snowflake.Config{Reservation: snowflake.Unreserved(), Node: 3})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := g.Layout().Fingerprint(), snowflake.DefaultLayout().Fingerprint(); got != want {
		t.Fatalf("zero Config layout fingerprint %s, want the firn preset's %s", got, want)
	}
}

// TestFreshTick checks that an ID's tick is the clock's: between the ticks
// of time.Now read just before and just after the call.
func TestFreshTick(t *testing.T) {
	for _, name := range []string{"twitter", "firn", "sonyflake-v2"} {
		t.Run(name, func(t *testing.T) {
			l := preset(t, name)
			g, err := snowflake.New(snowflake.Config{Layout: l, Reservation: snowflake.Unreserved()})
			if err != nil {
				t.Fatal(err)
			}
			tickOf := func(tm time.Time) uint64 { return uint64(tm.Sub(l.Epoch) / l.Tick) }
			for i := range 200 {
				before := time.Now()
				id, err := g.Next(context.Background())
				after := time.Now()
				if err != nil {
					t.Fatal(err)
				}
				p, err := l.Decompose(uint64(id))
				if err != nil {
					t.Fatal(err)
				}
				if p.Tick < tickOf(before) || p.Tick > tickOf(after) {
					t.Fatalf("call %d: tick %d outside [%d, %d]", i, p.Tick, tickOf(before), tickOf(after))
				}
				if i%50 == 0 {
					time.Sleep(3 * time.Millisecond)
				}
			}
		})
	}
}

// TestParallelUnique draws over two million IDs from parallel goroutines,
// half through Next and half through NextN.
func TestParallelUnique(t *testing.T) {
	const goroutines, perG = 16, 131072
	g, err := snowflake.New(snowflake.Config{Layout: preset(t, "twitter"), Node: 7, Reservation: snowflake.Unreserved()})
	if err != nil {
		t.Fatal(err)
	}
	rec := idtest.NewRecorder(t)
	errs := make(chan error, goroutines)
	var wg sync.WaitGroup
	for w := range goroutines {
		wg.Go(func() {
			ids := make([]int64, perG)
			if w%2 == 0 {
				for i := range ids {
					id, err := g.Next(context.Background())
					if err != nil {
						errs <- err
						return
					}
					ids[i] = id
				}
			} else {
				for i := 0; i < perG; i += 1000 {
					n, err := g.NextN(context.Background(), ids[i:min(i+1000, perG)])
					if err != nil {
						errs <- fmt.Errorf("NextN after %d: %w", n, err)
						return
					}
				}
			}
			rec.Add(fmt.Sprint("goroutine ", w), ids...)
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := rec.Len(); n != goroutines*perG {
		t.Fatalf("recorded %d IDs, want %d", n, goroutines*perG)
	}
}

func TestNextRespectsContextWhileWaiting(t *testing.T) {
	// One ID per second: the second call must wait almost a second.
	l := snowflake.Layout{Epoch: time.UnixMilli(1.7e12), Tick: time.Second, TimeBits: 40, SequenceBits: 0}
	g, err := snowflake.New(snowflake.Config{Layout: l, Reservation: snowflake.Unreserved()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.Next(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	// A call that lands on a new second issues at once; the next one
	// must wait, and so sees the context.
	for range 3 {
		_, err := g.Next(ctx)
		if errors.Is(err, context.Canceled) {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	t.Fatal("three calls in a row issued IDs of a 1-ID-per-second layout without waiting")
}

func TestPolicyParse(t *testing.T) {
	for _, p := range []snowflake.Policy{snowflake.Wait, snowflake.Borrow} {
		got, err := snowflake.ParsePolicy(p.String())
		if err != nil || got != p {
			t.Errorf("ParsePolicy(%q) = %v, %v", p, got, err)
		}
	}
	if _, err := snowflake.ParsePolicy("spin"); err == nil {
		t.Error("ParsePolicy(spin) succeeded")
	}
}

// A call waiting for the next tick returns when its context ends, not
// when the tick comes (a long tick could otherwise hold it that long).
func TestWaitEndsWithContext(t *testing.T) {
	// An hour's tick: the next tick is as good as never within the 20 ms
	// context (a one-second tick crossed into the next second when the
	// first call came late in its second).
	l := snowflake.Layout{Epoch: time.Unix(1_700_000_000, 0), Tick: time.Hour, TimeBits: 40, SequenceBits: 0}
	g, err := snowflake.New(snowflake.Config{Layout: l, Reservation: snowflake.Unreserved()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.Next(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	// The only sequence value of this tick is taken: the next call waits
	// for the next tick unless its context ends first.
	if id, err := g.Next(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Next = %d, %v; want context.DeadlineExceeded", id, err)
	}
}
