package nodeid

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Config configures Acquire. The zero value of every field but NodeBits
// and Layout means its default.
type Config struct {
	// Node requests one node ID; nil takes the lowest free one.
	Node *uint64
	// NodeBits is the width of the layout's node part, 0..32: the pool is
	// 1 << NodeBits node IDs.
	NodeBits int
	// Reserved lists node IDs never handed out to a nil Node request
	// (those still held by a previous system's workers).
	Reserved []uint64
	// Layout identifies the layout; a namespace holds one.
	Layout LayoutID
	// TTL is how long the claim outlives its last renewal. Default
	// DefaultTTL (10 s); MinTTL (1 s) to MaxTTL (10 min).
	TTL time.Duration
	// Window is how far ahead of the generator's time the HWM is kept.
	// Default 3 s; at least 10 ms, at most MaxWindow (10 min), and below
	// MaxBehind (whose default grows with it). Each acquisition starts past the
	// last one's reservation, so restarts faster than the window move the
	// HWM ahead of the clock by up to a window each.
	Window time.Duration
	// MaxBehind bounds how far the wall clock may be behind the stored HWM
	// at acquisition: within it the generator starts at the HWM at once;
	// beyond it Acquire returns a *BehindHWMError unless StartAhead.
	// Default the larger of 10 s and twice Window; always more than
	// Window.
	MaxBehind time.Duration
	// StartAhead lets Acquire succeed however far the clock is behind.
	StartAhead bool
	// Tick and Epoch are the generator's layout's. When Tick is set,
	// every HWM the lease asks for is rounded up to the end of a tick
	// (Epoch + k·Tick): the tick holding the generator's time is reserved
	// whole however long it is, and the next acquisition starts at a
	// tick's start rather than in the tick after. Zero: no rounding.
	Tick  time.Duration
	Epoch time.Time
	// Site confines the lease to one site's nodes (docs/operations.md,
	// "Several sites"): Acquire claims only them, presents the
	// registry SiteLayout(Layout, Site), and first reads the
	// namespace's site record, refusing with a *SiteError unless it is
	// this site's, live and on the registry the site claimed. The zero
	// value: no site.
	Site Site
}

// maxNodeBits bounds the pool: beyond 2^32 node IDs no store could list
// them.
const maxNodeBits = 32

// DefaultWindow is Config.Window's default; MaxWindow its bound: IDs of
// a restarted process carry times up to a window ahead of the clock.
const (
	DefaultWindow = 3 * time.Second
	MaxWindow     = 10 * time.Minute
)

// The bounds and default of Config.TTL.
const (
	DefaultTTL = 10 * time.Second
	MinTTL     = time.Second
	MaxTTL     = 10 * time.Minute
)

// The longest layout fingerprint and description a store records (the
// SQL stores' columns): a longer one is refused, never cut short.
const (
	MaxFingerprint = 64
	MaxDescription = 512
)

// WithDefaults returns c with every zero field that has a default set to
// it: the TTL, the window, and MaxBehind (which follows the window).
func (c Config) WithDefaults() Config {
	if c.TTL == 0 {
		c.TTL = DefaultTTL
	}
	if c.Window == 0 {
		c.Window = DefaultWindow
	}
	if c.MaxBehind == 0 {
		c.MaxBehind = max(10*time.Second, 2*c.Window)
	}
	return c
}

// Validate reports what Acquire would refuse in c before it asks the
// store anything: bounds of the TTL, the window and MaxBehind, the node
// bits, a node outside the pool, a missing layout.
func (c Config) Validate() error { return c.WithDefaults().validate() }

func (c Config) validate() error {
	pool := uint64(1) << uint(c.NodeBits)
	switch {
	case c.NodeBits < 0 || c.NodeBits > maxNodeBits:
		return fmt.Errorf("nodeid: node bits %d outside 0..%d", c.NodeBits, maxNodeBits)
	case !c.Site.IsZero() && c.StartAhead:
		return fmt.Errorf("nodeid: %s: start ahead is refused in a site: a release of the site that cannot reach it covers no more than %s past the clock", c.Site, SiteMaxBehind)
	case !c.Site.IsZero() && c.MaxBehind > SiteMaxBehind:
		return fmt.Errorf("nodeid: %s: max behind %s over %s, the most a site allows", c.Site, c.MaxBehind, SiteMaxBehind)
	case !c.Site.IsZero() && CheckSiteName(c.Site.Name) != nil:
		return CheckSiteName(c.Site.Name)
	case !c.Site.IsZero() && (c.Site.Count == 0 || c.Site.First >= pool || c.Site.Count > pool-c.Site.First):
		return fmt.Errorf("nodeid: %s: nodes %d and %d after it are outside the pool of %d", c.Site, c.Site.First, c.Site.Count, pool)
	case c.Node != nil && *c.Node >= pool:
		return &NodeRangeError{Node: *c.Node, Pool: pool, Layout: c.Layout.Description}
	case c.Node != nil && !c.Site.IsZero() && !c.Site.Holds(*c.Node):
		return &NodeRangeError{Node: *c.Node, Pool: c.Site.First + c.Site.Count, First: c.Site.First, Layout: SiteLayout(c.Layout, c.Site).Description}
	case c.TTL < MinTTL || c.TTL > MaxTTL:
		return fmt.Errorf("nodeid: TTL %s outside %s to %s", c.TTL, MinTTL, MaxTTL)
	case c.Window < 10*time.Millisecond:
		return fmt.Errorf("nodeid: window %s under 10ms", c.Window)
	case c.Window > MaxWindow:
		return fmt.Errorf("nodeid: window %s over %s", c.Window, MaxWindow)
	case c.MaxBehind <= c.Window:
		return fmt.Errorf("nodeid: max behind %s must exceed the window %s", c.MaxBehind, c.Window)
	case c.Tick < 0 || c.Tick%time.Millisecond != 0:
		return fmt.Errorf("nodeid: tick %s is not a whole number of milliseconds", c.Tick)
	case c.Layout.Fingerprint == "":
		return errors.New("nodeid: no layout fingerprint")
	}
	return c.Layout.Check()
}

// Lease is a node ID held by this process, with its HWM kept ahead of the
// generator it drives. It satisfies snowflake.Reservation.
type Lease struct {
	store Store
	cfg   Config
	claim Claim

	limit    atomic.Int64 // confirmed HWM, Unix ms
	limitMu  sync.Mutex   // serializes raises of limit with freezing it
	frozen   bool         // the lease ended: limit never rises again
	start    int64        // the HWM stored when the node was taken
	genNow   atomic.Pointer[func() int64]
	renewals atomic.Int64
	// renewed is when the last confirmed renewal was sent (Unix ns).
	renewed atomic.Int64
	// renewErr is the last renewal's error while renewals fail; nil once
	// one is confirmed.
	renewErr atomic.Pointer[error]
	skipped  []*BehindHWMError
	// confirmedAt is when the first extension was sent: the claim lives
	// at least a TTL past it.
	confirmedAt time.Time

	done chan struct{}
	stop chan struct{}
	// stopCtx ends with stop: a renewal in flight is cut short by Close,
	// rather than holding it for the renewal's whole deadline.
	stopCtx    context.Context
	cancelStop context.CancelFunc
	halting    sync.Once
	errMu      sync.Mutex
	err        error
	wg         sync.WaitGroup
	closing    sync.Once
	closed     error
}

// reserve checks the clock against the stored HWM and makes the first
// extension, so a new lease is ready to serve.
func (l *Lease) reserve(ctx context.Context) error {
	wall := wallMS()
	l.confirmedAt = time.Now()
	l.renewed.Store(l.confirmedAt.UnixNano())
	// In milliseconds: a Duration of an HWM centuries ahead would wrap.
	if behind := l.start - wall; behind > l.cfg.MaxBehind.Milliseconds() && !l.cfg.StartAhead {
		return &BehindHWMError{Node: l.claim.Node, HWM: time.UnixMilli(l.start), Now: time.UnixMilli(wall), InSite: !l.cfg.Site.IsZero()}
	}
	return l.extend(ctx)
}

// now returns the generator's time once bound; before, the time it will
// start at: the wall clock, or the stored HWM if that is later.
func (l *Lease) now() int64 {
	if f := l.genNow.Load(); f != nil {
		return (*f)()
	}
	return max(wallMS(), l.start)
}

// extend renews the claim and raises the HWM to the generator's time plus
// the window. The limit moves only to what the store confirmed, and not
// at all once the lease has ended.
func (l *Lease) extend(ctx context.Context) error {
	target := alignUp(l.now()+l.cfg.Window.Milliseconds(), l.cfg.Epoch.UnixMilli(), l.cfg.Tick.Milliseconds())
	stored, err := l.store.Renew(ctx, l.claim, target)
	l.renewals.Add(1)
	if err != nil {
		return err // the store's, which names the node
	}
	l.limitMu.Lock()
	defer l.limitMu.Unlock()
	if l.frozen {
		return fmt.Errorf("renew node %d: %w: the answer came after the lease ended", l.claim.Node, ErrLeaseLost)
	}
	if stored > l.limit.Load() {
		l.limit.Store(stored)
	}
	return nil
}

// alignUp rounds ms up to the next epoch + k·tick (tick in ms; 1 or
// less: no rounding), saturating at the largest millisecond.
func alignUp(ms, epoch, tick int64) int64 {
	if tick <= 1 || ms <= epoch {
		return ms
	}
	// ms > epoch, so the difference fits in a uint64 whatever the two.
	r := int64((uint64(ms) - uint64(epoch)) % uint64(tick))
	switch {
	case r == 0:
		return ms
	case ms > math.MaxInt64-(tick-r):
		return math.MaxInt64
	}
	return ms + tick - r
}

// freeze fixes the limit where it is: whatever answer arrives later, the
// generator never issues past it.
func (l *Lease) freeze() {
	l.limitMu.Lock()
	l.frozen = true
	l.limitMu.Unlock()
}

// interval is how often the lease renews: often enough that the HWM stays
// ahead by more than half the window, and the claim is renewed three
// times per TTL.
func (l *Lease) interval() time.Duration { return min(l.cfg.TTL/3, l.cfg.Window/3) }

// run extends the lease every interval until Close, or until it is lost:
// the store says another owner holds the node, or no renewal sent in the
// last TTL was confirmed. Loss is declared on time even while a renewal
// is still waiting for its answer.
func (l *Lease) run(lastOK time.Time) {
	defer l.wg.Done()
	every := l.interval()
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
		}
		sent := time.Now()
		err := l.renewOnce(every, lastOK.Add(l.cfg.TTL))
		if err != nil && !errors.Is(err, errStopped) {
			l.renewErr.Store(&err)
		}
		switch {
		case err == nil:
			lastOK = sent
			l.renewed.Store(sent.UnixNano())
			l.renewErr.Store(nil)
		case errors.Is(err, errStopped):
			return
		case errors.Is(err, ErrLeaseLost):
			l.fail(err)
			return
		case time.Since(lastOK) >= l.cfg.TTL:
			l.fail(fmt.Errorf("%w: no renewal confirmed for %s: %w", ErrLeaseLost, time.Since(lastOK).Round(time.Millisecond), err))
			return
		}
	}
}

// errStopped ends a renewal that Close interrupted.
var errStopped = errors.New("nodeid: lease closing")

// minRenewDeadline is the shortest deadline a renewal gets: a lease of a
// window of a few milliseconds renews that often, and a store that
// answers in more than a third of it (a remote database, an fsync) would
// otherwise never confirm one.
const minRenewDeadline = 100 * time.Millisecond

// renewOnce extends the lease with a deadline of every (at least
// minRenewDeadline), and stops waiting for the answer at lostAt, when the
// claim may have expired: the lease is then declared lost and frozen, so
// an answer that comes later cannot raise its limit.
func (l *Lease) renewOnce(every time.Duration, lostAt time.Time) error {
	ctx, cancel := context.WithTimeout(l.stopCtx, max(every, minRenewDeadline))
	answer := make(chan error, 1)
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		defer cancel()
		answer <- l.extend(ctx)
	}()
	expiry := time.NewTimer(time.Until(lostAt))
	defer expiry.Stop()
	select {
	case err := <-answer:
		return err
	case <-expiry.C:
		return errors.New("no answer before the claim's TTL ran out")
	case <-l.stop:
		return errStopped
	}
}

func (l *Lease) fail(err error) {
	l.freeze()
	l.errMu.Lock()
	if l.err == nil {
		l.err = err
		close(l.done)
	}
	l.errMu.Unlock()
}

// Node returns the node ID held.
func (l *Lease) Node() uint64 { return l.claim.Node }

// Token returns the token that fences this acquisition's writes.
func (l *Lease) Token() string { return l.claim.Token }

// TTL returns how long the claim lives without a renewal as the store
// granted it: etcd may grant more than was asked (about 1.5 times its
// election timeout at least).
func (l *Lease) TTL() time.Duration {
	if l.claim.TTL > 0 {
		return l.claim.TTL
	}
	return l.cfg.TTL
}

// Done is closed when the lease is lost or closed.
func (l *Lease) Done() <-chan struct{} { return l.done }

// Err returns why the lease ended: nil while it holds, ErrLeaseLost
// (wrapped with the cause) or ErrClosed after.
func (l *Lease) Err() error {
	l.errMu.Lock()
	defer l.errMu.Unlock()
	return l.err
}

// RenewalError returns the error of the last renewal while renewals
// fail — a store that does not answer, say — and nil once one is
// confirmed again. The lease holds until Err says otherwise: the
// generator serves up to its HWM, then waits.
func (l *Lease) RenewalError() error {
	if p := l.renewErr.Load(); p != nil {
		return *p
	}
	return nil
}

// Renewals returns how many store writes the lease has made.
func (l *Lease) Renewals() int64 { return l.renewals.Load() }

// Renewed returns when the last renewal the store confirmed was sent (the
// first extension's, before any renewal): the claim lives at least a TTL
// past it. Zero before the lease is reserved.
func (l *Lease) Renewed() time.Time {
	if ns := l.renewed.Load(); ns != 0 {
		return time.Unix(0, ns)
	}
	return time.Time{}
}

// BindGenerator attaches the lease to one generator, whose clock it then extends
// the HWM from. A second BindGenerator returns an error: two generators on one
// lease would both pass its HWM check.
func (l *Lease) BindGenerator(clock func() int64) error {
	if !l.genNow.CompareAndSwap(nil, &clock) {
		return ErrAlreadyBound
	}
	return nil
}

// LayoutFingerprint returns the fingerprint of the layout the lease was
// taken for (Config.Layout): snowflake.New refuses a generator of another
// layout over it.
func (l *Lease) LayoutFingerprint() string { return l.cfg.Layout.Fingerprint }

// Start returns the HWM stored when the node was taken (Unix ms): the
// generator starts at or after it.
func (l *Lease) Start() int64 { return l.start }

// Limit returns the HWM the store last confirmed (Unix ms, exclusive).
func (l *Lease) Limit() int64 { return l.limit.Load() }

// Skipped returns the free nodes Acquire passed over, in the order it
// tried them, because their stored HWM was further ahead of the clock
// than Config.MaxBehind.
func (l *Lease) Skipped() []*BehindHWMError { return slices.Clone(l.skipped) }

// Close stops renewing and releases the node; the HWM stays. It is
// idempotent and waits for the background loop. A lost lease is released
// too, by its own token: the store may still hold a claim this process
// gave up (etcd restores every lease to a full TTL when it elects a new
// leader), and the release frees it for the next acquisition; if another
// owner took the node meanwhile, the release changes nothing. Release
// waits at most one TTL even if ctx has no deadline: by then the claim
// has expired anyway.
func (l *Lease) Close(ctx context.Context) error {
	l.closing.Do(func() {
		l.halt()
		if _, ok := ctx.Deadline(); !ok {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, l.cfg.TTL)
			defer cancel()
		}
		l.closed = l.store.Release(ctx, l.claim)
	})
	return l.closed
}

// halt stops renewing, cutting short a renewal in flight, and waits for
// the background loop: the limit is frozen from then on.
func (l *Lease) halt() {
	l.halting.Do(func() {
		close(l.stop)
		l.cancelStop()
		l.wg.Wait()
		l.fail(ErrClosed)
	})
}
