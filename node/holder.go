package node

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/firn-id/firn/nodeid"
	"github.com/firn-id/firn/snowflake"
)

// DefaultAttempt bounds one acquisition attempt unless Config.Attempt
// says otherwise.
const DefaultAttempt = 10 * time.Second

// WatchEvery is how often a watching Holder looks whether its lease's
// renewals fail, to log when they start failing and when they are
// confirmed again.
const WatchEvery = 500 * time.Millisecond

// Config configures a Holder. Store is required; every other field's zero
// value means its default.
type Config struct {
	// Store is where nodes are claimed.
	Store nodeid.Store
	// Lease configures every acquisition, as for nodeid.Acquire; its Tick
	// and Epoch are set to the generator's layout's, and for a layout of
	// long ticks its MaxBehind and the generator's MaxStartAhead grow
	// (fitTicks).
	Lease nodeid.Config
	// Generator configures every generator. Node and Reservation are set
	// to each lease's; StartAhead is set when Lease.StartAhead is. The
	// zero Layout is snowflake's default, which Lease.Layout must name.
	Generator snowflake.Config
	// Check runs on every new generator before it is handed out — at the
	// first acquisition and at every one after a lost lease — and refuses
	// it with an error (a migration floor the first ID would not exceed,
	// say). A refused generator never serves and its node is released; the
	// first Acquire returns the error, a holder re-acquiring after a lost
	// lease logs it and keeps waiting. Nil checks nothing.
	Check func(*snowflake.Generator) error
	// Attempt bounds each acquisition attempt, the store's answers
	// included. Default DefaultAttempt.
	Attempt time.Duration
	// StoreName names the store in reasons and logs (`etcd namespace
	// "/firn/"`), never a DSN or credentials.
	StoreName string
	// Log receives what the holder logs: waits, a lost lease, renewals
	// failing and confirmed again. Default slog.Default().
	Log *slog.Logger
}

// Holder holds one node at a time and keeps a checked generator on it
// for the caller's servers, through lost leases, until Close. Its methods
// are safe for concurrent use.
type Holder struct {
	cfg Config
	log *slog.Logger
	why atomic.Pointer[waitError] // nil while not waiting

	// logged and loggedAt are the last wait logged: the same reason is
	// logged again only after logEvery, not on every retry. Acquire and
	// then the watch loop use them, one after the other.
	logged   string
	loggedAt time.Time

	mu       sync.Mutex
	lease    *nodeid.Lease // the current lease; nil before Acquire
	acquired bool
	watching bool
	closed   bool
	// cancel ends the watch's context: Close cuts short a retirement or
	// re-acquisition in flight.
	cancel context.CancelFunc

	stopped context.Context // ended by Close
	stop    context.CancelFunc
	revoked atomic.Pointer[error] // set by Revoke: no node is taken again
	done    chan struct{}         // closed when the holder ends
	errMu   sync.Mutex
	err     error
	wg      sync.WaitGroup
	closing sync.Once
	closeEr error
}

// New validates cfg and returns a holder. It does no I/O and starts no
// goroutines.
func New(cfg Config) (*Holder, error) {
	switch {
	case cfg.Store == nil:
		return nil, fmt.Errorf("%w: no store", ErrConfig)
	case cfg.Attempt < 0:
		return nil, fmt.Errorf("%w: attempt bound %s is negative", ErrConfig, cfg.Attempt)
	}
	if cfg.Attempt == 0 {
		cfg.Attempt = DefaultAttempt
	}
	cfg.Lease, cfg.Generator = fitTicks(cfg.Lease, cfg.Generator)
	if cfg.StoreName == "" {
		cfg.StoreName = "the node store"
	}
	log := cfg.Log
	if log == nil {
		log = slog.Default()
	}
	stopped, stop := context.WithCancel(context.Background())
	return &Holder{cfg: cfg, log: log, stopped: stopped, stop: stop, done: make(chan struct{})}, nil
}

// NotReady returns why no node is held, or nil. It does no I/O: a
// readiness probe may call it on every request. The error unwraps to the
// failure waited on, so a caller that must not show a store's own
// message to anyone who asks (an open /readyz) can tell what kind of
// failure it was.
func (h *Holder) NotReady() error {
	if why := h.why.Load(); why != nil {
		return why
	}
	return nil
}

// waitError is NotReady's error: the reason, with the failure under it.
type waitError struct {
	why string
	err error
}

func (e *waitError) Error() string { return e.why }

func (e *waitError) Unwrap() error { return e.err }

func (h *Holder) waiting(why string, err error) { h.why.Store(&waitError{why: why, err: err}) }

// Acquire takes a node and returns a generator on it that passed
// Config.Check, with its lease. While none can be taken for a reason
// time may cure (no free node, the node asked for held, the store not
// answering, every free node ahead of the clock) it waits and tries
// again, NotReady saying why; any other error, Check's included, and
// the end of ctx are returned. Close ends an acquisition in flight with
// ErrClosed, releasing a node it took meanwhile. ctx bounds the
// acquisition only: the lease lives until Close. A holder acquires once.
func (h *Holder) Acquire(ctx context.Context) (*snowflake.Generator, *nodeid.Lease, error) {
	h.mu.Lock()
	switch {
	case h.closed:
		h.mu.Unlock()
		return nil, nil, ErrClosed
	case h.acquired:
		h.mu.Unlock()
		return nil, nil, ErrAcquired
	}
	h.acquired = true
	h.mu.Unlock()
	// Close ends the acquisition too: it finds nothing to release, so a
	// wait left running would claim a node, and hold it, after Close
	// returned.
	actx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(h.stopped, cancel)()
	lease, g, err := h.acquire(actx, false)
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		// Close came first and found nothing to release.
		err = ErrClosed
		if lease != nil {
			err = errors.Join(err, lease.Close(context.WithoutCancel(ctx)))
		}
	}
	if err != nil {
		h.acquired = false
		return nil, nil, err
	}
	h.lease = lease
	return g, lease, nil
}

// Watch watches the lease Acquire took, in the background, until ctx
// ends or Close. It logs when renewals start failing (the generator
// serves up to its HWM, then stops) and when they are confirmed again.
// When the lease is lost, its generator stops at the HWM the store last
// confirmed; Watch retires the lease — a lost lease is never revived —
// and acquires again with a new claim, perhaps of another node, waiting
// as Acquire does whatever the error, NotReady saying why. The new
// generator passes Config.Check before replace receives it with its
// lease; replace installs it in the caller's servers (server.Server's
// Replace) and must not block.
//
// The end of ctx ends the watch (Done, and Err says why) but releases
// nothing: the servers may still be finishing requests on the
// generator. Close releases the lease.
func (h *Holder) Watch(ctx context.Context, replace func(*snowflake.Generator, *nodeid.Lease)) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case h.closed:
		return ErrClosed
	case h.lease == nil:
		return ErrNotHeld
	case h.watching:
		return ErrWatching
	}
	h.watching = true
	wctx, cancel := context.WithCancel(ctx)
	h.cancel = cancel
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		defer cancel()
		err := h.watch(wctx, replace)
		select {
		case <-h.stopped.Done():
			err = ErrClosed // Close cancelled wctx
		default:
		}
		h.end(err)
	}()
	return nil
}

// watch is Watch's loop; it returns why it ended.
func (h *Holder) watch(ctx context.Context, replace func(*snowflake.Generator, *nodeid.Lease)) error {
	tick := time.NewTicker(WatchEvery)
	defer tick.Stop()
	var renewing error
	for {
		lease := h.current()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-h.stopped.Done():
			return ErrClosed
		case <-tick.C:
			renewing = h.noteRenewals(lease, renewing)
		case <-lease.Done():
			if err := h.replaceLost(ctx, lease, replace); err != nil {
				return err
			}
			renewing = nil
		}
	}
}

// noteRenewals logs when lease's renewals start failing, and when they
// are confirmed again; it returns the renewal error now.
func (h *Holder) noteRenewals(lease *nodeid.Lease, before error) error {
	if lease.Err() != nil {
		return before // the loss is logged by replaceLost
	}
	err := lease.RenewalError()
	switch {
	case err != nil && before == nil:
		h.log.Warn("lease renewals failing: IDs are served up to the HWM, then the node reports not ready", "node", lease.Node(),
			"store", h.cfg.StoreName, "hwm_ahead", (time.Duration(lease.Limit()-time.Now().UnixMilli()) * time.Millisecond).String(), "err", err)
	case err == nil && before != nil:
		h.log.Info("lease renewals confirmed again", "node", lease.Node())
	}
	return err
}

// Revoke ends the holder's service for good, with err as the reason
// NotReady gives: the lease is closed (its generator stops at its
// confirmed HWM, its claim is released) and no node is taken again. For a
// site whose claim in the ledger now names another site or registry
// (site.Watch); the holder revokes itself when a lost lease's registry
// says the same (its value released, another site's) or no longer takes
// this process's claims. The watch ends with err.
func (h *Holder) Revoke(err error) {
	if !h.revoked.CompareAndSwap(nil, &err) {
		return
	}
	h.log.Error("stopped issuing for good: no node is taken again", "err", err)
	h.waiting(err.Error()+": stopped issuing for good", err)
	if l := h.current(); l != nil {
		ctx, cancel := context.WithTimeout(context.Background(), cleanupRelease)
		defer cancel()
		_ = l.Close(ctx) // frozen at once; a release that fails is waited out by the store
	}
}

// Revoked returns why the holder stopped issuing for good (Revoke), or
// nil while it has not.
func (h *Holder) Revoked() error {
	if err := h.revoked.Load(); err != nil {
		return *err
	}
	return nil
}

// cleanupRelease bounds Revoke's release of the lease.
const cleanupRelease = 2 * time.Second

// replaceLost retires a lost lease and installs a new one. The old
// generator stops at its frozen HWM and readiness fails meanwhile. The
// lost claim is released (or waited out), never revived; then a node is
// taken again with a new claim (perhaps another node), and its generator,
// checked, replaces the old one. It returns an error only when ctx ends.
func (h *Holder) replaceLost(ctx context.Context, lost *nodeid.Lease, replace func(*snowflake.Generator, *nodeid.Lease)) error {
	if err := h.revoked.Load(); err != nil {
		return *err
	}
	if err := h.siteEnded(ctx); err != nil {
		h.Revoke(err) // the site's value was released or taken: not an outage to wait out
		return err
	}
	h.log.Error("lease lost: acquiring a node again", "node", lost.Node(), "lease", lost.Token(), "err", lost.Err())
	h.waiting(fmt.Sprintf("node %d (lease %s): %s; acquiring a node again", lost.Node(), lost.Token(), lost.Err()), lost.Err())
	if err := lost.Retire(ctx); err != nil && ctx.Err() == nil {
		h.log.Warn("the lost claim was not released: waited for it to expire", "node", lost.Node(), "err", err)
	}
	next, g, err := h.acquire(ctx, true)
	if err != nil && ctx.Err() == nil && Permanent(err) {
		h.Revoke(err) // the namespace refuses this process from now on
		return err
	}
	if err != nil {
		// Only the end of ctx stops a re-acquisition; err is the last
		// attempt's, and Err promises the watch's context error.
		return cmp.Or(ctx.Err(), err)
	}
	h.mu.Lock()
	h.lease = next // Close releases it, whenever it comes
	closed := h.closed
	h.mu.Unlock()
	if closed {
		return ErrClosed // the servers stopped: nothing to hand it to
	}
	if err := h.revoked.Load(); err != nil {
		cctx, cancel := context.WithTimeout(context.Background(), cleanupRelease)
		defer cancel()
		_ = next.Close(cctx)
		return *err
	}
	replace(g, next)
	h.log.Info("serving again", "node", next.Node(), "lease", next.Token())
	return nil
}

// siteEnded is why a site whose lease was lost must stop for good — its
// registry's record says the value was released, or is another site's
// — or nil: no site, a record that stands, or one that could not be read
// (an outage, which the acquisition waits out).
func (h *Holder) siteEnded(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, h.cfg.Attempt)
	defer cancel()
	if err := nodeid.CheckSiteClaim(ctx, h.cfg.Store, h.cfg.Lease); Permanent(err) {
		return err
	}
	return nil
}

func (h *Holder) current() *nodeid.Lease {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.lease
}

// end records why the holder ended, once, and closes Done.
func (h *Holder) end(err error) {
	h.errMu.Lock()
	defer h.errMu.Unlock()
	if h.err == nil {
		h.err = err
		close(h.done)
	}
}

// Done is closed when the holder ends: its watch ended with the context
// given to Watch, or Close was called.
func (h *Holder) Done() <-chan struct{} { return h.done }

// Err returns why the holder ended: nil while it runs, the watch's
// context error, or ErrClosed.
func (h *Holder) Err() error {
	h.errMu.Lock()
	defer h.errMu.Unlock()
	return h.err
}

// Close stops the watch, cutting short a re-acquisition in flight, waits
// for it, and releases the lease held (the HWM stays). Call it only after
// the servers that issue from the generator have stopped: the node is
// free for another process once released. A lost claim that could not be
// released is not a failure of Close: it expires by itself within its TTL
// (it is logged). Close is idempotent; without a deadline in ctx the
// release waits at most one TTL.
func (h *Holder) Close(ctx context.Context) error {
	h.closing.Do(func() {
		h.mu.Lock()
		h.closed = true
		h.stop() // before cancel: the watch ends with ErrClosed
		if h.cancel != nil {
			h.cancel()
		}
		h.mu.Unlock()
		h.wg.Wait()
		h.end(ErrClosed)
		lease := h.current()
		if lease == nil {
			return
		}
		err := lease.Close(ctx)
		if err != nil && errors.Is(lease.Err(), nodeid.ErrLeaseLost) {
			h.log.Warn("stopping: the lost claim was not released; it expires by itself", "node", lease.Node(), "err", err)
			err = nil
		}
		h.closeEr = err
	})
	return h.closeEr
}
