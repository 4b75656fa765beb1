package server

import (
	"context"
	"net/http"
	"sync"
	"time"
)

// requestDeadline is a request's context bounded by the service's
// Timeout, whose timer is made only when a wait asks for it (Done): IDs
// served from memory never look at their context, and a
// context.WithTimeout on every request was a fifth of a Leaf route's cost
// (BenchmarkRoutes). Err and Deadline answer as the bounded context
// would. release ends the timer, if one was made.
type requestDeadline struct {
	context.Context // the request's
	deadline        time.Time
	mu              sync.Mutex
	bounded         context.Context
	cancel          context.CancelFunc
}

// bounded returns r's context bounded by the service's Timeout; the
// caller defers its release.
func (h *handler) bounded(r *http.Request) *requestDeadline {
	ctx := r.Context()
	d := time.Now().Add(h.svc.Timeout)
	if pd, ok := ctx.Deadline(); ok && pd.Before(d) {
		d = pd
	}
	return &requestDeadline{Context: ctx, deadline: d}
}

func (c *requestDeadline) timer() context.Context {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.bounded == nil {
		c.bounded, c.cancel = context.WithDeadline(c.Context, c.deadline)
	}
	return c.bounded
}

func (c *requestDeadline) Deadline() (time.Time, bool) { return c.deadline, true }

func (c *requestDeadline) Done() <-chan struct{} { return c.timer().Done() }

func (c *requestDeadline) Err() error {
	c.mu.Lock()
	b := c.bounded
	c.mu.Unlock()
	switch {
	case b != nil:
		return b.Err()
	case c.Context.Err() != nil:
		return c.Context.Err()
	case !time.Now().Before(c.deadline):
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
