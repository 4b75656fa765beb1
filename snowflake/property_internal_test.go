package snowflake

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"
)

// The properties below hold for every valid generated layout, every clock
// position and every sequence of calls, clock steps, reservation
// extensions and restarts on one durable HWM:
//
//   - every ID decodes to a tick inside the layout, whose end lies at or
//     before the HWM reserved when it was issued and whose start lies no
//     further ahead of the generator's clock than borrowing allows;
//   - a new generator's first tick starts at or after the HWM it took over;
//   - the (tick, sequence) pairs of one node strictly increase over its
//     whole history, restarts included, and so do the IDs wherever time is
//     more significant than sequence;
//   - once the generator's clock is past the layout's last tick, every call
//     returns ErrLayoutExhausted, and so does a generator whose reservation
//     starts past it.
//
// A history is read from a byte string, so the same driver runs on random
// bytes (the property test) and on the fuzzer's.

// script turns bytes into choices; past its end every choice is 0.
type script struct{ b []byte }

// n returns a choice in [0, m); m must be positive.
func (s *script) n(m uint64) uint64 {
	var buf [8]byte
	k := copy(buf[:], s.b)
	s.b = s.b[k:]
	return binary.LittleEndian.Uint64(buf[:]) % m
}

// durableHWM is the store behind every life of one node: an HWM in Unix
// milliseconds that only grows.
type durableHWM struct{ ms int64 }

// propReservation is one acquisition of the node: it starts at the stored
// HWM and moves its limit only when a write to the store is confirmed.
type propReservation struct {
	store *durableHWM
	start int64
	limit atomic.Int64
	now   func() int64
	bound atomic.Bool
}

func acquire(store *durableHWM) *propReservation {
	r := &propReservation{store: store, start: store.ms}
	r.limit.Store(store.ms)
	return r
}

func (r *propReservation) BindGenerator(now func() int64) error {
	if !r.bound.CompareAndSwap(false, true) {
		return ErrAlreadyBound
	}
	r.now = now
	return nil
}
func (r *propReservation) Start() int64 { return r.start }
func (r *propReservation) Limit() int64 { return r.limit.Load() }

// extend writes the generator's own time plus window to the store, as a
// lease does, and confirms it.
func (r *propReservation) extend(window int64) {
	target := r.now() + window
	if target > r.store.ms {
		r.store.ms = target
	}
	r.limit.Store(r.store.ms)
}

// maxWallMS keeps fake wall clocks inside what time.Time holds in
// nanoseconds (year 2262).
const maxWallMS = math.MaxInt64/int64(time.Millisecond) - 1

// propLayout reads a valid layout of at most 63 bits from s, or false.
func propLayout(s *script) (Layout, bool) {
	// Up to 292 years: ticks longer than 146 years leave the generator's
	// nanosecond arithmetic less than two ticks, and are refused.
	ticks := []int64{1, 10, 1000, int64(s.n(3_600_000)) + 1, int64(s.n(uint64(math.MaxInt64/int64(time.Millisecond)))) + 1}
	l := Layout{
		Epoch:        time.UnixMilli(int64(s.n(4_102_444_800_000))), // up to 2100
		Tick:         time.Duration(ticks[s.n(uint64(len(ticks)))]) * time.Millisecond,
		TimeBits:     int(s.n(63)) + 1,
		SequenceBits: int(s.n(63)),
	}
	if rest := 63 - l.TimeBits - l.SequenceBits; rest > 0 {
		if nb := int(s.n(uint64(min(rest, 20)) + 1)); nb > 0 {
			l.Node = []Field{{Name: "node", Bits: nb}}
		}
	}
	orders := [][]Part{
		{PartTime, PartNode, PartSequence},
		{PartTime, PartSequence, PartNode},
		{PartNode, PartTime, PartSequence},
		{PartSequence, PartTime, PartNode},
	}
	l.Order = orders[s.n(uint64(len(orders)))]
	return l, l.Validate() == nil && l.Bits() <= 63
}

// wallAt picks a wall clock position for l: before the epoch, inside,
// at the last tick, at the end, or far past it.
func wallAt(s *script, l Layout) int64 {
	epoch, end := l.Epoch.UnixMilli(), l.lastTickEndMS()
	tick := l.tickMS()
	var ms int64
	switch s.n(6) {
	case 0:
		ms = epoch - 1 - int64(s.n(1_000_000))
	case 1:
		ms = epoch + int64(s.n(uint64(min(end, maxWallMS)-epoch)+1))
	case 2:
		ms = end - tick + int64(s.n(uint64(tick)))
	case 3:
		ms = end
	case 4:
		ms = end + int64(s.n(uint64(3*tick)+1))
	default:
		ms = end + int64(s.n(1<<50))
	}
	if ms < 0 || ms > maxWallMS { // saturated or wrapped: the clock's limit
		ms = maxWallMS
	}
	return ms
}

// checkHistory runs one history read from b and reports the first broken
// property. Layouts that are not valid generated layouts are skipped.
func checkHistory(b []byte) error {
	s := &script{b: b}
	l, ok := propLayout(s)
	if !ok {
		return nil
	}
	node := s.n(l.MaxNode() + 1)
	store := &durableHWM{}
	h := &history{l: l, node: node}
	for range s.n(4) + 1 {
		if err := h.life(s, store); err != nil {
			return fmt.Errorf("layout %s, node %d: %w", l, node, err)
		}
	}
	return nil
}

type history struct {
	l      Layout
	node   uint64
	lastID int64
	last   [2]uint64 // tick, sequence of the last ID
	any    bool
}

// life starts a generator on the stored HWM at some wall clock and runs
// calls against it.
func (h *history) life(s *script, store *durableHWM) error {
	clk := newFakeClock(time.UnixMilli(wallAt(s, h.l)))
	if s.n(4) == 0 { // an operator advanced the node (firn admin advance)
		span := uint64(min(h.l.lastTickEndMS(), math.MaxInt64-1) - h.l.Epoch.UnixMilli())
		store.ms = max(store.ms, h.l.Epoch.UnixMilli()+int64(s.n(span+1)))
	}
	res := acquire(store)
	cfg := propConfig(s, h.l)
	cfg.Node, cfg.Reservation = h.node, res
	g, err := newGenerator(cfg, clk)
	var layoutErr *LayoutError
	var behind *ClockBehindError
	switch {
	case err == nil:
	case errors.As(err, &layoutErr) && int64(h.l.Tick) > math.MaxInt64/3:
		return nil // a tick too long for the generator's arithmetic
	case errors.Is(err, ErrLayoutExhausted):
		if first := h.firstTick(res.start); first <= h.l.MaxTick() && first <= g0MaxTick(h.l) {
			return fmt.Errorf("New refused a reservation starting at tick %d as exhausted: %w", first, err)
		}
		return nil
	case errors.As(err, &behind):
		if res.bound.Load() {
			return fmt.Errorf("a refused New left the reservation bound")
		}
		return nil
	default:
		return fmt.Errorf("New: %w", err)
	}
	if st := g.state.Load() >> g.seqBits; res.start > h.l.Epoch.UnixMilli() && st < h.firstTick(res.start) {
		return fmt.Errorf("first tick %d starts before the HWM taken over (%d ms)", st, res.start)
	}
	for range s.n(24) + 1 {
		if err := h.step(s, g, clk, res); err != nil {
			return err
		}
	}
	return nil
}

// g0MaxTick is the last tick the generator's arithmetic allows for l.
func g0MaxTick(l Layout) uint64 {
	return min(l.MaxTick(), uint64(max(2, math.MaxInt64/int64(l.Tick))-2))
}

// propConfig reads the generator's settings from s: either policy, any
// borrowing bound up to none at all, jitter, catch-up rates, waits and
// start-ahead bounds.
func propConfig(s *script, l Layout) Config {
	cfg := Config{Layout: l, StartAhead: s.n(2) == 0}
	if s.n(2) == 0 {
		cfg.Exhausted = Borrow
		switch s.n(3) {
		case 0:
			cfg.MaxBorrow = time.Duration(s.n(uint64(10*min(int64(l.Tick), math.MaxInt64/10)) + 1))
		case 1:
			cfg.MaxBorrow = math.MaxInt64
		}
	}
	if s.n(3) == 0 {
		cfg.SequenceJitter = s.n((l.MaxSequence()+1)/2 + 1)
	}
	cfg.CatchUpRate = []float64{0, 0.5, 0.001, 5e-324}[s.n(4)]
	cfg.ShedRate = []float64{0, 0.5, 0.001, 5e-324}[s.n(4)]
	if s.n(2) == 0 {
		cfg.MaxWait = l.Tick
	}
	if s.n(2) == 0 {
		cfg.MaxStartAhead = time.Duration(s.n(math.MaxInt64))
	}
	return cfg
}

// firstTick is the first tick starting at or after ms.
func (h *history) firstTick(ms int64) uint64 {
	d := ms - h.l.Epoch.UnixMilli()
	if d <= 0 {
		return 0
	}
	return uint64((d + h.l.tickMS() - 1) / h.l.tickMS())
}

func (h *history) step(s *script, g *Generator, clk *fakeClock, res *propReservation) error {
	tickNs := int64(h.l.Tick)
	switch s.n(6) {
	case 0:
		clk.advance(time.Duration(s.n(uint64(3*tickNs) + 1)))
		return nil
	case 1: // the wall clock alone steps, either way
		d := int64(s.n(uint64(1000*tickNs))) - 500*tickNs
		if w := clk.wallNs.Load() + d; w > 0 && w/int64(time.Millisecond) < maxWallMS {
			clk.wallNs.Store(w)
		}
		return nil
	case 2:
		res.extend(int64(s.n(uint64(10*h.l.tickMS()) + 5000)))
		return nil
	}
	res.extend(int64(s.n(uint64(4*h.l.tickMS()) + 100)))
	nowBefore, offBefore := g.nowNs(), offsetNow(g)
	past := nowBefore >= int64(g.maxTick+1)*tickNs
	limit := res.Limit()
	dst := make([]int64, s.n(300)+1)
	var n int
	var err error
	if len(dst) == 1 && s.n(2) == 0 {
		dst[0], err = g.Next(context.Background())
		if err == nil {
			n = 1
		}
	} else {
		n, err = g.NextN(context.Background(), dst)
	}
	if past && !errors.Is(err, ErrLayoutExhausted) {
		return fmt.Errorf("clock past the last tick: got %d IDs and %v, want ErrLayoutExhausted", n, err)
	}
	for _, id := range dst[:n] {
		if err := h.check(g, id, nowBefore, offBefore, limit, res.Limit()); err != nil {
			return err
		}
	}
	if err != nil && !errors.Is(err, ErrLayoutExhausted) && !errors.Is(err, ErrNotServing) {
		var behind *ClockBehindError
		if !errors.As(err, &behind) {
			return fmt.Errorf("unexpected error: %w", err)
		}
	}
	return nil
}

// check holds one issued ID to the properties.
func (h *history) check(g *Generator, id, nowBefore, offBefore, limitBefore, limitAfter int64) error {
	if id < 0 {
		return fmt.Errorf("negative ID %d", id)
	}
	p, err := h.l.Decompose(uint64(id))
	if err != nil {
		return fmt.Errorf("ID %d: %w", id, err)
	}
	switch {
	case p.Node != h.node:
		return fmt.Errorf("ID %d carries node %d", id, p.Node)
	case p.Tick > g.maxTick:
		return fmt.Errorf("ID %d: tick %d past the last tick %d", id, p.Tick, g.maxTick)
	case h.l.Epoch.UnixMilli()+int64(p.Tick+1)*h.l.tickMS() > max(limitBefore, limitAfter):
		return fmt.Errorf("ID %d: tick %d ends after the HWM %d", id, p.Tick, limitAfter)
	case int64(p.Tick)*int64(h.l.Tick)-g.borrowNs-max(0, offBefore-offsetNow(g)) > max(nowBefore, g.nowNs()):
		return fmt.Errorf("ID %d: tick %d ahead of the clock (%d ns since the epoch) by more than borrowing allows", id, p.Tick, max(nowBefore, g.nowNs()))
	}
	cur := [2]uint64{p.Tick, p.Sequence}
	if h.any && (cur[0] < h.last[0] || cur[0] == h.last[0] && cur[1] <= h.last[1]) {
		return fmt.Errorf("ID %d (tick %d, sequence %d) not after (tick %d, sequence %d)", id, cur[0], cur[1], h.last[0], h.last[1])
	}
	if h.any && timeAboveSequence(h.l) && id <= h.lastID {
		return fmt.Errorf("ID %d not above the earlier %d", id, h.lastID)
	}
	h.any, h.last, h.lastID = true, cur, id
	return nil
}

func timeAboveSequence(l Layout) bool {
	for _, p := range l.order() {
		switch p {
		case PartTime:
			return true
		case PartSequence:
			return false
		}
	}
	return false
}

func TestNoWrappedTickForAnyLayout(t *testing.T) {
	runs := 10000
	if testing.Short() {
		runs = 2000
	}
	r := rand.New(rand.NewPCG(1, 2))
	buf := make([]byte, 2048)
	for i := range runs {
		for j := range buf {
			buf[j] = byte(r.Uint32())
		}
		if err := checkHistory(buf); err != nil {
			t.Fatalf("history %d: %v", i, err)
		}
	}
}

// TestWrapExample is the history the property was written after: 4 time
// bits of 1 s, 59 sequence bits, the clock 40 s past the epoch. The clock's
// tick, 40, shifted by 59 bits wrapped to tick 8, inside the layout.
func TestWrapExample(t *testing.T) {
	now := t0
	l := Layout{Epoch: now.Add(-40 * time.Second), Tick: time.Second, TimeBits: 4, SequenceBits: 59}
	for _, p := range []Policy{Wait, Borrow} {
		t.Run(p.String(), func(t *testing.T) {
			g := mustGen(t, Config{Layout: l, Exhausted: p}, newFakeClock(now))
			if id, err := g.Next(context.Background()); !errors.Is(err, ErrLayoutExhausted) {
				t.Fatalf("Next = %d, %v; want ErrLayoutExhausted", id, err)
			}
			dst := make([]int64, 3)
			if n, err := g.NextN(context.Background(), dst); n != 0 || !errors.Is(err, ErrLayoutExhausted) {
				t.Fatalf("NextN = %d (%v), %v; want 0 and ErrLayoutExhausted", n, dst[:n], err)
			}
		})
	}
}

func FuzzHistory(f *testing.F) {
	f.Add([]byte{})
	r := rand.New(rand.NewPCG(3, 4))
	for range 8 {
		b := make([]byte, 512)
		for j := range b {
			b[j] = byte(r.Uint32())
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if err := checkHistory(b); err != nil {
			t.Fatal(err)
		}
	})
}
