package snowflake

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"
)

// Policy says what the generator does when the sequence of a tick runs out.
type Policy int

const (
	// Wait waits for the next tick (Twitter's way). The default.
	Wait Policy = iota
	// Borrow takes future ticks, up to Config.MaxBorrow ahead of the
	// clock, then waits (uid-generator's ring buffer, yitter's drift).
	// Borrowed ticks still respect the reservation.
	Borrow
)

// String returns "wait" or "borrow".
func (p Policy) String() string {
	switch p {
	case Wait:
		return "wait"
	case Borrow:
		return "borrow"
	}
	return fmt.Sprintf("Policy(%d)", int(p))
}

// ParsePolicy parses "wait" or "borrow".
func ParsePolicy(s string) (Policy, error) {
	switch s {
	case "wait":
		return Wait, nil
	case "borrow":
		return Borrow, nil
	}
	return 0, fmt.Errorf("snowflake: unknown policy %q (want wait or borrow)", s)
}

// DefaultMaxBorrow and DefaultMaxStartAhead are Config's defaults for
// MaxBorrow and MaxStartAhead.
const (
	DefaultMaxBorrow     = time.Second
	DefaultMaxStartAhead = 10 * time.Second
)

// Config configures a Generator. The zero value of every field but Node
// and Reservation means its default.
type Config struct {
	// Layout of the IDs. Default: DefaultLayout(). At most 63 bits.
	Layout Layout
	// Node is the node part of every ID, 0..Layout.MaxNode(). Compose it
	// from named fields with Layout.NodeValue.
	Node uint64
	// Reservation bounds the ticks the generator may issue. Required:
	// pass a nodeid lease, or Unreserved() to accept the risk it names.
	Reservation Reservation
	// Exhausted is the policy when a tick's sequence runs out. Default Wait.
	Exhausted Policy
	// MaxBorrow is how far ahead of the clock Borrow may go, rounded down
	// to whole ticks. Default 1 s; ignored by Wait.
	MaxBorrow time.Duration
	// MaxWait bounds how long a call waits for the clock to reach the next
	// free tick. A clock further behind (only possible if time itself
	// misbehaves) gets a *ClockBehindError at once. Default 1 s, and at
	// least one tick.
	MaxWait time.Duration
	// MaxStartAhead bounds how far the reservation's start may lie ahead
	// of the wall clock at New. Within it the generator starts at the
	// reserved start at once, its IDs' timestamps slightly ahead of the
	// clock; beyond it New returns a *ClockBehindError unless
	// StartAhead is set. Default 10 s.
	MaxStartAhead time.Duration
	// StartAhead lets New start at the reservation's start however far
	// ahead of the wall clock it is.
	StartAhead bool
	// SequenceJitter, when positive, starts each new tick's sequence at a
	// random value below it (Leaf's fix: if every tick starts at 0, IDs
	// modulo a shard count are uneven at low traffic). It costs that much
	// of each tick's capacity; at most half the sequence range. Default 0.
	SequenceJitter uint64
	// CatchUpRate bounds how fast the generator's clock (wall clock at
	// start plus monotonic elapsed time) follows a wall clock stepped
	// forward, as a fraction of elapsed monotonic time: 0.1 is at most
	// 100 ms gained per second, compared every 64 ms and by at most the
	// rate times one second after an idle period, so a bogus step of years
	// moves the clock, and the HWM it writes, little. Default 0.1; range
	// (0, 0.5].
	CatchUpRate float64
	// ShedRate bounds how fast the generator's clock sheds a lead over
	// the wall clock (a start at an HWM ahead of it after a quick
	// hand-over, a wall clock stepped back), as a fraction of elapsed
	// monotonic time: at 0.25 ticks pass at three quarters of real time,
	// and the node loses that share of its capacity, until the lead is
	// gone. The clock slows rather than steps back, so no caller waits
	// for a tick already issued. Faster than CatchUpRate by default: each
	// hand-over starts a window ahead, and leads shed slowly pile up when
	// a node changes hands every few seconds. Default 0.25; range (0, 0.5].
	ShedRate float64
}

// cacheLine is twice the x86 line size, as the adjacent-line prefetcher
// moves lines in pairs.
const cacheLine = 128

// syncEvery is how often, in monotonic time, the clock is compared with
// the wall clock.
const syncEvery = int64(64 * time.Millisecond)

// maxSyncSpan caps the monotonic time one sync may account for: after an
// idle period the first sync moves the clock by at most CatchUpRate times
// this, not by a share of the whole idle time.
const maxSyncSpan = int64(time.Second)

// Generator issues unique IDs for one node. It is safe for concurrent use.
type Generator struct {
	_ [cacheLine]byte
	// state is the next free slot: tick<<seqBits | sequence. It only grows.
	// It has a cache line to itself: every ID writes it, and the fields
	// below, read by every call, would otherwise move with it between cores.
	state atomic.Uint64
	_     [cacheLine - 8]byte
	// mu and quiet serve contended mode (see Next); contended is read by
	// every call and written rarely, so it sits with the read-mostly
	// fields below.
	mu        sync.Mutex
	quiet     int
	_         [cacheLine - 16]byte
	contended atomic.Bool

	// drift gives the offset added to wall-at-start + monotonic elapsed
	// (nanoseconds); never nil after configure.
	drift atomic.Pointer[drift]
	// limit is the last tick the reservation allows, never above maxTick.
	limit atomic.Int64
	// lastSync is the monotonic time (ns since start) of the last sync.
	lastSync atomic.Int64

	layout              Layout
	node                uint64
	res                 Reservation
	seqBits             uint
	seqMask             uint64
	timeShift, seqShift uint
	nodePart            uint64
	tickNs              int64
	epochNs             int64
	maxTick             uint64
	borrowNs            int64
	maxWaitNs           int64
	jitter              uint64
	rate                float64 // CatchUpRate
	shed                float64 // ShedRate

	start time.Time // wall and monotonic reading at New
	base  int64     // wall at start, ns since the epoch
	clk   clock     // nil in production
}

// clock is the seam through which tests step time. Production reads
// time.Since(start) for monotonic time and time.Now for the wall clock.
type clock interface {
	mono() int64 // nanoseconds since the generator started
	wall() int64 // Unix nanoseconds
	pause(d time.Duration)
}

// New validates cfg, binds its reservation and returns a generator. It
// does no I/O and starts no goroutines.
func New(cfg Config) (*Generator, error) { return newGenerator(cfg, nil) }

func newGenerator(cfg Config, clk clock) (*Generator, error) {
	g, err := configure(cfg)
	if err != nil {
		return nil, err
	}
	g.clk = clk
	g.start = time.Now()
	// Compared as times first: an epoch past 2262 has no nanosecond
	// Unix time, and the wall clock is then behind it anyway.
	// The wall clock is read once: a step between two readings could
	// put the start before the epoch after the check.
	wallNs := g.wallNs()
	if wall := time.Unix(0, wallNs); g.layout.Epoch.After(wall) {
		return nil, &ClockBehindError{Last: g.layout.Epoch, Now: wall}
	}
	g.epochNs = g.layout.Epoch.UnixNano()
	g.base = wallNs - g.epochNs
	// The reservation is bound last: a generator refused here leaves it
	// free for the next attempt.
	if err := g.startAt(cfg); err != nil {
		return nil, err
	}
	if err := cfg.Reservation.BindGenerator(g.unixMilli); err != nil {
		return nil, err
	}
	return g, nil
}

// configure validates cfg and fills the generator's constants.
func configure(cfg Config) (*Generator, error) {
	if cfg.Layout.Tick == 0 && cfg.Layout.TimeBits == 0 {
		cfg.Layout = DefaultLayout()
	}
	l := cfg.Layout
	if err := l.Validate(); err != nil {
		return nil, err
	}
	if err := l.ValidateForGenerator(); err != nil {
		return nil, err
	}
	if cfg.Node > l.MaxNode() {
		return nil, &RangeError{What: "node", Value: cfg.Node, Max: l.MaxNode()}
	}
	if cfg.Reservation == nil {
		return nil, ErrNoReservation
	}
	if err := fits(cfg.Reservation, cfg.Node, l); err != nil {
		return nil, err
	}
	d := defaults(cfg)
	if err := d.check(l); err != nil {
		return nil, err
	}
	g := &Generator{
		layout:  l,
		node:    cfg.Node,
		res:     cfg.Reservation,
		seqBits: uint(l.SequenceBits),
		seqMask: l.MaxSequence(),
		tickNs:  int64(l.Tick),
		jitter:  d.SequenceJitter,
		rate:    d.CatchUpRate,
		shed:    d.ShedRate,
	}
	var nodeShift uint
	g.timeShift, nodeShift, g.seqShift = l.shifts()
	g.nodePart = cfg.Node << nodeShift
	// The generator computes tick starts in nanoseconds since the epoch;
	// stop where that would overflow (about 292 years after the epoch),
	// keeping two ticks of room so that (tick+1)·tick length never
	// overflows for any tick up to maxTick+1.
	ticks := math.MaxInt64 / g.tickNs
	if ticks < 2 {
		return nil, &LayoutError{Layout: l.label(), Reason: fmt.Sprintf(
			"tick %s is too long to generate: the generator counts time in nanoseconds (292 years at most), and needs two ticks of it", l.Tick)}
	}
	g.maxTick = min(l.MaxTick(), uint64(ticks-2))
	if d.Exhausted == Borrow {
		// No further ahead than the layout itself: an unbounded MaxBorrow
		// would overflow the comparisons with the clock.
		g.borrowNs = min(int64(d.MaxBorrow/l.Tick), int64(g.maxTick)+1) * g.tickNs
	}
	g.maxWaitNs = int64(d.MaxWait)
	g.limit.Store(-1)
	g.drift.Store(&drift{})
	return g, nil
}

func defaults(cfg Config) Config {
	if cfg.MaxBorrow == 0 {
		cfg.MaxBorrow = DefaultMaxBorrow
	}
	if cfg.MaxWait == 0 {
		cfg.MaxWait = max(time.Second, cfg.Layout.Tick)
	}
	if cfg.MaxStartAhead == 0 {
		cfg.MaxStartAhead = DefaultMaxStartAhead
	}
	if cfg.CatchUpRate == 0 {
		cfg.CatchUpRate = 0.1
	}
	if cfg.ShedRate == 0 {
		cfg.ShedRate = 0.25
	}
	return cfg
}

func (c Config) check(l Layout) error {
	switch {
	case c.Exhausted != Wait && c.Exhausted != Borrow:
		return fmt.Errorf("snowflake: unknown policy %d (want Wait or Borrow)", c.Exhausted)
	case c.MaxBorrow < 0:
		return fmt.Errorf("snowflake: max borrow %s is negative", c.MaxBorrow)
	case c.MaxWait < l.Tick:
		return fmt.Errorf("snowflake: max wait %s is shorter than one tick (%s)", c.MaxWait, l.Tick)
	case c.MaxStartAhead < 0:
		return fmt.Errorf("snowflake: max start ahead %s is negative", c.MaxStartAhead)
	case c.SequenceJitter > (l.MaxSequence()+1)/2:
		return fmt.Errorf("snowflake: sequence jitter %d is over half the %d-bit sequence range (%d)",
			c.SequenceJitter, l.SequenceBits, (l.MaxSequence()+1)/2)
	case !(c.CatchUpRate > 0 && c.CatchUpRate <= 0.5):
		return fmt.Errorf("snowflake: catch-up rate %g outside (0, 0.5]", c.CatchUpRate)
	case !(c.ShedRate > 0 && c.ShedRate <= 0.5):
		return fmt.Errorf("snowflake: shed rate %g outside (0, 0.5]", c.ShedRate)
	}
	return nil
}

// startAt places the first free slot at or after the reservation's start,
// moving the generator's clock forward to it if it lies ahead.
func (g *Generator) startAt(cfg Config) error {
	startMS := g.res.Start()
	if startMS <= g.layout.Epoch.UnixMilli() {
		return nil
	}
	tickMS, since := g.layout.tickMS(), startMS-g.layout.Epoch.UnixMilli()
	first := since / tickMS
	if since%tickMS != 0 {
		first++ // rounded up without overflowing near MaxInt64
	}
	if uint64(first) > g.maxTick {
		return fmt.Errorf("reservation starts %s: %w", time.UnixMilli(startMS).UTC().Format(time.RFC3339Nano), ErrLayoutExhausted)
	}
	firstNs := first * g.tickNs
	if ahead := firstNs - g.base; ahead > 0 {
		if ahead > int64(defaults(cfg).MaxStartAhead) && !cfg.StartAhead {
			return &ClockBehindError{Last: g.layout.TickTime(uint64(first)), Now: g.layout.Epoch.Add(time.Duration(g.base))}
		}
		// Shedding starts at once: the lead is over the wall clock as
		// read at start, which the baseline is.
		g.drift.Store(&drift{off: ahead, shed: g.shed})
	}
	g.state.Store(uint64(first) << g.seqBits)
	return nil
}

// Layout returns the generator's layout.
func (g *Generator) Layout() Layout { return g.layout }

// Node returns the generator's node value.
func (g *Generator) Node() uint64 { return g.node }

// Now returns the generator's clock: the wall clock at start plus
// monotonic elapsed time, plus whatever catch-up has been applied.
func (g *Generator) Now() time.Time { return g.layout.Epoch.Add(time.Duration(g.nowNs())) }

// AheadOfWall returns how far the generator's clock is ahead of the wall
// clock (negative: behind).
func (g *Generator) AheadOfWall() time.Duration { return g.Now().Sub(time.Unix(0, g.wallNs())) }

// unixMilli is the generator's time in Unix milliseconds, which the
// reservation extends the HWM from.
func (g *Generator) unixMilli() int64 {
	return g.layout.Epoch.UnixMilli() + g.nowNs()/int64(time.Millisecond)
}

// nowNs returns the generator's time in nanoseconds since the epoch:
// the wall clock at start plus monotonic elapsed time plus the offset,
// saturating at MaxInt64, which lies past the last tick the generator
// issues.
func (g *Generator) nowNs() int64 {
	// The reading is taken under the drift in force when the clock was
	// read: one installed meanwhile starts a sync interval after its sync,
	// later than this reading unless the caller stalled, and then the
	// reading is taken again under it.
	for {
		d := g.drift.Load()
		var mono int64
		if g.clk != nil {
			mono = g.clk.mono()
		} else {
			mono = int64(time.Since(g.start))
		}
		if g.drift.Load() == d {
			return g.at(d.offsetAt(mono), mono)
		}
	}
}

// at returns the generator's time at monotonic time mono and offset off.
func (g *Generator) at(off, mono int64) int64 {
	s := g.base + off // never negative: base ≥ 0 (New), offset ≥ 0 (drift)
	if s > 0 && mono > math.MaxInt64-s {
		return math.MaxInt64
	}
	return s + mono
}

// monoNs returns the monotonic time since the generator started.
func (g *Generator) monoNs() int64 {
	if g.clk != nil {
		return g.clk.mono()
	}
	return int64(time.Since(g.start))
}

func (g *Generator) wallNs() int64 {
	if g.clk == nil {
		return time.Now().UnixNano() + hookOffset()
	}
	return g.clk.wall()
}

// pause waits about d for the clock, or until ctx ends.
func (g *Generator) pause(ctx context.Context, d time.Duration) error {
	switch {
	case g.clk != nil:
		g.clk.pause(d)
	case d > 2*time.Millisecond:
		t := time.NewTimer(d - time.Millisecond)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	default:
		spin()
	}
	return nil
}

// Next returns a new ID.
//
// Uncontended, a call is one clock read and one compare-and-swap on the
// counter. When callers on several cores collide, they queue on a mutex
// around the same compare-and-swap (contended mode), so the counter's
// cache line stops moving between cores on every ID; a run of calls that
// find the mutex free switches back.
func (g *Generator) Next(ctx context.Context) (int64, error) {
	if g.contended.Load() {
		return g.nextLocked(ctx)
	}
	now := g.nowNs()
	old := g.state.Load()
	if tick := old >> g.seqBits; now < int64(tick+1)*g.tickNs && g.issuable(tick, now) {
		if g.state.CompareAndSwap(old, old+1) {
			return int64(g.compose(old)), nil
		}
		g.contended.Store(true)
		return g.nextLocked(ctx)
	}
	return g.nextCAS(ctx, now)
}

// quietRun is how many calls in a row must find the mutex free before
// contended mode ends.
const quietRun = 4096

// nextLocked is Next in contended mode.
//
// The mutex is held only around taking a slot, never while waiting for
// the clock or the reservation: a caller that must wait releases it and
// waits on its own context, so queued callers are never held a tick.
func (g *Generator) nextLocked(ctx context.Context) (int64, error) {
	for {
		if g.mu.TryLock() {
			g.quiet++
			if g.quiet >= quietRun {
				g.quiet = 0
				g.contended.Store(false)
			}
		} else {
			g.mu.Lock()
			g.quiet = 0
		}
		now := g.nowNs()
		old := g.state.Load()
		slot := g.advance(old, now)
		if g.issuable(slot>>g.seqBits, now) && g.state.CompareAndSwap(old, slot+1) {
			g.mu.Unlock()
			return int64(g.compose(slot)), nil
		}
		g.mu.Unlock()
		if !g.issuable(slot>>g.seqBits, now) {
			if _, err := g.slow(ctx, slot>>g.seqBits, now); err != nil {
				return 0, err
			}
		}
	}
}

// nextCAS takes one slot with a compare-and-swap loop: the free slot, or
// the first of the clock's tick if the free one is stale.
func (g *Generator) nextCAS(ctx context.Context, now int64) (int64, error) {
	for {
		old := g.state.Load()
		slot := g.advance(old, now)
		if !g.issuable(slot>>g.seqBits, now) {
			var err error
			if now, err = g.slow(ctx, slot>>g.seqBits, now); err != nil {
				return 0, err
			}
			continue
		}
		if g.state.CompareAndSwap(old, slot+1) {
			return int64(g.compose(slot)), nil
		}
	}
}

// issuable reports whether tick lies within the cached reservation and no
// further ahead of the clock than borrowing allows.
func (g *Generator) issuable(tick uint64, now int64) bool {
	return int64(tick) <= g.limit.Load() && g.due(tick) <= now
}

// due returns the time at which tick may be issued: its start, less what
// borrowing allows. Both terms are non-negative and tick is at most
// maxTick+1, so it cannot overflow.
func (g *Generator) due(tick uint64) int64 { return int64(tick)*g.tickNs - g.borrowNs }

// NextN fills dst with new IDs, reading the clock once per tick, in the
// order the generator issues them: increasing when the layout is
// (Layout.Increasing), and otherwise not across ticks. It returns the
// number of IDs written: len(dst), or fewer with an error.
func (g *Generator) NextN(ctx context.Context, dst []int64) (int, error) {
	n := 0
	now := g.nowNs()
	for n < len(dst) {
		old := g.state.Load()
		slot := g.advance(old, now)
		if !g.issuable(slot>>g.seqBits, now) {
			var err error
			if now, err = g.slow(ctx, slot>>g.seqBits, now); err != nil {
				return n, err
			}
			continue
		}
		k := min(g.seqMask-slot&g.seqMask+1, uint64(len(dst)-n))
		if !g.state.CompareAndSwap(old, slot+k) {
			continue
		}
		id, step := int64(g.compose(slot)), int64(1)<<g.seqShift
		for i := range dst[n : n+int(k)] {
			dst[n+i] = id
			id += step
		}
		n += int(k)
	}
	return n, nil
}

// advance returns the slot to issue given the next free slot and the
// clock: the free slot, or the start of the clock's tick if that is later.
func (g *Generator) advance(free uint64, now int64) uint64 {
	if now < int64(free>>g.seqBits+1)*g.tickNs {
		return free
	}
	g.sync()
	seq := uint64(0)
	if g.jitter > 0 {
		seq = rand.Uint64N(g.jitter)
	}
	return g.clampTick(now)<<g.seqBits | seq
}

// clampTick returns the clock's tick, or maxTick+1 if the clock is past
// the layout's last tick. The clamp comes before any shift: a tick beyond
// the time bits, shifted by the sequence bits, would wrap to an earlier
// tick that passes every later check. maxTick+1 still fits, as time and
// sequence bits add up to at most 63, and slow refuses it with
// ErrLayoutExhausted.
func (g *Generator) clampTick(now int64) uint64 {
	if now < 0 {
		return 0
	}
	return min(uint64(now/g.tickNs), g.maxTick+1)
}

func (g *Generator) compose(slot uint64) uint64 {
	return slot>>g.seqBits<<g.timeShift | g.nodePart | slot&g.seqMask<<g.seqShift
}

// slow handles a slot the fast path cannot issue: past the cached limit,
// or ahead of the clock by more than borrowing allows. It returns the
// clock to retry with, or the error to return.
func (g *Generator) slow(ctx context.Context, tick uint64, now int64) (int64, error) {
	if tick > g.maxTick {
		return now, fmt.Errorf("%w (last tick starts %s)", ErrLayoutExhausted, g.layout.TickTime(g.maxTick).Format(time.RFC3339Nano))
	}
	due, pastLimit := g.due(tick), false
	if int64(tick) > g.limit.Load() && int64(tick) > g.refreshLimit() {
		start := int64(tick) * g.tickNs
		if start <= now {
			return now, g.notServing(tick)
		}
		// A borrowed tick past the reservation: borrowing stops there,
		// and the call waits for the clock to reach the tick (the
		// reservation moves ahead with it) rather than fail.
		due, pastLimit = start, true
	}
	if due <= now {
		return now, nil
	}
	// The caller's reading may be stale (it was preempted while others
	// moved the counter on): judge the wait by the clock as it is now.
	if now = g.nowNs(); due <= now {
		return now, nil
	}
	wait := due - now
	if wait > g.maxWaitNs {
		if !pastLimit {
			return now, &ClockBehindError{Last: g.layout.TickTime(tick), Now: g.layout.Epoch.Add(time.Duration(now))}
		}
		wait = g.maxWaitNs // and look again
	}
	select {
	case <-ctx.Done():
		return now, ctx.Err()
	default:
	}
	if err := g.pause(ctx, time.Duration(wait)); err != nil {
		return now, err
	}
	return g.nowNs(), nil
}

// refreshLimit reads the reservation and returns the last issuable tick.
func (g *Generator) refreshLimit() int64 {
	// Compared before subtracting: a limit near MinInt64 would wrap.
	// epoch + one tick cannot overflow, as the layout's end fits.
	lim, epochMS, tickMS := g.res.Limit(), g.layout.Epoch.UnixMilli(), g.layout.tickMS()
	last := int64(-1)
	if lim >= epochMS+tickMS {
		last = (lim-epochMS)/tickMS - 1
	}
	last = min(last, int64(g.maxTick))
	for {
		cur := g.limit.Load()
		if last <= cur || g.limit.CompareAndSwap(cur, last) {
			return max(cur, last)
		}
	}
}

func (g *Generator) notServing(tick uint64) error {
	end := g.layout.TickTime(tick + 1).Format(time.RFC3339Nano)
	hwm := time.UnixMilli(g.res.Limit()).UTC().Format(time.RFC3339Nano)
	if e, ok := g.res.(interface{ Err() error }); ok && e.Err() != nil {
		return fmt.Errorf("%w: tick ends %s, HWM %s: %w", ErrNotServing, end, hwm, e.Err())
	}
	return fmt.Errorf("%w: tick ends %s, HWM %s", ErrNotServing, end, hwm)
}
