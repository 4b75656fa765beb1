package client

import (
	"context"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"
)

// endpoint is one server and what the client knows of it: whether it is
// down, how fast it answers, and what it has in flight.
type endpoint struct {
	name     string
	t        transport
	down     atomic.Bool
	failures atomic.Uint64
	slow     atomic.Uint64 // answers too old to serve, and hedges it caused
	latency  atomic.Int64  // smoothed time of its answers, ns; 0: none yet
	measured atomic.Int64  // when latency last took a sample, Unix ns
	inflight atomic.Int32  // requests to it not answered yet
	stalled  atomic.Int32  // of those, the ones past their hedge budget
	probing  atomic.Bool   // a health check loop runs for it
	warm     sync.Map      // tag → struct{}: tags it has answered once
}

// isWarm reports whether e has answered a request of tag. Snowflake
// requests are always warm: a server is ready only once its generator is.
func (e *endpoint) isWarm(tag string) bool {
	if tag == "" {
		return true
	}
	_, ok := e.warm.Load(tag)
	return ok
}

// observe folds the time of one answer into e's latency, weighing the
// new sample by 1/4.
func (e *endpoint) observe(d time.Duration) {
	now := time.Now().UnixNano()
	old := e.smoothed(now)
	e.measured.Store(now)
	if old == 0 {
		e.latency.Store(int64(d))
		return
	}
	e.latency.Store(old + (int64(d)-old)/4)
}

// smoothed is e's latency at now: a latency not sampled for a while
// halves every second, so a server that was slow is tried again and
// measured anew.
func (e *endpoint) smoothed(now int64) int64 {
	l := e.latency.Load()
	if idle := (now - e.measured.Load()) / int64(time.Second); idle > 0 {
		l >>= min(idle, 62)
	}
	return l
}

// score orders endpoints for the next request: the lower the sooner. A
// server's latency counts once per request it has in flight, so the load
// spreads by observed latency; a server not measured yet scores 0 and is
// tried first.
func (e *endpoint) score(now int64) int64 { return e.smoothed(now) * int64(1+e.inflight.Load()) }

// pool spreads requests over the servers by observed latency, hedges a
// request that has not answered within its budget, and fails over. A server
// whose request failed, or whose answer was too old to serve, is down:
// skipped until its health check finds it ready again.
type pool struct {
	eps      []*endpoint
	timeout  time.Duration // one request
	attempts int           // requests per refill, hedges included
	backoff  time.Duration // before each round after the first, doubling
	maxWait  time.Duration // cap of the backoff
	every    time.Duration // health checks of down endpoints
	maxAge   time.Duration // of a snowflake answer, from its request's sending
	hedgeMin time.Duration // the least budget of a request before a hedge
	hedgeMax time.Duration // the most, and the budget of a server not measured yet

	failovers atomic.Uint64
	hedges    atomic.Uint64

	mu     sync.Mutex // guards closed and adding to wg
	closed bool
	wg     sync.WaitGroup // requests and health checks
	done   chan struct{}  // closed by close
}

// newPool returns the pool of cfg's endpoints, each over its transport.
func newPool(cfg Config, transports []transport) *pool {
	p := &pool{timeout: cfg.Timeout, attempts: cfg.Attempts, backoff: cfg.Backoff, maxWait: cfg.MaxBackoff,
		every: cfg.HealthInterval, maxAge: cfg.MaxAge, done: make(chan struct{})}
	p.hedgeMax = min(cfg.Timeout/8, cfg.MaxAge/4)
	p.hedgeMin = min(5*time.Millisecond, p.hedgeMax)
	for i, e := range cfg.Endpoints {
		p.eps = append(p.eps, &endpoint{name: e, t: transports[i]})
	}
	return p
}

// spawn runs f on a goroutine that close waits for, unless the pool is
// closed.
func (p *pool) spawn(f func()) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		f()
	}()
	return true
}

// budget is how long a request of tag to e may go unanswered before it
// is hedged: four times e's latency, within [hedgeMin, hedgeMax].
func (p *pool) budget(e *endpoint, tag string) time.Duration {
	l := time.Duration(e.smoothed(time.Now().UnixNano()))
	if l == 0 || !e.isWarm(tag) {
		return p.hedgeMax
	}
	return min(p.hedgeMax, max(p.hedgeMin, 4*l))
}

// pick returns the endpoint for the next request of a refill, by the
// first rule that leaves a candidate: not used by this refill yet, up and
// not stalled; then up; then any not used yet; then any not running this
// refill's request, up first; then any. Among the candidates of a rule,
// the better score of two chosen at random wins. A hedge takes only the
// first rule, or a server up and not stalled that the refill tried
// before: it must be another healthy server, or none.
func (p *pool) pick(used, running func(*endpoint) bool, hedge bool) *endpoint {
	up := func(e *endpoint) bool { return !e.down.Load() }
	fresh := func(e *endpoint) bool { return up(e) && e.stalled.Load() == 0 }
	rules := []func(*endpoint) bool{
		func(e *endpoint) bool { return !used(e) && fresh(e) },
		func(e *endpoint) bool { return !running(e) && fresh(e) },
	}
	if !hedge {
		rules = append(rules[:1],
			func(e *endpoint) bool { return !used(e) && up(e) },
			func(e *endpoint) bool { return !used(e) },
			func(e *endpoint) bool { return !running(e) && up(e) },
			func(e *endpoint) bool { return !running(e) },
			func(*endpoint) bool { return true })
	}
	for _, ok := range rules {
		if e := p.best(ok); e != nil {
			return e
		}
	}
	return nil
}

// best returns the better scored of two endpoints chosen at random among
// those ok accepts, or nil.
func (p *pool) best(ok func(*endpoint) bool) *endpoint {
	var c []*endpoint
	for _, e := range p.eps {
		if ok(e) {
			c = append(c, e)
		}
	}
	switch len(c) {
	case 0:
		return nil
	case 1:
		return c[0]
	}
	i := rand.IntN(len(c))
	j := rand.IntN(len(c) - 1)
	if j >= i {
		j++
	}
	now := time.Now().UnixNano()
	if c[j].score(now) < c[i].score(now) {
		return c[j]
	}
	return c[i]
}

// markDown takes e out of rotation and makes sure its health check runs.
func (p *pool) markDown(e *endpoint) {
	e.down.Store(true)
	if e.probing.CompareAndSwap(false, true) {
		if !p.spawn(func() { p.probe(e) }) {
			e.probing.Store(false)
		}
	}
}

// probe checks a down endpoint every p.every until it is ready again.
// Each check has a deadline of one interval, so a server that became
// ready is back in rotation within one interval of it, whatever the
// length of its outage.
func (p *pool) probe(e *endpoint) {
	t := time.NewTicker(p.every)
	defer t.Stop()
	for {
		select {
		case <-p.done:
			e.probing.Store(false)
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), min(p.every, p.timeout))
		err := e.t.check(ctx)
		cancel()
		if err != nil {
			continue
		}
		e.down.Store(false)
		e.probing.Store(false)
		// Marked down again after the check and before the flag was
		// cleared: that caller found probing set, so go on.
		if !e.down.Load() || !e.probing.CompareAndSwap(false, true) {
			return
		}
	}
}

func (p *pool) close() error {
	p.mu.Lock()
	if !p.closed {
		p.closed = true
		close(p.done)
	}
	p.mu.Unlock()
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
