package server

import (
	"context"
	"net/http"
	"sync"
	"time"
)

// requestDeadline is a request's context bounded by the service's
// Timeout, which bounds a wait for IDs: its clock starts when something
// first asks for it (Deadline, Done or Err), which only a wait does, and
// its timer is made only for Done. IDs served from memory never look at
// their context: a context.WithTimeout on every such request more than
// doubled a segment route's time in process and cost Tinyid's nextId a
// fifth of its requests per CPU second over the network
// (docs/performance.md, "The lazy deadline"). Err and
// Deadline answer as the bounded context would. release ends the timer,
// if one was made.
type requestDeadline struct {
	context.Context // the request's
	timeout         time.Duration
	mu              sync.Mutex
	deadline        time.Time // zero until the clock starts
	bounded         context.Context
	cancel          context.CancelFunc
}

// bounded returns r's context bounded by the service's Timeout; the
// caller defers its release.
func (h *handler) bounded(r *http.Request) *requestDeadline {
	return &requestDeadline{Context: r.Context(), timeout: h.svc.Timeout}
}

// start returns the deadline, fixing it on the first call: the request's
// own deadline or now plus the timeout, whichever is earlier. c.mu is
// held.
func (c *requestDeadline) start() time.Time {
	if c.deadline.IsZero() {
		c.deadline = time.Now().Add(c.timeout)
		if pd, ok := c.Context.Deadline(); ok && pd.Before(c.deadline) {
			c.deadline = pd
		}
	}
	return c.deadline
}

func (c *requestDeadline) timer() context.Context {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.bounded == nil {
		c.bounded, c.cancel = context.WithDeadline(c.Context, c.start())
	}
	return c.bounded
}

func (c *requestDeadline) Deadline() (time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.start(), true
}

func (c *requestDeadline) Done() <-chan struct{} { return c.timer().Done() }

func (c *requestDeadline) Err() error {
	c.mu.Lock()
	b, d := c.bounded, c.start()
	c.mu.Unlock()
	switch {
	case b != nil:
		return b.Err()
	case c.Context.Err() != nil:
		return c.Context.Err()
	case !time.Now().Before(d):
		return context.DeadlineExceeded
	}
	return nil
}

// release ends the timer, if a wait made one.
func (c *requestDeadline) release() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cancel != nil {
		c.cancel()
	}
}
