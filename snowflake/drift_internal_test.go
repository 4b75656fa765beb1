package snowflake

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"
)

// gateClock is a fakeClock whose next wall() or mono() call, once armed,
// blocks until released: a goroutine descheduled at that point.
type gateClock struct {
	*fakeClock
	armWall, armMono atomic.Bool
	entered, release chan struct{}
}

func newGateClock() *gateClock {
	return &gateClock{fakeClock: newFakeClock(t0), entered: make(chan struct{}), release: make(chan struct{})}
}

func (c *gateClock) wall() int64 {
	if c.armWall.CompareAndSwap(true, false) {
		c.entered <- struct{}{}
		<-c.release
	}
	return c.fakeClock.wall()
}

func (c *gateClock) mono() int64 {
	if c.armMono.CompareAndSwap(true, false) {
		c.entered <- struct{}{}
		<-c.release
	}
	return c.fakeClock.mono()
}

// leadThenWallBack builds a generator whose clock has gained ~100 ms on a
// wall clock that jumped an hour ahead (flat drift), then puts the wall
// clock back: the next sync finds a lead and starts shedding.
func leadThenWallBack(t *testing.T, clk *gateClock, maxWait time.Duration) *Generator {
	t.Helper()
	g, err := newGenerator(Config{Layout: twitter(), Reservation: unlimited(), MaxWait: maxWait}, clk)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	clk.wallNs.Add(int64(time.Hour))
	for range 1000 {
		clk.advance(time.Millisecond)
		if _, err := g.Next(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if d := g.drift.Load(); d.shed != 0 || d.off < int64(50*time.Millisecond) {
		t.Fatalf("setup: drift %+v", *d)
	}
	clk.wallNs.Add(-int64(time.Hour))
	clk.advance(70 * time.Millisecond) // the next call syncs
	return g
}

// A sync descheduled between reading the monotonic clock and installing
// its drift does not set the clock back below the ticks issued meanwhile
// under the previous drift: its shedding starts a sync interval after its
// reading, or, stalled longer than that, it gives up.
func TestStalledSyncKeepsTheClock(t *testing.T) {
	for _, stall := range []int{40, 100} {
		t.Run(fmt.Sprintf("%dms", stall), func(t *testing.T) { stalledSync(t, stall) })
	}
}

func stalledSync(t *testing.T, stall int) {
	clk := newGateClock()
	g := leadThenWallBack(t, clk, time.Millisecond) // MaxWait: one tick
	ctx := context.Background()

	clk.armWall.Store(true)
	done := make(chan error)
	go func() { _, err := g.Next(ctx); done <- err }() // syncs, stalls in wall()
	<-clk.entered

	// Time passes while the sync is descheduled; callers carry on.
	var last int64
	for range stall {
		clk.advance(time.Millisecond)
		id, err := g.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		last = id
	}
	before := g.Now()
	close(clk.release)
	err := <-done
	after := g.Now() // same monotonic instant
	if err != nil {
		t.Errorf("stalled sync's own call: %v", err)
	}
	if after.Before(before) {
		t.Errorf("clock went back %s at one monotonic instant", before.Sub(after))
	}
	if id, ok := promptNext(t, g, clk, "next call"); ok && id <= last {
		t.Errorf("next ID %d not after %d", id, last)
	}
}

// promptNext takes an ID from g, whose MaxWait is one tick, and reports
// as what an error, or a wait of more than a millisecond on clk; ok is
// false when it did.
func promptNext(t *testing.T, g *Generator, clk *gateClock, what string) (id int64, ok bool) {
	t.Helper()
	m := clk.mono()
	id, err := g.Next(context.Background())
	var cb *ClockBehindError
	if errors.As(err, &cb) {
		t.Errorf("%s with MaxWait of one tick: %v", what, err)
		return id, false
	}
	if w := clk.mono() - m; w > int64(time.Millisecond) {
		t.Errorf("%s waited %s", what, time.Duration(w))
		return id, false
	}
	return id, true
}

// A reader that loaded the drift and was descheduled before reading the
// monotonic clock, while a sync installed a shedding drift, reads the
// clock again under the new one: it issues no tick ahead of the clock,
// and the next caller, with MaxWait of one tick, neither waits nor fails.
func TestStaleReaderRereadsTheClock(t *testing.T) {
	for _, mode := range []string{"Next", "NextN"} {
		t.Run(mode, func(t *testing.T) {
			clk := newGateClock()
			g := leadThenWallBack(t, clk, time.Millisecond)
			ctx := context.Background()
			// The reader loads the (still flat) drift, then stalls.
			clk.armMono.Store(true)
			got := make(chan error)
			go func() {
				var err error
				if mode == "Next" {
					_, err = g.Next(ctx)
				} else {
					_, err = g.NextN(ctx, make([]int64, 1))
				}
				got <- err
			}()
			<-clk.entered
			d0 := g.drift.Load()
			// Meanwhile time passes and a sync finds the lead.
			for range 70 {
				clk.advance(time.Millisecond)
				if _, err := g.Next(ctx); err != nil {
					t.Fatal(err)
				}
			}
			if d := g.drift.Load(); d == d0 || d.shed == 0 {
				t.Fatalf("no shedding drift installed: %+v", *d)
			}
			close(clk.release)
			if err := <-got; err != nil {
				t.Fatalf("stale reader: %v", err)
			}
			promptNext(t, g, clk, "call after the stale reader")
		})
	}
}

// The clock a shedding drift gives never goes back, however long it
// sheds: past 2^53 ns (104 days) float64 no longer holds every elapsed
// nanosecond, and the time kept is computed so that rounding is monotone.
func TestSheddingClockMonotoneForYears(t *testing.T) {
	d := &drift{off: int64(100 * 365 * 24 * time.Hour), shed: 0.25}
	for _, start := range []int64{1 << 53, 1 << 55, 1 << 58} {
		prev := start + d.offsetAt(start)
		for m := start + 1; m < start+5000; m++ {
			now := m + d.offsetAt(m)
			if now < prev {
				t.Errorf("mono %d (%.0f days): clock went back %d ns", m, float64(m)/86400e9, prev-now)
				break
			}
			prev = now
		}
	}
}

// The same through a generator: StartAhead with a lead of 30 years, the
// wall clock in step with monotonic time (the floor is 0, and no sync
// installs another drift), 600 days on.
func TestStartAheadYearsClockMonotone(t *testing.T) {
	clk := newFakeClock(t0)
	res := unlimited()
	res.start = t0.Add(30 * 365 * 24 * time.Hour).UnixMilli()
	g := mustGen(t, Config{Layout: twitter(), Reservation: res, StartAhead: true}, clk)
	ctx := context.Background()
	if _, err := g.Next(ctx); err != nil {
		t.Fatal(err)
	}
	clk.advance(600 * 24 * time.Hour)
	prev := g.nowNs()
	for i := range 100000 {
		clk.advance(1)
		if i%1000 == 0 {
			if _, err := g.Next(ctx); err != nil {
				t.Fatal(err)
			}
		}
		now := g.nowNs()
		if now < prev {
			t.Fatalf("after %d ns: clock went back %d ns (drift %+v)", i, prev-now, *g.drift.Load())
		}
		prev = now
	}
}

// A sync descheduled between its readings of the monotonic and the wall
// clock would take the stall for a forward step of the wall clock, and
// make a lead out of nothing: it leaves the step to the next sync.
func TestStalledWallReadingMakesNoLead(t *testing.T) {
	clk := newGateClock()
	g, err := newGenerator(Config{Layout: twitter(), Reservation: unlimited(), CatchUpRate: 0.5}, clk)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	clk.advance(time.Second) // idle: the next sync may gain up to 0.5 s
	clk.armWall.Store(true)
	done := make(chan error)
	go func() { _, err := g.Next(ctx); done <- err }()
	<-clk.entered
	clk.advance(300 * time.Millisecond)
	close(clk.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if off := time.Duration(g.nowNs() - (clk.wall() - g.epochNs)); off > 0 {
		t.Errorf("the wall clock never stepped, yet the generator leads it by %s", off)
	}
	// The next sync, unstalled, still follows a real step.
	clk.wallNs.Add(int64(time.Hour))
	clk.advance(100 * time.Millisecond)
	if _, err := g.Next(ctx); err != nil {
		t.Fatal(err)
	}
	if off := offsetNow(g); off <= 0 {
		t.Errorf("a real step of the wall clock gained nothing (offset %s)", time.Duration(off))
	}
}
