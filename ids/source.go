package ids

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/oklog/ulid/v2"

	"github.com/firn-id/firn/node"
	"github.com/firn-id/firn/nodeid"
	"github.com/firn-id/firn/snowflake"
	"github.com/firn-id/firn/wide"
)

// DefaultWait bounds a call's wait for a node when its context has no
// deadline: above the default TTL, so that a node freed by a killed
// process's lease running out is taken within one call.
const DefaultWait = 15 * time.Second

// Options configures a Source. The zero value is the safe default but for
// Namespace, which Open and FromDB require.
type Options struct {
	// Namespace names the ID space in the store, in the store's own
	// terms: a name in a SQL store's node table ("orders"), a key prefix
	// in etcd ("/firn/orders/"), a path in ZooKeeper ("/firn/orders").
	// Every process of one namespace shares its pool of nodes and must
	// use one layout. New takes the namespace its store was built with
	// and uses this one only to name it in messages.
	Namespace string
	// Layout is the layout of the IDs; the zero Layout is the "firn"
	// preset (snowflake.DefaultLayout).
	Layout snowflake.Layout
	// TTL is how long the lease outlives its last renewal: how long the
	// node of a process killed without Close stays taken. Default
	// nodeid.DefaultTTL (10 s), within nodeid.MinTTL and nodeid.MaxTTL.
	TTL time.Duration
	// Window is how far ahead of the clock the lease reserves; the lease
	// is renewed every third of the shorter of Window and TTL. Default
	// nodeid.DefaultWindow (3 s): a renewal a second. A longer window
	// renews less often — a fleet of N processes costs its store
	// N × 3 / min(Window, TTL) operations a second — and issues longer
	// through a store outage; a process restarted within it starts up to
	// a window ahead of the clock, its IDs carrying that later time. At
	// least 10 ms, at most nodeid.MaxWindow.
	Window time.Duration
	// Wait bounds a call's wait for a node when its context has no
	// deadline. Default DefaultWait.
	Wait time.Duration
	// DialTimeout bounds Open's first connection to the store. Default
	// store.DefaultDialTimeout (5 s).
	DialTimeout time.Duration
	// Reserved lists node values never taken (as firn serve's
	// registry.reserved_nodes): those an old system's workers still hold
	// on a namespace taken over from it (docs/migration.md). Every
	// process of the namespace must list them.
	Reserved []uint64
	// Log receives what the source logs: waits for a node, a lost lease,
	// renewals failing. Default slog.Default().
	Log *slog.Logger
	// Site is the site the process belongs to, as firn serve's site
	// setting (docs/operations.md, "Several sites"): the namespace must
	// hold the site's record (firn site claim), and the source takes only
	// the site's nodes. The zero value: no site.
	Site Site
}

// Site names a site and the leading node fields it fixes, most
// significant first (datacenter=3).
type Site struct {
	Name   string
	Fields []snowflake.FieldValue
}

// nodes reads the site into the nodes it fixes in layout l.
func (s Site) nodes(l snowflake.Layout) (nodeid.Site, error) {
	if s.Name == "" && len(s.Fields) == 0 {
		return nodeid.Site{}, nil
	}
	return node.Site(l, s.Name, s.Fields)
}

// layout is the layout the options name.
func (o Options) layout() (snowflake.Layout, error) {
	l := o.Layout
	if reflect.ValueOf(l).IsZero() {
		l = snowflake.DefaultLayout()
	}
	if err := l.Validate(); err != nil {
		return l, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	if err := l.ValidateForGenerator(); err != nil {
		return l, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	if since, ok := l.ExhaustedAt(time.Now()); ok {
		return l, fmt.Errorf("%w: layout %s is exhausted since %s: its time bits ran out", ErrConfig, l.Name, since.Format(time.DateOnly))
	}
	return l, nil
}

// A Source issues IDs from a node it holds. Its methods are safe for
// concurrent use.
type Source struct {
	open opener
	cfg  node.Config // Store is set once open succeeds
	wait time.Duration
	log  *slog.Logger

	cur     atomic.Pointer[held]
	mu      sync.Mutex
	holder  *node.Holder  // nil until the store is open
	changed chan struct{} // closed and replaced when cur or failed changes
	failed  error         // why the source can never serve, once known
	why     error         // why the store is not open, or the first acquisition failed
	// closeStore closes what open opened; nil when the caller owns it.
	closeStore func() error

	// calls is held for reading by every call: Close takes it for
	// writing, so the node is released only after calls in flight
	// return.
	calls   sync.RWMutex
	closed  atomic.Bool
	stopped chan struct{} // closed by Close: waiting calls return
	// closeCtx ends when Close begins: a call waiting inside the
	// generator (for the next tick) returns too.
	closeCtx context.Context
	closeNow context.CancelFunc
	// fast says the first try of Next and NextN may run on the caller's
	// context: the generator waits at most a tick of 10 ms or less in it,
	// so Close is not held up.
	fast    bool
	stop    context.CancelFunc
	done    chan struct{} // closed when the background work ends
	closing sync.Once
	closeEr error
}

// held is a generator on the lease it holds.
type held struct {
	gen   *snowflake.Generator
	wide  *wide.Generator
	lease *nodeid.Lease
}

// opener opens the node store, and returns what closes it (nil: the
// caller's to close).
type opener func(context.Context) (nodeid.Store, func() error, error)

// start checks o and starts, in the background, opening the store and
// taking a node of it; name names the store in reasons and logs.
func start(open opener, name string, o Options) (*Source, error) {
	l, err := o.layout()
	if err != nil {
		return nil, err
	}
	lc := nodeid.Config{NodeBits: l.NodeBits(), Layout: node.LayoutID(l), TTL: o.TTL, Window: o.Window, Reserved: o.Reserved}
	if lc.Site, err = o.Site.nodes(l); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	if err := lc.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	if o.Wait < 0 {
		return nil, fmt.Errorf("%w: wait %s is negative", ErrConfig, o.Wait)
	}
	for _, v := range o.Reserved {
		if v > l.MaxNode() {
			return nil, fmt.Errorf("%w: reserved node %d is not a node of layout %s (0..%d)", ErrConfig, v, l.Name, l.MaxNode())
		}
	}
	log := cmp.Or(o.Log, slog.Default())
	ctx, stop := context.WithCancel(context.Background())
	s := &Source{open: open, wait: cmp.Or(o.Wait, DefaultWait), log: log,
		cfg: node.Config{
			Lease:     lc,
			Generator: snowflake.Config{Layout: l},
			StoreName: name,
			Log:       log,
		},
		changed: make(chan struct{}), stopped: make(chan struct{}), stop: stop, done: make(chan struct{}),
		fast: l.Tick <= 10*time.Millisecond}
	s.closeCtx, s.closeNow = context.WithCancel(context.Background())
	go s.run(ctx)
	return s, nil
}

// run opens the store, takes the first node, then watches it until
// Close. A store that does not answer, and an error Acquire returns at
// once (the store refusing a connection at its first attempt), are tried
// again with back-off, the reason kept for the calls that wait; an error
// that can never pass (another layout recorded) fails the source.
func (s *Source) run(ctx context.Context) {
	defer close(s.done)
	b := backoff{pause: 100 * time.Millisecond}
	h, err := s.openStore(ctx, &b)
	if err != nil {
		return
	}
	for {
		g, lease, err := h.Acquire(ctx)
		if err == nil {
			s.install(g, lease)
			break
		}
		if ctx.Err() != nil || errors.Is(err, node.ErrClosed) {
			return
		}
		if node.Permanent(err) {
			s.fail(err)
			return
		}
		if !b.wait(ctx, s, err) {
			return
		}
	}
	if err := h.Watch(ctx, s.install); err != nil {
		if ctx.Err() == nil {
			s.fail(err)
		}
		return
	}
	// The watch ends on its own only when a re-acquisition after a lost
	// lease meets an error that can never pass (another layout recorded
	// meanwhile): the source can then never serve again.
	select {
	case <-h.Done():
		if err := h.Err(); ctx.Err() == nil && !errors.Is(err, node.ErrClosed) {
			s.fail(err)
		}
	case <-ctx.Done():
	}
}

// openStore opens the store, trying again until ctx ends, and makes the
// holder on it.
func (s *Source) openStore(ctx context.Context, b *backoff) (*node.Holder, error) {
	for {
		nodes, closeStore, err := s.open(ctx)
		if err == nil {
			cfg := s.cfg
			cfg.Store = nodes
			h, err := node.New(cfg)
			if err != nil { // the options were checked: a bug
				s.fail(err)
				return nil, errors.Join(err, closeIf(closeStore))
			}
			s.mu.Lock()
			s.holder, s.closeStore = h, closeStore
			s.mu.Unlock()
			return h, nil
		}
		if !b.wait(ctx, s, err) {
			return nil, ctx.Err()
		}
	}
}

func closeIf(f func() error) error {
	if f == nil {
		return nil
	}
	return f()
}

// backoff spaces the background retries: doubling from pause up to 5 s.
type backoff struct{ pause time.Duration }

// wait keeps err as the reason calls wait, logs it, and waits for the
// next try; false when ctx ended first.
func (b *backoff) wait(ctx context.Context, s *Source, err error) bool {
	if ctx.Err() != nil {
		return false
	}
	s.log.Warn("ids: no node held: retrying", "why", err, "retry_in", b.pause.String())
	s.mu.Lock()
	s.why = err
	s.mu.Unlock()
	t := time.NewTimer(b.pause)
	defer t.Stop()
	b.pause = min(2*b.pause, 5*time.Second)
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// install makes g, on lease, the generator calls issue from.
func (s *Source) install(g *snowflake.Generator, lease *nodeid.Lease) {
	h := &held{gen: g, lease: lease}
	if w, err := wide.New(g); err == nil {
		h.wide = w
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cur.Store(h)
	s.why = nil
	close(s.changed)
	s.changed = make(chan struct{})
}

// fail records why the source can never serve; calls return it.
func (s *Source) fail(err error) {
	s.log.Error("ids: cannot serve", "err", err)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failed = err
	close(s.changed)
	s.changed = make(chan struct{})
}

// state is what a call waits on: the failure, the change channel.
func (s *Source) state() (chan struct{}, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.changed, s.failed
}

// Ready returns nil while the source holds a node that serves, and
// otherwise why not: a *NotReadyError, ErrClosed, or the error that
// keeps it from ever serving. It does no I/O: a readiness probe may
// call it on every request.
func (s *Source) Ready() error {
	if s.closed.Load() {
		return ErrClosed
	}
	_, failed := s.state()
	if failed != nil {
		return &FailedError{Err: failed}
	}
	if s.serving(s.cur.Load()) {
		return nil
	}
	return s.notReady(0, nil)
}

// serving reports whether h's generator can issue now: its lease holds
// and its HWM reaches past the end of the generator's current tick.
func (s *Source) serving(h *held) bool {
	if h == nil || h.lease.Err() != nil {
		return false
	}
	l := h.gen.Layout()
	end := l.Epoch.Add(h.gen.Now().Sub(l.Epoch).Truncate(l.Tick) + l.Tick)
	return h.lease.Limit() >= end.UnixMilli()
}

// Node returns the node the source holds and true, or false while it
// holds none.
func (s *Source) Node() (uint64, bool) {
	if h := s.cur.Load(); s.serving(h) {
		return h.gen.Node(), true
	}
	return 0, false
}

// Layout is the layout of the source's IDs.
func (s *Source) Layout() snowflake.Layout { return s.cfg.Generator.Layout }

// notReady says why no node serves, after waiting waited.
func (s *Source) notReady(waited time.Duration, ctxErr error) error {
	e := &NotReadyError{Waited: waited, ctxErr: ctxErr}
	s.mu.Lock()
	why, h := s.why, s.holder
	s.mu.Unlock()
	var hw error
	if h != nil {
		hw = h.NotReady()
	}
	if hw != nil {
		e.Reason, e.cause = hw.Error(), errors.Unwrap(hw)
	} else if c := s.cur.Load(); c != nil && c.lease.Err() == nil {
		// A node is held, but its generator reached the HWM: the
		// renewals that move it on have not landed.
		e.Reason = fmt.Sprintf("node %d reached its high-water mark, which its lease's next renewal moves on", c.gen.Node())
		if rerr := c.lease.RenewalError(); rerr != nil {
			e.Reason, e.cause = fmt.Sprintf("node %d reached its high-water mark: renewals of its lease failing: %v", c.gen.Node(), rerr), rerr
		}
	} else if why != nil {
		e.Reason, e.cause = why.Error(), why
	} else {
		e.Reason = "taking a node"
	}
	return e
}

// enter admits a call, or returns ErrClosed; leave ends it.
func (s *Source) enter() error {
	if s.closed.Load() { // never wait for a Close in progress
		return ErrClosed
	}
	s.calls.RLock()
	if s.closed.Load() {
		s.calls.RUnlock()
		return ErrClosed
	}
	return nil
}

func (s *Source) leave() { s.calls.RUnlock() }

// await runs draw on the generator held, waiting, while none serves, for
// one to, for ctx or Options.Wait, or for Close. draw reports whether it
// wrote anything; its error is returned unless it says only that the
// generator is not serving. The caller has entered.
func (s *Source) await(ctx context.Context, draw func(context.Context, *held) (bool, error)) error {
	start := time.Now()
	// Close cuts short a call waiting inside the generator (for the next
	// tick) as it does one waiting for a node.
	ctx, cancelCall := context.WithCancel(ctx)
	defer cancelCall()
	defer context.AfterFunc(s.closeCtx, cancelCall)()
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, s.wait)
		defer cancel()
	}
	for {
		changed, failed := s.state()
		if failed != nil {
			return &FailedError{Err: failed}
		}
		retry := changed
		if h := s.cur.Load(); h != nil {
			wrote, err := draw(ctx, h)
			switch {
			case wrote || err == nil:
				return nil
			case s.closed.Load():
				return ErrClosed
			case !errors.Is(err, snowflake.ErrNotServing):
				return fmt.Errorf("ids: %w", err)
			case h.lease.Err() == nil:
				// The lease holds: its next renewal moves the HWM on.
				retry = nil
			}
		}
		var tick <-chan time.Time
		if retry == nil {
			tick = time.After(time.Millisecond)
		}
		select {
		case <-retry:
		case <-tick:
		case <-s.stopped:
			return ErrClosed
		case <-ctx.Done():
			return s.notReady(time.Since(start), ctx.Err())
		}
	}
}

// served reports whether a first try's err ends the call: nil, or an
// error other than the generator not serving, which it returns wrapped.
func served(err error) (bool, error) {
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, snowflake.ErrNotServing):
		return false, nil
	}
	return true, fmt.Errorf("ids: %w", err)
}

// Next returns a new ID. While no node serves it waits (see the package
// documentation), then returns a *NotReadyError.
func (s *Source) Next(ctx context.Context) (int64, error) {
	if err := s.enter(); err != nil {
		return 0, err
	}
	defer s.leave()
	// The first try costs what the generator's Next costs: no context, no
	// lock of the source's.
	if h := s.cur.Load(); h != nil && s.fast {
		id, err := h.gen.Next(ctx)
		if done, err := served(err); done {
			return id, err
		}
	}
	var id int64
	err := s.await(ctx, func(ctx context.Context, h *held) (bool, error) {
		var err error
		id, err = h.gen.Next(ctx)
		return false, err
	})
	return id, err
}

// NextN fills dst with new IDs and returns how many it wrote: len(dst),
// or fewer when the generator stopped part way (its HWM, the end of
// ctx), with no error if it wrote any. Use them before asking again.
func (s *Source) NextN(ctx context.Context, dst []int64) (int, error) {
	if err := s.enter(); err != nil {
		return 0, err
	}
	defer s.leave()
	if h := s.cur.Load(); h != nil && s.fast {
		n, err := h.gen.NextN(ctx, dst)
		if done, err := served(err); done || n > 0 {
			if n > 0 {
				err = nil
			}
			return n, err
		}
	}
	var n int
	err := s.await(ctx, func(ctx context.Context, h *held) (bool, error) {
		var err error
		n, err = h.gen.NextN(ctx, dst)
		return n > 0, err
	})
	return n, err
}

// NextUUID returns a new UUIDv7 carrying a slot of the generator (package
// wide); a layout whose time reaches past UUIDv7's 48-bit milliseconds
// returns wide.ErrTimeRange.
func (s *Source) NextUUID(ctx context.Context) (uuid.UUID, error) {
	if err := s.enter(); err != nil {
		return uuid.UUID{}, err
	}
	defer s.leave()
	var u uuid.UUID
	err := s.await(ctx, func(ctx context.Context, h *held) (bool, error) {
		if h.wide == nil {
			return false, wide.ErrTimeRange
		}
		var err error
		u, err = h.wide.NextUUID(ctx)
		return false, err
	})
	return u, err
}

// NextULID returns a new ULID carrying a slot of the generator, as
// NextUUID does.
func (s *Source) NextULID(ctx context.Context) (ulid.ULID, error) {
	if err := s.enter(); err != nil {
		return ulid.ULID{}, err
	}
	defer s.leave()
	var u ulid.ULID
	err := s.await(ctx, func(ctx context.Context, h *held) (bool, error) {
		if h.wide == nil {
			return false, wide.ErrTimeRange
		}
		var err error
		u, err = h.wide.NextULID(ctx)
		return false, err
	})
	return u, err
}

// Close makes waiting calls return ErrClosed, waits for calls in flight,
// stops the background work and releases the node, which another process
// may then take at once (its HWM stays). Then it closes the store Open
// opened; a *sql.DB given to FromDB stays the caller's. ctx bounds
// Close, which without a deadline waits at most about one TTL; when ctx
// ends first, Close returns its error and the release goes on in the
// background. Close is idempotent.
func (s *Source) Close(ctx context.Context) error {
	s.closing.Do(func() {
		s.closed.Store(true)
		close(s.stopped)
		s.closeNow()
		// Every call in flight has returned once the lock is taken; a
		// call that comes later sees closed and never takes it.
		s.calls.Lock()
		defer s.calls.Unlock()
		s.stop()
		finish := func(ctx context.Context) error {
			s.mu.Lock()
			h, closeStore := s.holder, s.closeStore
			s.mu.Unlock()
			var err error
			if h != nil {
				err = h.Close(ctx)
			}
			return errors.Join(err, closeIf(closeStore))
		}
		select {
		case <-s.done: // no acquisition, watch or open runs
			s.closeEr = finish(ctx)
		case <-ctx.Done():
			// An acquisition that was stopped may still be releasing a
			// claim on a store that does not answer: it ends on its own
			// within seconds, and the rest follows it.
			go func() {
				<-s.done
				_ = finish(context.WithoutCancel(ctx))
			}()
			s.closeEr = fmt.Errorf("ids: close: %w: a release to the store still in flight ends on its own", context.Cause(ctx))
		}
	})
	return s.closeEr
}
