package client

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// endpoint is one server and what the client knows of its health.
type endpoint struct {
	name     string
	t        transport
	down     atomic.Bool
	failures atomic.Uint64
}

// pool spreads calls over the healthy endpoints and fails over between
// them. An endpoint whose call failed is down: skipped until a health
// check in the background finds it ready again.
type pool struct {
	eps      []*endpoint
	timeout  time.Duration // one attempt
	attempts int           // per call, across endpoints
	backoff  time.Duration // before each round after the first, doubling
	maxWait  time.Duration // cap of the backoff
	every    time.Duration // health checks of down endpoints

	rr        atomic.Uint32
	failovers atomic.Uint64
	probing   atomic.Bool
	wg        sync.WaitGroup
	done      chan struct{} // closed by close
}

// pick returns the endpoint for attempt: the healthy ones in turn, or when
// none is healthy, every one in turn (one of them may be back before its
// health check says so).
func (p *pool) pick(start uint32, attempt int) *endpoint {
	n := uint32(len(p.eps))
	for i := range n {
		e := p.eps[(start+uint32(attempt)+i)%n]
		if !e.down.Load() {
			return e
		}
	}
	return p.eps[(start+uint32(attempt))%n]
}

// batch fetches n IDs (snowflake if tag is empty) from a healthy server,
// retrying on another after a failure the service caused, up to attempts,
// with a growing pause after every round of all servers. It returns when
// the request that succeeded was sent.
func (p *pool) batch(ctx context.Context, tag string, n int) (ids []int64, sent time.Time, err error) {
	start := p.rr.Add(1)
	var last error
	wait := p.backoff
	for attempt := range p.attempts {
		if attempt > 0 {
			p.failovers.Add(1)
			if attempt%len(p.eps) == 0 {
				if err := sleep(ctx, p.done, wait); err != nil {
					return nil, sent, err
				}
				wait = min(2*wait, p.maxWait)
			}
		}
		e := p.pick(start, attempt)
		sent = time.Now()
		actx, cancel := context.WithTimeout(ctx, p.timeout)
		ids, err := e.t.batch(actx, tag, n)
		cancel()
		if err == nil {
			return ids, sent, nil
		}
		if ctx.Err() != nil {
			return nil, sent, ctx.Err()
		}
		if !retryable(err) {
			return nil, sent, err
		}
		e.failures.Add(1)
		p.markDown(e)
		last = err
	}
	return nil, sent, last
}

// markDown takes e out of rotation and makes sure a health check runs.
func (p *pool) markDown(e *endpoint) {
	e.down.Store(true)
	if p.probing.CompareAndSwap(false, true) {
		p.wg.Add(1)
		go p.probe()
	}
}

// probe checks the down endpoints every p.every until none is down.
func (p *pool) probe() {
	defer p.wg.Done()
	t := time.NewTicker(p.every)
	defer t.Stop()
	for {
		select {
		case <-p.done:
			return
		case <-t.C:
		}
		anyDown := false
		for _, e := range p.eps {
			if !e.down.Load() {
				continue
			}
			ctx, cancel := context.WithTimeout(context.Background(), p.timeout)
			err := e.t.check(ctx)
			cancel()
			if err == nil {
				e.down.Store(false)
			} else {
				anyDown = true
			}
		}
		if !anyDown {
			p.probing.Store(false)
			// An endpoint marked down after the scan and before the flag
			// was cleared would have found probing set: look once more.
			if !p.anyDown() || !p.probing.CompareAndSwap(false, true) {
				return
			}
		}
	}
}

func (p *pool) anyDown() bool {
	for _, e := range p.eps {
		if e.down.Load() {
			return true
		}
	}
	return false
}

func (p *pool) close() error {
	close(p.done)
	p.wg.Wait()
	var first error
	for _, e := range p.eps {
		if err := e.t.close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// sleep waits d, or returns early with ctx's error or ErrClosed.
func sleep(ctx context.Context, done <-chan struct{}, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-done:
		return ErrClosed
	}
}
