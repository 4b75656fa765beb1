package client

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// answer is what one request to one server brought.
type answer struct {
	e    *endpoint
	ids  []int64
	sent time.Time
	err  error
}

// request is one request of a refill to one server.
type request struct {
	e   *endpoint
	due time.Time // the end of its hedge budget
	// state: 0 running, 1 past its hedge budget (counted in e.stalled),
	// 2 answered.
	state atomic.Int32
}

// stall counts r in its server's stalled requests, unless it was
// answered meanwhile.
func (r *request) stall() {
	r.e.stalled.Add(1)
	if !r.state.CompareAndSwap(0, 1) {
		r.e.stalled.Add(-1)
	}
}

// answered ends r's count in its server's figures.
func (r *request) answered() {
	r.e.inflight.Add(-1)
	if r.state.Swap(2) == 1 {
		r.e.stalled.Add(-1)
	}
}

// refill is one batch of IDs asked of the pool: its requests, and the
// answers they send back while the refill waits for them.
type refill struct {
	p      *pool
	ctx    context.Context
	tag    string
	n      int
	late   func(ids []int64, sent time.Time)
	failed func(*Error)

	mu      sync.Mutex
	done    bool
	answers chan answer

	used    []*endpoint
	running []*request
}

// batch fetches n IDs (snowflake if tag is empty) and returns them with
// the time their request was sent, by the package's rules: a server
// picked by latency, a hedge past pool.budget, a failed server marked
// down and the next tried at once, a pause growing from Backoff once
// every server failed. A request still out when another won hands its
// fresh IDs to late: the server issued them for that request alone. Each
// request that fails while the refill waits is handed to failed (a late
// answer's failure is not: the refill is over). When all fail, the
// *Error names every server tried.
func (p *pool) batch(ctx context.Context, tag string, n int, late func(ids []int64, sent time.Time), failed func(*Error)) ([]int64, time.Time, error) {
	r := &refill{p: p, ctx: ctx, tag: tag, n: n, late: late, failed: failed, answers: make(chan answer, 2*p.attempts)}
	defer r.finish()
	var tried []*Error
	wait := p.backoff
	var hedge *time.Timer
	var hedgeC <-chan time.Time
	arm := func(q *request) {
		if hedge != nil {
			hedge.Stop()
		}
		hedge = time.NewTimer(time.Until(q.due))
		hedgeC = hedge.C
	}
	defer func() {
		if hedge != nil {
			hedge.Stop()
		}
	}()
	q, err := r.start(p.pick(r.isUsed, r.isRunning, false))
	if err != nil {
		return nil, time.Time{}, err
	}
	arm(q)
	for {
		select {
		case a := <-r.answers:
			r.remove(a.e)
			err := p.judge(a, tag)
			if err == nil {
				return a.ids, a.sent, nil
			}
			if !retryable(err) {
				return nil, a.sent, err
			}
			ae := asError(err, a.e.name)
			tried = append(tried, ae)
			failed(ae)
			if len(r.running) > 0 {
				// The other request may still answer; if it is past its
				// budget, a hedge goes out at once.
				if q := r.running[0]; time.Now().After(q.due) {
					if q, ok := r.hedge(); ok {
						arm(q)
					}
				}
				continue
			}
			if len(r.used) >= p.attempts {
				return nil, a.sent, unavailable(tried)
			}
			if len(r.used)%len(p.eps) == 0 {
				if err := sleep(ctx, p.done, wait); err != nil {
					return nil, a.sent, err
				}
				wait = min(2*wait, p.maxWait)
			}
			p.failovers.Add(1)
			q, err := r.start(p.pick(r.isUsed, r.isRunning, false))
			if err != nil {
				return nil, a.sent, err
			}
			arm(q)
		case <-hedgeC:
			hedgeC = nil
			if len(r.running) == 1 {
				if q, ok := r.hedge(); ok {
					arm(q)
				}
			}
		case <-ctx.Done():
			return nil, time.Time{}, ctx.Err()
		case <-p.done:
			return nil, time.Time{}, ErrClosed
		}
	}
}

// hedge sends a request to another healthy server while the one running
// is past its budget, if the refill has attempts left and such a server
// exists. The running request counts as slowness of its server unless it
// is the tag's first on it.
func (r *refill) hedge() (*request, bool) {
	if len(r.used) >= r.p.attempts {
		return nil, false
	}
	e := r.p.pick(r.isUsed, r.isRunning, true)
	if e == nil {
		return nil, false
	}
	if slow := r.running[0]; slow.e.isWarm(r.tag) {
		slow.stall()
		slow.e.slow.Add(1)
	}
	r.p.hedges.Add(1)
	q, err := r.start(e)
	return q, err == nil
}

// start sends a request to e.
func (r *refill) start(e *endpoint) (*request, error) {
	q := &request{e: e, due: time.Now().Add(r.p.budget(e, r.tag))}
	e.inflight.Add(1)
	r.used = append(r.used, e)
	r.running = append(r.running, q)
	if !r.p.spawn(func() { r.send(q) }) {
		q.answered()
		return nil, ErrClosed
	}
	return q, nil
}

// send makes one request and hands its answer to the refill, or, once
// the refill is over, settles it alone.
func (r *refill) send(q *request) {
	sent := time.Now()
	ctx, cancel := context.WithTimeout(r.ctx, r.p.timeout)
	ids, err := batchOf(ctx, q.e.t, r.tag, r.n)
	err = r.p.timedOut(r.ctx, ctx, err, q.e.name)
	cancel()
	q.answered()
	a := answer{e: q.e, ids: ids, sent: sent, err: err}
	r.mu.Lock()
	if !r.done {
		r.answers <- a
		r.mu.Unlock()
		return
	}
	r.mu.Unlock()
	r.settle(a)
}

// finish ends the refill: answers that arrive later, and those already
// sent back and not read, are settled alone.
func (r *refill) finish() {
	r.mu.Lock()
	r.done = true
	r.mu.Unlock()
	for {
		select {
		case a := <-r.answers:
			r.settle(a)
		default:
			return
		}
	}
}

// settle judges an answer that came after the refill was over: its
// server's figures count it, and its IDs go to late if fresh, or are
// dropped (never reissued: no other request gets them).
func (r *refill) settle(a answer) {
	if r.p.judge(a, r.tag) == nil && r.ctx.Err() == nil {
		r.late(a.ids, a.sent)
	}
}

func (r *refill) remove(e *endpoint) {
	r.running = slices.DeleteFunc(r.running, func(q *request) bool { return q.e == e })
}

func (r *refill) isUsed(e *endpoint) bool { return slices.Contains(r.used, e) }

func (r *refill) isRunning(e *endpoint) bool {
	return slices.ContainsFunc(r.running, func(q *request) bool { return q.e == e })
}

// judge returns nil for an answer whose IDs may be served, and counts it
// in its server's latency. A failure the service caused, or a snowflake
// answer as old as MaxAge, counts against the server and marks it down;
// a tag's first answer from a server (which may have waited for the
// store's first range) is never counted as slowness.
func (p *pool) judge(a answer, tag string) error {
	if a.err != nil {
		if retryable(a.err) {
			a.e.failures.Add(1)
			p.markDown(a.e)
		}
		return a.err
	}
	age := time.Since(a.sent)
	if tag == "" && age >= p.maxAge {
		a.e.failures.Add(1)
		a.e.slow.Add(1)
		p.markDown(a.e)
		return &Error{Kind: ErrUnavailable, Endpoint: a.e.name, Code: "too_slow",
			Message: fmt.Sprintf("the answer took %s, at least MaxAge (%s): its snowflake IDs are too old to serve", age.Round(time.Millisecond), p.maxAge)}
	}
	if a.e.isWarm(tag) {
		a.e.observe(age)
	} else {
		a.e.warm.Store(tag, struct{}{})
	}
	return nil
}

// timedOut is err of a request that ctx, its own timeout (Config.Timeout),
// ended while parent had not, before any answer: said as such, where the
// transport's "context deadline exceeded" reads as the caller's deadline.
func (p *pool) timedOut(parent, ctx context.Context, err error, endpoint string) error {
	if err == nil || parent.Err() != nil || !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return err
	}
	if e := (*Error)(nil); errors.As(err, &e) && e.Code != "transport" { // the server answered
		return err
	}
	return &Error{Kind: ErrUnavailable, Endpoint: endpoint, Code: "transport", Message: fmt.Sprintf("no answer within %s (Config.Timeout)", p.timeout)}
}

// waited is the error of a call whose context ended (err) while it waited
// on its buffer's refills: err alone, or err and last, the last failed
// request of those refills since one brought IDs, so that a deadline still
// names the server and why. errors.Is holds for both.
func waited(err error, last *Error) error {
	if last != nil {
		return fmt.Errorf("%w, the last failure: %w", err, last)
	}
	return err
}

// asError is err as an *Error naming the server it came from.
func asError(err error, endpoint string) *Error {
	var e *Error
	if errors.As(err, &e) {
		if e.Endpoint == "" {
			c := *e
			c.Endpoint = endpoint
			return &c
		}
		return e
	}
	return &Error{Kind: ErrUnavailable, Endpoint: endpoint, Code: "transport", Message: err.Error()}
}

// unavailable is the error of a refill every server failed: the last
// server's answer, with every server tried and why.
func unavailable(tried []*Error) error {
	last := *tried[len(tried)-1]
	last.Kind = ErrUnavailable
	last.Tried = tried
	return &last
}
