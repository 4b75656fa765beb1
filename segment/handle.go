package segment

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// fetchesAhead is how many fetch latencies of IDs, at the observed rate, a
// range must still hold when the next one is fetched.
const fetchesAhead = 3

// buffer is one reserved range being handed out.
type buffer struct {
	pos     atomic.Int64 // the next ID; runs past end once used up
	asked   atomic.Bool  // the next range was asked for
	start   int64
	end     int64
	delta   int64
	trigger int64 // fetch the next range once pos reaches it
	since   time.Time
}

func (b *buffer) size() int64 { return Range{Start: b.start, End: b.end, Delta: b.delta}.Len() }

// bounds returns the range the buffer hands out.
func (b *buffer) bounds() Range { return Range{Start: b.start, End: b.end, Delta: b.delta} }

// left returns the IDs not yet handed out.
func (b *buffer) left() int64 {
	if p := b.pos.Load(); p < b.end {
		return (b.end - p + b.delta - 1) / b.delta
	}
	return 0
}

// Handle serves one tag. Get it from Allocator.Tag and keep it in hot
// loops. It is safe for concurrent use.
type Handle struct {
	a         *Allocator
	tag       string
	cur       atomic.Pointer[buffer]
	contended atomic.Bool
	cmu       sync.Mutex // queues colliding callers; see Next
	quiet     int        // guarded by cmu

	mu       sync.Mutex
	next     *buffer       // fetched, not yet in use
	fetching bool          // one fetch in flight at most
	ready    chan struct{} // closed when the fetch in flight ends
	step     int64         // the step of the next fetch
	base     int64         // the tag's configured step: the least step
	latency  time.Duration // recent fetch latency
	fetched  time.Time     // when the last range arrived
	lastErr  error
	retryAt  atomic.Int64 // Unix ns before which a failed prefetch is not retried
	backoff  time.Duration
	fetches  atomic.Int64
	failures atomic.Int64

	perm     Permutation // nil: plain IDs
	recorded string      // Recorded(perm): what every range must record
}

func newHandle(a *Allocator, tag string, step int64) *Handle {
	step = min(max(step, 1), StepLimit) // a row written before the bound may hold more
	h := &Handle{a: a, tag: tag, step: min(step, a.cfg.MaxStep), base: step}
	h.cur.Store(emptyBuffer())
	return h
}

// emptyBuffer is a buffer with no ID: a call on it takes the slow path.
func emptyBuffer() *buffer {
	b := &buffer{delta: 1, since: time.Now()}
	b.asked.Store(true) // an empty buffer is refilled by the slow path
	return b
}

// drop ends the handle's ranges at Close: the current one is replaced by
// an empty buffer, so that later calls take the slow path and get
// ErrClosed, and the one fetched ahead is let go. A caller that loaded
// the current range before may still take an ID of it: a range's IDs are
// each taken once, whoever takes them.
func (h *Handle) drop() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.cur.Store(emptyBuffer())
	h.next = nil
}

// Next returns a new ID of the handle's tag.
//
// Uncontended, a call is one compare-and-swap on the range's position.
// When callers on several cores collide, they queue on a mutex around the
// same step (contended mode), so the position's cache line stops moving
// between cores on every ID; a run of calls that find the mutex free
// switches back.
func (h *Handle) Next(ctx context.Context) (int64, error) {
	if !h.contended.Load() {
		b := h.cur.Load()
		if p := b.pos.Load(); p < b.end {
			if b.pos.CompareAndSwap(p, p+b.delta) {
				if p >= b.trigger && !b.asked.Load() {
					h.prefetch(b)
				}
				if h.perm != nil {
					return h.conceal(p)
				}
				return p, nil
			}
			h.contended.Store(true)
		}
	}
	for {
		b := h.cur.Load()
		id := h.take(b)
		if id < b.end {
			if id >= b.trigger && !b.asked.Load() {
				h.prefetch(b)
			}
			if h.perm != nil {
				return h.conceal(id)
			}
			return id, nil
		}
		if err := h.refill(ctx, b); err != nil {
			return 0, err
		}
	}
}

// conceal returns id's image under the tag's permutation. An ID outside
// the permutation's space (the allocator's bound prevents it) fails: no
// plain ID of an opaque tag leaves the handle.
func (h *Handle) conceal(id int64) (int64, error) {
	y, err := h.perm.Encode(uint64(id))
	if err != nil {
		return 0, &TagError{Tag: h.tag, Err: fmt.Errorf("opaque ID of %d: %w", id, err)}
	}
	return int64(y), nil
}

// quietRun is how many calls in a row must find the mutex free before
// contended mode ends.
const quietRun = 4096

// take adds one step to b's position, under the contention mutex while in
// contended mode, and returns the ID taken, or a position at or past
// b.end once b is used up. The mutex is never held while waiting for the
// store.
func (h *Handle) take(b *buffer) int64 {
	if !h.contended.Load() {
		return b.claim()
	}
	if h.cmu.TryLock() {
		h.quiet++
		if h.quiet >= quietRun {
			h.quiet = 0
			h.contended.Store(false)
		}
	} else {
		h.cmu.Lock()
		h.quiet = 0
	}
	id := b.claim()
	h.cmu.Unlock()
	return id
}

// claim moves b's position by one step and returns the ID it passed, or
// the position unmoved once it is at or past b.end. A used-up buffer's
// position never moves again, so no pattern of calls can carry it past
// b.end+b.delta (at most MaxEnd+MaxDelta) and wrap it.
func (b *buffer) claim() int64 {
	for {
		p := b.pos.Load()
		if p >= b.end || b.pos.CompareAndSwap(p, p+b.delta) {
			return p
		}
	}
}

// claimN moves b's position past up to want IDs, as many as b has left,
// and returns the first and how many: 0 once b is used up. Like claim, it
// never moves the position past b.end+b.delta.
func (b *buffer) claimN(want int64) (first, got int64) {
	for {
		p := b.pos.Load()
		if p >= b.end {
			return p, 0
		}
		got = min(want, (b.end-p+b.delta-1)/b.delta)
		if b.pos.CompareAndSwap(p, p+got*b.delta) {
			return p, got
		}
	}
}

// NextN fills dst with new IDs, in increasing order (for an opaque tag,
// their images); a batch may span ranges. It returns the number written:
// len(dst), or fewer with an error.
func (h *Handle) NextN(ctx context.Context, dst []int64) (int, error) {
	n, err := h.nextN(ctx, dst)
	if h.perm != nil && n > 0 {
		if perr := h.perm.EncodeN(dst[:n]); perr != nil {
			return 0, &TagError{Tag: h.tag, Err: fmt.Errorf("opaque IDs: %w", perr)}
		}
	}
	return n, err
}

func (h *Handle) nextN(ctx context.Context, dst []int64) (int, error) {
	n := 0
	for n < len(dst) {
		b := h.cur.Load()
		if p, got := b.claimN(int64(len(dst) - n)); got > 0 {
			for i := range got {
				dst[n+int(i)] = p + i*b.delta
			}
			n += int(got)
			if p+got*b.delta > b.trigger && !b.asked.Load() {
				h.prefetch(b)
			}
			continue
		}
		if err := h.refill(ctx, b); err != nil {
			return n, err
		}
	}
	return n, nil
}

// prefetch asks for the next range once per buffer, unless a failed fetch
// is backing off.
func (h *Handle) prefetch(b *buffer) {
	if at := h.retryAt.Load(); at != 0 && time.Now().UnixNano() < at {
		return
	}
	if !b.asked.CompareAndSwap(false, true) {
		return
	}
	h.mu.Lock()
	if h.next == nil && !h.fetching {
		h.startFetch()
	}
	h.mu.Unlock()
}

// refill waits until a buffer other than old is current: it installs a
// fetched range, or starts a fetch — after the backoff of a failed one —
// and waits up to MaxWait for it.
func (h *Handle) refill(ctx context.Context, old *buffer) error {
	wait := h.a.cfg.MaxWait
	first := h.fetches.Load() == 0 && h.failures.Load() == 0
	if first {
		wait = max(wait, h.a.cfg.FirstWait) // the tag's first range, while no fetch has failed
	}
	begun := time.Now()
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	for {
		if first && h.failures.Load() > 0 {
			// The store answered: no longer a slow first range. Looked at
			// on every turn, however this caller woke (a caller that only
			// ever met the shared retry time waited FirstWait).
			first = false
			deadline.Reset(max(0, min(time.Until(begun.Add(wait)), h.a.cfg.MaxWait)))
		}
		h.mu.Lock()
		var wake <-chan struct{}
		var backoff *time.Timer
		switch {
		case h.cur.Load() != old:
			h.mu.Unlock()
			return nil
		case h.a.closed.Load():
			// Closed: nothing more is installed, not even a range fetched
			// before Close (drop emptied the current one).
			h.mu.Unlock()
			return ErrClosed
		case h.next != nil:
			h.install(old, h.next)
			h.next = nil
			h.mu.Unlock()
			return nil
		case h.fetching:
			wake = h.ready
		case errors.Is(h.lastErr, ErrExhausted) && exhaustedFor(h.retryAt.Load()):
			// The store answered that the counter cannot move: said at
			// once, not as unavailable after MaxWait. It is asked again
			// once the retry time has passed (a counter set back by hand,
			// another store of a set that answers again).
			err := h.lastErr
			h.mu.Unlock()
			return &TagError{Tag: h.tag, Err: err}
		default:
			// A caller with empty buffers retries sooner than prefetches
			// do: every half MaxWait at most, one fetch at a time.
			if at := h.retryAt.Load(); at != 0 && time.Now().UnixNano() < at {
				// One shared, earlier retry time: the first caller to
				// wake after it starts the fetch, the others wait on it.
				soon := time.Now().Add(max(h.a.cfg.MaxWait/2, time.Millisecond)).UnixNano()
				if soon < at {
					h.retryAt.Store(soon)
					at = soon
				}
				backoff = time.NewTimer(time.Until(time.Unix(0, at)))
			} else if h.startFetch() {
				wake = h.ready
			} else {
				h.mu.Unlock()
				return ErrClosed
			}
		}
		lastErr := h.lastErr
		h.mu.Unlock()
		var retry <-chan time.Time
		if backoff != nil {
			retry = backoff.C
		}
		select {
		case <-wake:
		case <-retry:
		case <-ctx.Done():
			stop(backoff)
			return ctx.Err()
		case <-deadline.C:
			stop(backoff)
			if lastErr != nil {
				return &TagError{Tag: h.tag, Err: Errorf(ErrUnavailable, ": %w", lastErr)}
			}
			return &TagError{Tag: h.tag, Err: ErrUnavailable}
		}
		stop(backoff)
	}
}

// maxBackoff is the longest pause after failed fetches.
const maxBackoff = 5 * time.Second

// exhaustedFor reports whether the retry time at (Unix ns) after an
// exhausted answer is still ahead: at most maxBackoff ahead, so that a
// wall clock set back cannot keep a tag exhausted for the size of the
// step.
func exhaustedFor(at int64) bool {
	ahead := at - time.Now().UnixNano()
	return ahead > 0 && ahead <= int64(maxBackoff)
}

func stop(t *time.Timer) {
	if t != nil {
		t.Stop()
	}
}

// install makes nb current in place of old, adapting the step to how long
// old lasted. Called with h.mu held.
func (h *Handle) install(old, nb *buffer) {
	now := time.Now()
	if old.size() > 0 {
		lasted := now.Sub(old.since)
		rate := float64(old.size()) / max(lasted.Seconds(), 1e-9)
		top := max(h.a.cfg.MaxStep, h.base)
		switch {
		case lasted < h.a.cfg.Period:
			h.step = min(h.step*2, top)
		case lasted > 2*h.a.cfg.Period:
			h.step = max(h.step/2, h.base)
		}
		nb.trigger = h.triggerFor(nb, rate)
	}
	nb.since = now
	h.cur.Store(nb)
}

// triggerFor places the fetch point of b: when Threshold of it is left,
// or when what is left would last less than the pause budget, or fewer
// than fetchesAhead fetch latencies, at rate IDs per second, whichever
// comes first.
func (h *Handle) triggerFor(b *buffer, rate float64) int64 {
	size := float64(b.size())
	keep := max(size*h.a.cfg.Threshold, rate*h.a.cfg.Budget.Seconds(), rate*fetchesAhead*h.latency.Seconds())
	if keep >= size {
		return b.start
	}
	return max(b.start, b.end-int64(keep)*b.delta)
}

// startFetch starts the one fetch of the tag, unless the allocator is
// closed: Close waits for every fetch started, so none may start once it
// has begun to wait. Called with h.mu held.
func (h *Handle) startFetch() bool {
	a := h.a
	a.fetchMu.Lock()
	defer a.fetchMu.Unlock()
	if a.closed.Load() {
		return false
	}
	a.wg.Add(1)
	h.fetching = true
	h.ready = make(chan struct{})
	go h.fetch(h.step)
	return true
}

func (h *Handle) fetch(step int64) {
	defer h.a.wg.Done()
	ctx, cancel := context.WithTimeout(h.a.ctx, h.a.cfg.FetchTimeout)
	start := time.Now()
	r, err := h.a.store.Reserve(ctx, h.tag, step)
	cancel()
	lat := time.Since(start)
	if err == nil {
		if cerr := r.Check(); cerr != nil {
			err = fmt.Errorf("store returned %w", cerr)
		}
	}
	if err == nil {
		err = CheckPermutation(h.tag, r.Opaque, h.perm)
	}
	if err == nil {
		r, err = h.bound(r)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.fetching = false
	close(h.ready)
	if err != nil {
		h.failures.Add(1)
		h.lastErr = err
		h.backoff = min(max(2*h.backoff, 50*time.Millisecond), maxBackoff)
		h.retryAt.Store(time.Now().Add(h.backoff).UnixNano())
		h.cur.Load().asked.Store(false) // a later call past the trigger retries
		return
	}
	if h.fetches.Add(1) == 1 {
		h.latency = lat
	} else {
		h.latency = (h.latency + lat) / 2
	}
	h.lastErr, h.backoff = nil, 0
	h.fetched = time.Now()
	h.retryAt.Store(0)
	if rs := min(r.Step, StepLimit); rs > 0 && rs != h.base {
		// The tag's step was changed in the store: it is the new floor.
		h.base = rs
		h.step = max(h.step, rs)
	}
	nb := &buffer{start: r.Start, end: r.End, delta: r.Delta}
	nb.pos.Store(r.Start)
	nb.trigger = h.triggerFor(nb, 0)
	h.next = nb
}

// bound cuts r at the tag's Config.MaxID: a range past it issues nothing.
func (h *Handle) bound(r Range) (Range, error) {
	if h.a.cfg.MaxID == nil {
		return r, nil
	}
	max := h.a.cfg.MaxID(h.tag)
	switch {
	case max <= 0 || r.End-1 <= max: // End > Start >= 0: no overflow
		return r, nil
	case r.Start > max:
		return r, Errorf(ErrExhausted, ": the next range starts at %d, past %d, the largest ID this tag may issue", r.Start, max)
	}
	r.End = max + 1 // max < End-1: no overflow
	return r, nil
}

// Stats returns the tag's buffer state.
func (h *Handle) Stats() Stats {
	h.mu.Lock()
	defer h.mu.Unlock()
	cur := h.cur.Load()
	s := Stats{Tag: h.tag, Step: h.step, ConfiguredStep: h.base, Left: cur.left(), Fetches: h.fetches.Load(), Errors: h.failures.Load(),
		Current: cur.bounds(), Latency: h.latency, Fetched: h.fetched, Err: h.lastErr}
	if h.next != nil {
		s.Prefetched = h.next.left()
		s.Next = h.next.bounds()
	}
	return s
}
