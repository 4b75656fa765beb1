package client

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"
)

// chunk is one fetched batch, handed out from pos on.
type chunk struct {
	ids   []int64
	pos   atomic.Int64
	stop  atomic.Int64 // the refill mark, where taking an ID asks for a refill; len(ids): none
	stale atomic.Bool  // a snowflake chunk past MaxAge: its IDs are dropped
	timer *time.Timer  // sets stale
}

func newChunk(ids []int64) *chunk {
	c := &chunk{ids: ids}
	c.stop.Store(int64(len(ids)))
	return c
}

// spent reports whether no ID can be taken from c.
func (c *chunk) spent() bool { return c.pos.Load() >= int64(len(c.ids)) || c.stale.Load() }

// left is how many IDs c still holds (stale or not).
func (c *chunk) left() int { return max(0, len(c.ids)-int(c.pos.Load())) }

// buffer holds the IDs of one mode or tag: the chunk being taken from, and
// the chunks fetched after it. Taking an ID is two atomic operations; the
// mutex guards the queue and the refills.
type buffer struct {
	c   *Client
	tag string // empty: snowflake
	cur atomic.Pointer[chunk]

	invalid error // set at creation: every call returns it

	mu          sync.Mutex
	closed      bool
	queue       []*chunk
	queued      int           // IDs in queue
	inflight    int           // refill requests running
	inflightIDs int           // IDs they asked for
	filling     bool          // refilling up to size, since the level fell below the mark
	changed     chan struct{} // closed and replaced on every refill's end
	err         error         // the last refill's error; nil after a success
	lastFail    *Error        // the last failed request since a refill brought IDs
	retryAt     time.Time     // no refill before this, after an error
	wait        time.Duration // the next pause after an error
	size        int           // the target in IDs, following the rate
	rate        float64       // IDs taken per second, smoothed
	rateAt      time.Time
	rateTaken   uint64

	refills, fetched, dropped, errors uint64
}

// init readies a zero buffer in place. Client and Tag hold their buffer
// by value: one dependent load fewer on every Next.
func (b *buffer) init(c *Client, tag string) {
	b.c, b.tag, b.changed, b.size, b.wait, b.rateAt = c, tag, make(chan struct{}), c.cfg.Buffer, c.cfg.Backoff, time.Now()
	b.cur.Store(newChunk(nil))
}

// next takes one ID. An index inside the current chunk is the caller's
// alone to serve, stale or not: expire ends a chunk by moving its
// position past the end.
func (b *buffer) next(ctx context.Context) (int64, error) {
	c := b.cur.Load()
	i := c.pos.Add(1) - 1
	if i < c.stop.Load() {
		return c.ids[i], nil
	}
	return b.slow(ctx, c, i)
}

// slow finishes a next whose index i of c is at or past the refill mark.
func (b *buffer) slow(ctx context.Context, c *chunk, i int64) (int64, error) {
	for {
		if uint64(i) < uint64(len(c.ids)) {
			if i == c.stop.Load() {
				b.kick()
			}
			return c.ids[i], nil
		}
		if err := b.advance(ctx); err != nil {
			return 0, err
		}
		c = b.cur.Load()
		i = c.pos.Add(1) - 1
	}
}

// nextN fills dst, from memory while the buffer holds IDs.
func (b *buffer) nextN(ctx context.Context, dst []int64) (int, error) {
	n := 0
	for n < len(dst) {
		c := b.cur.Load()
		want := int64(len(dst) - n)
		end := c.pos.Add(want)
		i := end - want
		if i < int64(len(c.ids)) {
			j := min(end, int64(len(c.ids)))
			copy(dst[n:], c.ids[i:j])
			if m := c.stop.Load(); i <= m && m < j {
				b.kick()
			}
			n += int(j - i)
			continue
		}
		if err := b.advance(ctx); err != nil {
			return n, err
		}
	}
	return n, nil
}

// advance replaces a spent current chunk with the next fresh one, waiting
// for a refill when none is buffered. It returns nil when an ID may be
// taken, or the refill's error once a refill failed.
func (b *buffer) advance(ctx context.Context) error {
	for {
		b.mu.Lock()
		if b.closed {
			b.mu.Unlock()
			if b.invalid != nil {
				return b.invalid
			}
			return ErrClosed
		}
		if c := b.cur.Load(); !c.spent() {
			b.mu.Unlock()
			return nil
		}
		b.retire(b.cur.Load())
		installed := b.install()
		b.refillLocked()
		if installed {
			b.mu.Unlock()
			return nil
		}
		if b.inflight == 0 && b.err != nil {
			err := b.err
			b.mu.Unlock()
			return err
		}
		ch := b.changed
		b.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			b.mu.Lock()
			last := b.lastFail
			b.mu.Unlock()
			return waited(ctx.Err(), last)
		}
	}
}

// retire stops a spent chunk's timer; expire counted its stale IDs.
func (b *buffer) retire(c *chunk) {
	if c.timer != nil {
		c.timer.Stop()
	}
}

// install makes the first fresh chunk of the queue current, and reports
// whether there was one.
func (b *buffer) install() bool {
	for len(b.queue) > 0 {
		c := b.queue[0]
		b.queue[0] = nil
		b.queue = b.queue[1:]
		b.queued -= len(c.ids)
		if c.stale.Load() {
			b.retire(c)
			continue
		}
		b.cur.Store(c)
		b.rearm()
		return true
	}
	return false
}

// low is the level below which a refill starts.
func (b *buffer) low() int { return int(float64(b.size) * b.c.cfg.Refill) }

// level is how many fresh IDs are buffered or asked for.
func (b *buffer) level() int {
	n := b.queued + b.inflightIDs
	if c := b.cur.Load(); !c.stale.Load() {
		n += c.left()
	}
	return n
}

// kick starts a refill if the level asks for one, or else moves the
// current chunk's mark to where it will (the size may have shrunk since
// the mark was set).
func (b *buffer) kick() {
	b.mu.Lock()
	b.refillLocked()
	b.rearm()
	b.mu.Unlock()
}

// rearm sets the current chunk's mark: taking index i leaves len-1-i IDs
// in it, so the mark is the first index not yet taken whose taking leaves
// the level at or below low. No mark (len(ids)) while a refill is under
// way: its end looks at the level again. The mark never passes len(ids):
// next serves every index below it without a bounds check of its own.
func (b *buffer) rearm() {
	c := b.cur.Load()
	stop := int64(len(c.ids))
	if low := b.low() - b.queued; low >= 0 && !b.filling && b.inflight == 0 && !c.stale.Load() {
		stop = min(stop, max(c.pos.Load(), stop-1-int64(low)))
	}
	c.stop.Store(stop)
}

// refillLocked starts refill requests: once the level is at or below the
// low mark, up to size, with at most Parallel requests in flight.
func (b *buffer) refillLocked() {
	if b.closed || time.Now().Before(b.retryAt) {
		return
	}
	b.measure()
	level := b.level()
	if level <= b.low() {
		b.filling = true
	}
	for b.filling && b.inflight < b.c.cfg.Parallel {
		if level >= b.size {
			b.filling = false
			return
		}
		n := min(b.c.cfg.MaxBatch, b.size-level)
		b.inflight++
		b.inflightIDs += n
		level += n
		b.err = nil
		b.c.wg.Add(1)
		go b.fetch(n)
	}
}

// measure updates the rate at which IDs are taken and the size that
// follows from it: what lasts cfg.Ahead, between Buffer and MaxBuffer.
func (b *buffer) measure() {
	now := time.Now()
	dt := now.Sub(b.rateAt)
	if dt < b.c.cfg.Ahead/4 {
		return
	}
	taken := b.fetched - b.dropped - uint64(b.cur.Load().left()+b.queued)
	r := 0.0
	if taken > b.rateTaken {
		r = float64(taken-b.rateTaken) / dt.Seconds()
	}
	w := min(1, dt.Seconds()/(4*b.c.cfg.Ahead).Seconds())
	b.rate = w*r + (1-w)*b.rate
	b.rateAt, b.rateTaken = now, taken
	b.size = min(b.c.cfg.MaxBuffer, max(b.c.cfg.Buffer, int(b.rate*b.c.cfg.Ahead.Seconds())))
}

// fetch runs one refill of n IDs.
func (b *buffer) fetch(n int) {
	defer b.c.wg.Done()
	ids, sent, err := b.c.pool.batch(b.c.ctx, b.tag, n, b.late, b.failed)
	b.mu.Lock()
	defer b.mu.Unlock()
	b.inflight--
	b.inflightIDs -= n
	b.wake()
	if b.closed {
		return
	}
	if err != nil {
		b.errors++
		b.err = err
		// The refill's error is its last failure, retryable or not.
		if e := (*Error)(nil); errors.As(err, &e) {
			b.lastFail = e
		}
		b.filling = false
		b.retryAt = time.Now().Add(b.wait)
		time.AfterFunc(b.wait, b.kick) // try again in the background
		b.wait = min(2*b.wait, b.c.cfg.MaxBackoff)
		return
	}
	b.wait = b.c.cfg.Backoff
	b.err = nil
	b.lastFail = nil
	b.add(ids, sent)
	b.refillLocked()
	b.rearm()
}

// late queues the IDs of a request that answered after another request of
// its refill won (a hedge): the server issued them for this client alone.
func (b *buffer) late(ids []int64, sent time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return
	}
	b.lastFail = nil
	b.add(ids, sent)
	b.wake()
	b.rearm()
}

// failed records a refill's request that failed, for a call whose
// context ends while it waits (waited).
func (b *buffer) failed(e *Error) {
	b.mu.Lock()
	b.lastFail = e
	b.mu.Unlock()
}

// add queues a fetched batch; a snowflake batch goes stale MaxAge after
// its request was sent.
func (b *buffer) add(ids []int64, sent time.Time) {
	b.refills++
	b.fetched += uint64(len(ids))
	c := newChunk(ids)
	if b.tag == "" {
		c.timer = time.AfterFunc(b.c.cfg.MaxAge-time.Since(sent), func() { b.expire(c) })
	}
	b.queue = append(b.queue, c)
	b.queued += len(ids)
}

// wake lets the callers waiting on the buffer look again.
func (b *buffer) wake() {
	close(b.changed)
	b.changed = make(chan struct{})
}

// expire marks a snowflake chunk stale and, if IDs are still being taken,
// refills what it held.
func (b *buffer) expire(c *chunk) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return
	}
	// Moving the position past the end is the one step that stops
	// takers: an index reserved before it is served (it was fresh a
	// moment ago), none after it is inside the chunk, and the swap's old
	// value counts exactly the IDs no one reserved.
	c.stale.Store(true)
	for i, q := range b.queue {
		if q == c {
			b.queue = append(b.queue[:i], b.queue[i+1:]...)
			b.queued -= len(c.ids)
			break
		}
	}
	b.dropped += uint64(max(0, int64(len(c.ids))-c.pos.Swap(int64(len(c.ids)))))
	b.measure()
	if b.rate > 0 {
		b.refillLocked()
	}
}

// close stops the buffer: later calls return ErrClosed. Buffered IDs are
// dropped.
func (b *buffer) close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	spent := newChunk(nil)
	if c := b.cur.Swap(spent); c.timer != nil {
		c.timer.Stop()
	}
	for _, c := range b.queue {
		if c.timer != nil {
			c.timer.Stop()
		}
	}
	b.queue, b.queued = nil, 0
	b.wake()
}

// BufferStats describes one buffer.
type BufferStats struct {
	// Tag is the segment tag, or empty for snowflake IDs.
	Tag string
	// Buffered is how many IDs are in memory now.
	Buffered int
	// Size is the level refills aim for, following the rate.
	Size int
	// Rate is the observed rate of IDs taken, per second.
	Rate float64
	// Refills counts refill requests that succeeded; Fetched the IDs they
	// brought; Dropped the snowflake IDs dropped past MaxAge; Errors the
	// refills that failed on every server tried.
	Refills, Fetched, Dropped, Errors uint64
}

func (b *buffer) stats() BufferStats {
	b.mu.Lock()
	defer b.mu.Unlock()
	return BufferStats{Tag: b.tag, Buffered: b.cur.Load().left() + b.queued, Size: b.size, Rate: b.rate,
		Refills: b.refills, Fetched: b.fetched, Dropped: b.dropped, Errors: b.errors}
}
