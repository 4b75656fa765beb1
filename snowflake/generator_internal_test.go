package snowflake

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync/atomic"
	"testing"
	"time"

	"github.com/firn-id/firn/internal/idtest"
)

// fakeClock is a generator clock the test steps by hand. pause advances
// monotonic time by the requested amount, as sleeping would.
type fakeClock struct {
	monoNs atomic.Int64
	wallNs atomic.Int64
	pauses atomic.Int64
}

func newFakeClock(wall time.Time) *fakeClock {
	c := &fakeClock{}
	c.wallNs.Store(wall.UnixNano())
	return c
}

func (c *fakeClock) mono() int64 { return c.monoNs.Load() }
func (c *fakeClock) wall() int64 { return c.wallNs.Load() }
func (c *fakeClock) pause(d time.Duration) {
	c.pauses.Add(1)
	c.advance(d)
}

// advance moves both clocks forward, as time passing does.
func (c *fakeClock) advance(d time.Duration) {
	c.monoNs.Add(int64(d))
	c.wallNs.Add(int64(d))
}

// fakeReservation limits the generator to an HWM the test moves.
type fakeReservation struct {
	start int64
	limit atomic.Int64
	bound atomic.Bool
	now   func() int64
	err   error
}

func (r *fakeReservation) BindGenerator(now func() int64) error {
	if !r.bound.CompareAndSwap(false, true) {
		return ErrAlreadyBound
	}
	r.now = now
	return nil
}
func (r *fakeReservation) Start() int64 { return r.start }
func (r *fakeReservation) Limit() int64 { return r.limit.Load() }
func (r *fakeReservation) Err() error   { return r.err }

func unlimited() *fakeReservation {
	r := &fakeReservation{}
	r.limit.Store(math.MaxInt64)
	return r
}

// t0 is a whole-second instant well inside the twitter layout.
var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func twitter() Layout { l, _ := Preset("twitter"); return l }

func mustGen(t *testing.T, cfg Config, clk *fakeClock) *Generator {
	t.Helper()
	if cfg.Reservation == nil {
		cfg.Reservation = unlimited()
	}
	g, err := newGenerator(cfg, clk)
	if err != nil {
		t.Fatalf("newGenerator: %v", err)
	}
	return g
}

func decompose(t *testing.T, g *Generator, id int64) Parts {
	t.Helper()
	p, err := g.layout.Decompose(uint64(id))
	if err != nil {
		t.Fatalf("Decompose(%d): %v", id, err)
	}
	return p
}

func TestSequenceRollsOverThenWaits(t *testing.T) {
	clk := newFakeClock(t0)
	g := mustGen(t, Config{Layout: twitter(), Node: 5}, clk)
	ctx := context.Background()
	var first Parts
	for i := range 4096 {
		id, err := g.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		p := decompose(t, g, id)
		if i == 0 {
			first = p
		}
		if p.Tick != first.Tick || p.Sequence != uint64(i) || p.Node != 5 {
			t.Fatalf("ID %d: tick %d seq %d node %d, want tick %d seq %d node 5", i, p.Tick, p.Sequence, p.Node, first.Tick, i)
		}
	}
	if clk.pauses.Load() != 0 {
		t.Fatalf("waited %d times within one tick", clk.pauses.Load())
	}
	id, err := g.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if p := decompose(t, g, id); p.Tick != first.Tick+1 || p.Sequence != 0 {
		t.Fatalf("after exhaustion: tick %d seq %d, want tick %d seq 0", p.Tick, p.Sequence, first.Tick+1)
	}
	if clk.pauses.Load() == 0 {
		t.Fatal("wait policy issued the next tick without waiting for the clock")
	}
}

func TestBorrowTakesFutureTicksWithinBound(t *testing.T) {
	clk := newFakeClock(t0)
	g := mustGen(t, Config{Layout: twitter(), Exhausted: Borrow, MaxBorrow: 3 * time.Millisecond}, clk)
	dst := make([]int64, 4*4096)
	if n, err := g.NextN(context.Background(), dst); err != nil || n != len(dst) {
		t.Fatalf("NextN = %d, %v", n, err)
	}
	if clk.pauses.Load() != 0 {
		t.Fatal("borrow waited within its bound")
	}
	nowTick := decompose(t, g, dst[0]).Tick
	if last := decompose(t, g, dst[len(dst)-1]); last.Tick != nowTick+3 || last.Sequence != 4095 {
		t.Fatalf("last borrowed ID: tick %d seq %d, want tick %d seq 4095", last.Tick, last.Sequence, nowTick+3)
	}
	id, err := g.Next(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if clk.pauses.Load() == 0 {
		t.Fatal("borrowed past MaxBorrow without waiting")
	}
	if p := decompose(t, g, id); p.Tick != nowTick+4 {
		t.Fatalf("after the bound: tick %d, want %d", p.Tick, nowTick+4)
	}
}

func TestClockStepsBack(t *testing.T) {
	tests := []struct {
		name    string
		step    func(c *fakeClock)
		wantErr bool
	}{
		// The wall clock is read only to catch up, never to go back.
		{name: "wall back an hour", step: func(c *fakeClock) { c.wallNs.Add(-int64(time.Hour)) }},
		// Time itself going back (a broken seam) within MaxWait: the
		// generator keeps counting in its last tick, then waits.
		{name: "time back 200ms", step: func(c *fakeClock) { c.monoNs.Add(-int64(200 * time.Millisecond)) }},
		// Beyond MaxWait: an error at once, no sleep, no ID.
		{name: "time back 5s", step: func(c *fakeClock) { c.monoNs.Add(-int64(5 * time.Second)) }, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := newFakeClock(t0)
			clk.monoNs.Store(int64(10 * time.Second))
			g := mustGen(t, Config{Layout: twitter()}, clk)
			rec := idtest.NewRecorder(t)
			ctx := context.Background()
			dst := make([]int64, 6000)
			for range 3 {
				n, err := g.NextN(ctx, dst)
				if err != nil {
					t.Fatal(err)
				}
				rec.Add("g", dst[:n]...)
				clk.advance(time.Millisecond)
			}
			tt.step(clk)
			pausesBefore := clk.pauses.Load()
			for i := range 10000 {
				id, err := g.Next(ctx)
				var cb *ClockBehindError
				if tt.wantErr {
					if !errors.As(err, &cb) {
						t.Fatalf("Next after the step = %d, %v; want *ClockBehindError", id, err)
					}
					if clk.pauses.Load() != pausesBefore {
						t.Fatal("slept before reporting the clock behind")
					}
					return
				}
				if err != nil {
					t.Fatalf("Next %d after the step: %v", i, err)
				}
				rec.Add("g", id)
			}
		})
	}
}

func TestForwardStepCaughtUpGradually(t *testing.T) {
	clk := newFakeClock(t0)
	g := mustGen(t, Config{Layout: twitter()}, clk)
	ctx := context.Background()
	rec := idtest.NewRecorder(t)
	clk.wallNs.Add(int64(time.Hour))
	for range 1000 { // one second of monotonic time, 1 ms at a time
		clk.advance(time.Millisecond)
		id, err := g.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		rec.Add("g", id)
	}
	gained := offsetNow(g)
	if gained <= 0 || gained > int64(110*time.Millisecond) {
		t.Fatalf("after 1 s the clock gained %s, want (0, 110ms] at rate 0.1", time.Duration(gained))
	}
	// The lease extends the HWM from the generator's own time, so a jump
	// of the wall clock cannot push it far ahead.
	if ahead := g.unixMilli() - (t0.UnixMilli() + 1000); ahead > 110 {
		t.Fatalf("generator time ahead of monotonic time by %d ms", ahead)
	}
	// The wall clock steps back again: the gain drains at the same rate,
	// IDs keep increasing (the recorder checks).
	clk.wallNs.Add(-int64(time.Hour))
	for range 2000 {
		clk.advance(time.Millisecond)
		id, err := g.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		rec.Add("g", id)
	}
	if off := offsetNow(g); off != 0 {
		t.Fatalf("offset %s after the wall clock returned, want 0", time.Duration(off))
	}
}

func TestStartAtReservation(t *testing.T) {
	tests := []struct {
		name       string
		ahead      time.Duration
		startAhead bool
		wantErr    bool
	}{
		{name: "behind the clock", ahead: -time.Minute},
		{name: "5s ahead starts at once", ahead: 5 * time.Second},
		{name: "20s ahead refused", ahead: 20 * time.Second, wantErr: true},
		{name: "20s ahead allowed", ahead: 20 * time.Second, startAhead: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := newFakeClock(t0)
			res := unlimited()
			res.start = t0.Add(tt.ahead).UnixMilli() + 1 // not on a tick boundary of 10 ms
			l := twitter()
			l.Tick = 10 * time.Millisecond
			g, err := newGenerator(Config{Layout: l, Reservation: res, StartAhead: tt.startAhead}, clk)
			var cb *ClockBehindError
			if tt.wantErr {
				if !errors.As(err, &cb) {
					t.Fatalf("newGenerator err = %v, want *ClockBehindError", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			id, err := g.Next(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if clk.pauses.Load() != 0 {
				t.Fatal("waited for the clock to reach the reservation's start")
			}
			if got := decompose(t, g, id).Time.UnixMilli(); got < res.start {
				t.Fatalf("first tick starts %d, before the reservation's start %d", got, res.start)
			}
		})
	}
}

func TestReservationLimitsTicks(t *testing.T) {
	clk := newFakeClock(t0)
	res := &fakeReservation{err: errors.New("lease lost")}
	// HWM = the end of the current tick: this tick may be issued, the
	// next may not (exclusive bound, DESIGN.md §3).
	res.limit.Store(t0.UnixMilli() + 1)
	g := mustGen(t, Config{Layout: twitter(), Reservation: res}, clk)
	ctx := context.Background()
	dst := make([]int64, 4096)
	if n, err := g.NextN(ctx, dst); n != 4096 || err != nil {
		t.Fatalf("NextN within the HWM = %d, %v", n, err)
	}
	clk.advance(time.Millisecond)
	_, err := g.Next(ctx)
	if !errors.Is(err, ErrNotServing) {
		t.Fatalf("Next past the HWM: %v, want ErrNotServing", err)
	}
	if !errors.Is(err, res.err) {
		t.Fatalf("error %v does not carry the reservation's cause", err)
	}
	if n, err := g.NextN(ctx, dst); n != 0 || !errors.Is(err, ErrNotServing) {
		t.Fatalf("NextN past the HWM = %d, %v", n, err)
	}
	res.limit.Store(t0.UnixMilli() + 100)
	id, err := g.Next(ctx)
	if err != nil {
		t.Fatalf("Next after the HWM moved: %v", err)
	}
	if p := decompose(t, g, id); p.Time.UnixMilli()+1 > res.Limit() {
		t.Fatalf("tick ends %d, past HWM %d", p.Time.UnixMilli()+1, res.Limit())
	}
}

func TestBorrowStopsAtReservation(t *testing.T) {
	clk := newFakeClock(t0)
	res := &fakeReservation{}
	res.limit.Store(t0.UnixMilli() + 2) // two ticks
	g := mustGen(t, Config{Layout: twitter(), Reservation: res, Exhausted: Borrow}, clk)
	dst := make([]int64, 3*4096)
	n, err := g.NextN(context.Background(), dst)
	if n != 2*4096 || !errors.Is(err, ErrNotServing) {
		t.Fatalf("NextN = %d, %v; want %d IDs then ErrNotServing", n, err, 2*4096)
	}
}

func TestLayoutExhausted(t *testing.T) {
	clk := newFakeClock(t0)
	// 4 time bits of 1 s: ticks 0..15, so the layout ends 16 s after the
	// epoch; start 15 s in.
	l := Layout{Epoch: t0.Add(-15 * time.Second), Tick: time.Second, TimeBits: 4, SequenceBits: 2}
	for _, p := range []Policy{Wait, Borrow} {
		t.Run(p.String(), func(t *testing.T) {
			g := mustGen(t, Config{Layout: l, Exhausted: p}, newFakeClock(t0))
			dst := make([]int64, 10)
			n, err := g.NextN(context.Background(), dst)
			if n != 4 || !errors.Is(err, ErrLayoutExhausted) {
				t.Fatalf("NextN = %d, %v; want 4 IDs then ErrLayoutExhausted", n, err)
			}
			for _, id := range dst[:n] {
				if id < 0 {
					t.Fatalf("negative ID %d", id)
				}
			}
			if _, err := g.Next(context.Background()); !errors.Is(err, ErrLayoutExhausted) {
				t.Fatalf("Next = %v, want ErrLayoutExhausted", err)
			}
		})
	}
	_ = clk
}

func TestSequenceJitter(t *testing.T) {
	clk := newFakeClock(t0)
	g := mustGen(t, Config{Layout: twitter(), SequenceJitter: 100}, clk)
	rec := idtest.NewRecorder(t)
	nonzero := 0
	for range 200 {
		clk.advance(time.Millisecond)
		id, err := g.Next(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		rec.Add("g", id)
		seq := decompose(t, g, id).Sequence
		if seq >= 100 {
			t.Fatalf("first sequence of a tick %d, want < 100", seq)
		}
		if seq != 0 {
			nonzero++
		}
	}
	if nonzero < 150 {
		t.Fatalf("only %d of 200 ticks started past 0", nonzero)
	}
}

func TestNextNReadsClockOncePerTick(t *testing.T) {
	clk := newFakeClock(t0)
	g := mustGen(t, Config{Layout: twitter()}, clk)
	dst := make([]int64, 3*4096)
	if n, err := g.NextN(context.Background(), dst); n != len(dst) || err != nil {
		t.Fatalf("NextN = %d, %v", n, err)
	}
	for i := 1; i < len(dst); i++ {
		if dst[i] <= dst[i-1] {
			t.Fatalf("dst[%d] = %d not above %d", i, dst[i], dst[i-1])
		}
	}
	if got := clk.pauses.Load(); got != 2 {
		t.Fatalf("paused %d times for 3 ticks, want 2", got)
	}
}

// A node started ahead of its clock (a quick hand-over) sheds the lead
// gradually: the first sync must not count the lead as elapsed time and
// set the clock back by a tenth of it.
func TestStartAheadShedsGradually(t *testing.T) {
	for _, ahead := range []time.Duration{3 * time.Second, 20 * time.Second} {
		t.Run(ahead.String(), func(t *testing.T) {
			clk := newFakeClock(t0)
			res := unlimited()
			res.start = t0.Add(ahead).UnixMilli()
			g := mustGen(t, Config{Layout: twitter(), Reservation: res, StartAhead: true}, clk)
			ctx := context.Background()
			prev, mono0 := g.Now(), clk.mono()
			for range 2000 { // two seconds, 1 ms at a time
				clk.advance(time.Millisecond)
				m := clk.mono()
				if _, err := g.Next(ctx); err != nil {
					t.Fatal(err)
				}
				// The clock slows down, never goes back: no call waits
				// for it to reach a tick issued before.
				if waited := clk.mono() - m; waited > 0 {
					t.Fatalf("a call waited %s for the clock", time.Duration(waited))
				}
				now := g.Now()
				if now.Before(prev) {
					t.Fatalf("clock went back %s", prev.Sub(now))
				}
				prev = now
			}
			// Over the monotonic time that passed, the lead shrank by a
			// quarter of it: not more (gradual), and not much less (the
			// lead goes).
			elapsed := time.Duration(clk.mono() - mono0)
			if shed := ahead - time.Duration(offsetNow(g)); shed > elapsed/4 || shed < elapsed/4-time.Millisecond {
				t.Fatalf("shed %s of the lead in %s, want a quarter of it (rate 0.25)", shed, elapsed)
			}
		})
	}
}

// A lead met while the generator is idle costs its callers no wait when
// traffic returns, and with MaxWait of one tick, on any tick length and
// any valid shed rate, no call fails: shedding slows the clock down, it
// never sets it back below a tick already issued.
func TestSheddingNeverStallsCallers(t *testing.T) {
	for _, tick := range []time.Duration{time.Millisecond, 10 * time.Millisecond, time.Second} {
		for _, rate := range []float64{0.01, 0.25, 0.5} {
			t.Run(fmt.Sprintf("%s/%g", tick, rate), func(t *testing.T) {
				l := twitter()
				l.Tick = tick
				clk := newFakeClock(t0)
				res := unlimited()
				res.start = t0.Add(5 * time.Second).UnixMilli()
				g := mustGen(t, Config{Layout: l, Reservation: res, ShedRate: rate, MaxWait: tick}, clk)
				ctx := context.Background()
				rec := idtest.NewRecorder(t)
				call := func(i int) {
					t.Helper()
					m := clk.mono()
					id, err := g.Next(ctx)
					if err != nil {
						t.Fatalf("call %d: %v", i, err)
					}
					rec.Add("g", id)
					// A call waits only for the next tick once the
					// current one's sequence is spent, never longer.
					if waited := clk.mono() - m; waited > int64(tick) {
						t.Fatalf("call %d waited %s", i, time.Duration(waited))
					}
				}
				call(0)
				clk.advance(2 * time.Second) // idle
				for i := 1; i < 3000; i++ {
					call(i)
					clk.advance(time.Millisecond)
				}
			})
		}
	}
}

// An idle generator does not apply a share of the whole idle time at its
// next call: a day idle and a wall clock a year ahead move the clock by at
// most CatchUpRate of one second.
func TestIdleCatchUpIsBounded(t *testing.T) {
	clk := newFakeClock(t0)
	g := mustGen(t, Config{Layout: twitter()}, clk)
	ctx := context.Background()
	if _, err := g.Next(ctx); err != nil {
		t.Fatal(err)
	}
	clk.advance(24 * time.Hour)
	clk.wallNs.Add(int64(365 * 24 * time.Hour))
	if _, err := g.Next(ctx); err != nil {
		t.Fatal(err)
	}
	if gained := time.Duration(offsetNow(g)); gained <= 0 || gained > 100*time.Millisecond {
		t.Fatalf("first call after a day idle gained %s, want (0, 100ms]", gained)
	}
}

// callReturns fails the test if f does not return: a generator call must
// never spin.
func callReturns(t *testing.T, f func() (int64, error)) (int64, error) {
	t.Helper()
	type result struct {
		id  int64
		err error
	}
	ch := make(chan result, 1)
	go func() { id, err := f(); ch <- result{id, err} }()
	select {
	case r := <-ch:
		return r.id, r.err
	case <-time.After(10 * time.Second):
		t.Fatal("the call did not return: it spins")
		return 0, nil
	}
}

// MaxBorrow without a bound (math.MaxInt64) overflowed the comparison of
// a tick with the clock: every call spun or failed.
func TestBorrowWithoutBound(t *testing.T) {
	g := mustGen(t, Config{Layout: twitter(), Exhausted: Borrow, MaxBorrow: math.MaxInt64}, newFakeClock(t0))
	for range 3 {
		if _, err := callReturns(t, func() (int64, error) { return g.Next(context.Background()) }); err != nil {
			t.Fatal(err)
		}
	}
}

// A reservation starting at the last tick the nanosecond arithmetic
// holds: the clock saturates instead of wrapping negative, and calls end
// with ErrLayoutExhausted instead of spinning.
func TestStartAtTheEndOfNanoseconds(t *testing.T) {
	l := Layout{Epoch: time.UnixMilli(0), Tick: time.Millisecond, TimeBits: 44, SequenceBits: 19}
	for _, p := range []Policy{Wait, Borrow} {
		t.Run(p.String(), func(t *testing.T) {
			res := unlimited()
			res.start = math.MaxInt64/int64(time.Millisecond) - 2
			clk := newFakeClock(t0)
			g := mustGen(t, Config{Layout: l, Reservation: res, StartAhead: true, Exhausted: p}, clk)
			if _, err := callReturns(t, func() (int64, error) { return g.Next(context.Background()) }); err != nil {
				t.Fatal(err)
			}
			clk.advance(3 * time.Millisecond)
			if g.nowNs() < 0 {
				t.Fatalf("clock wrapped to %d", g.nowNs())
			}
			if _, err := callReturns(t, func() (int64, error) { return g.Next(context.Background()) }); !errors.Is(err, ErrLayoutExhausted) {
				t.Fatalf("Next = %v, want ErrLayoutExhausted", err)
			}
		})
	}
}

// A tick so long that two of them overflow nanoseconds made maxTick wrap
// to 2^64-1 and the counter go back to tick 0: the 17th ID repeated the
// first. Such a layout is refused.
func TestTickTooLongToGenerate(t *testing.T) {
	l := Layout{Epoch: time.UnixMilli(0), Tick: 200 * 365 * 24 * time.Hour, TimeBits: 1, SequenceBits: 4}
	if err := l.Validate(); err != nil {
		t.Fatal(err) // valid for decoding
	}
	var le *LayoutError
	if _, err := newGenerator(Config{Layout: l, Reservation: unlimited()}, newFakeClock(t0)); !errors.As(err, &le) {
		t.Fatalf("newGenerator = %v, want *LayoutError", err)
	}
}

// A reservation reporting a limit near MinInt64 wrapped when the epoch
// was subtracted and allowed every tick.
func TestLimitNearMinInt64AllowsNothing(t *testing.T) {
	res := &fakeReservation{}
	res.limit.Store(math.MinInt64)
	g := mustGen(t, Config{Layout: twitter(), Reservation: res}, newFakeClock(t0))
	if id, err := g.Next(context.Background()); !errors.Is(err, ErrNotServing) {
		t.Fatalf("Next = %d, %v; want ErrNotServing", id, err)
	}
}

// A refused New leaves the reservation free for the next attempt.
func TestRefusedNewLeavesReservationUnbound(t *testing.T) {
	res := unlimited()
	res.start = t0.Add(time.Hour).UnixMilli()
	var cb *ClockBehindError
	if _, err := newGenerator(Config{Layout: twitter(), Reservation: res}, newFakeClock(t0)); !errors.As(err, &cb) {
		t.Fatalf("newGenerator = %v, want *ClockBehindError", err)
	}
	if _, err := newGenerator(Config{Layout: twitter(), Reservation: res, StartAhead: true}, newFakeClock(t0)); err != nil {
		t.Fatalf("second attempt: %v", err)
	}
}

// blockingClock's pause blocks until released, as a long sleep would.
type blockingClock struct {
	*fakeClock
	paused  chan struct{}
	release chan struct{}
}

func (c *blockingClock) pause(d time.Duration) {
	c.paused <- struct{}{}
	<-c.release
	c.fakeClock.pause(d)
}

// In contended mode a caller waiting for the next tick held the mutex
// while it slept, so a caller queued behind it could not leave when its
// context ended. The wait now happens outside the mutex.
func TestContendedWaitHoldsNoLock(t *testing.T) {
	clk := &blockingClock{fakeClock: newFakeClock(t0), paused: make(chan struct{}), release: make(chan struct{})}
	l := Layout{Epoch: t0.Add(-time.Hour), Tick: 10 * time.Millisecond, TimeBits: 40, SequenceBits: 0}
	g := mustGen(t, Config{Layout: l}, clk.fakeClock)
	g.clk = clk
	g.contended.Store(true)
	if _, err := g.Next(context.Background()); err != nil { // the tick's only ID
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := g.Next(context.Background()); done <- err }()
	<-clk.paused // the first caller sleeps until the next tick
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := callReturns(t, func() (int64, error) { return g.Next(ctx) }); !errors.Is(err, context.Canceled) {
		t.Fatalf("queued caller = %v, want context.Canceled", err)
	}
	close(clk.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// stepClock steps the wall clock back 2 ms at its second reading.
type stepClock struct {
	*fakeClock
	reads atomic.Int64
}

func (c *stepClock) wall() int64 {
	if c.reads.Add(1) == 2 {
		c.wallNs.Add(-int64(2 * time.Millisecond))
	}
	return c.fakeClock.wall()
}

// A wall clock stepped back between two readings in New put the start
// before the epoch, and the clock saturated at 292 years: the lease would
// have moved the HWM there. New reads the wall clock once.
func TestWallStepInsideNew(t *testing.T) {
	l := Layout{Epoch: t0.Add(-time.Millisecond), Tick: time.Millisecond, TimeBits: 41, SequenceBits: 12}
	res := unlimited()
	g, err := newGenerator(Config{Layout: l, Reservation: res}, &stepClock{fakeClock: newFakeClock(t0)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.Next(context.Background()); err != nil {
		t.Fatalf("Next one millisecond into the layout: %v", err)
	}
	if got := time.UnixMilli(res.now()); got.Sub(t0) > time.Second {
		t.Fatalf("the generator tells its lease the time is %s", got.UTC())
	}
}

// stallClock stops its first armed monotonic reading until released: the
// caller holding it is preempted while others move on.
type stallClock struct {
	*fakeClock
	armed   atomic.Bool
	read    chan struct{}
	release chan struct{}
}

func (c *stallClock) mono() int64 {
	v := c.fakeClock.mono()
	if c.armed.CompareAndSwap(true, false) {
		c.read <- struct{}{}
		<-c.release
	}
	return v
}

// A caller whose clock reading went stale while others moved the counter
// to a later tick was told the clock is behind.
func TestStaleReadingIsNotClockBehind(t *testing.T) {
	clk := &stallClock{fakeClock: newFakeClock(t0), read: make(chan struct{}), release: make(chan struct{})}
	g, err := newGenerator(Config{Layout: twitter(), Reservation: unlimited(), MaxWait: time.Millisecond}, clk)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := g.Next(ctx); err != nil {
		t.Fatal(err)
	}
	clk.armed.Store(true)
	done := make(chan error, 1)
	go func() { _, err := g.Next(ctx); done <- err }()
	<-clk.read
	clk.advance(5 * time.Millisecond)
	if _, err := g.Next(ctx); err != nil {
		t.Fatal(err)
	}
	close(clk.release)
	if err := <-done; err != nil {
		t.Fatalf("Next after a stale reading = %v", err)
	}
}

// Borrowing up to a healthy reservation's limit waits for the clock
// instead of reporting the node not serving.
func TestBorrowStopsAtTheLimitAndWaits(t *testing.T) {
	clk := newFakeClock(t0)
	res := &fakeReservation{}
	res.limit.Store(t0.UnixMilli() + 100)
	g := mustGen(t, Config{Layout: twitter(), Reservation: res, Exhausted: Borrow}, clk)
	dst := make([]int64, 4096*200) // 200 ms of IDs: past the 100 ms reserved
	n, err := g.NextN(context.Background(), dst)
	if errors.Is(err, ErrNotServing) && clk.pauses.Load() == 0 {
		t.Fatalf("a borrowing burst: %v after %d IDs without waiting for the clock", err, n)
	}
	// Once the clock itself reaches the limit, the node is not serving.
	if !errors.Is(err, ErrNotServing) || n < 4096*100 {
		t.Fatalf("NextN = %d, %v; want the 100 reserved ms of IDs, then ErrNotServing at the limit", n, err)
	}
}

// offsetNow returns how far g's clock lies ahead of its monotonic baseline.
func offsetNow(g *Generator) int64 { return g.drift.Load().offsetAt(g.monoNs()) }
