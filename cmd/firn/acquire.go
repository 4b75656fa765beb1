package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/firn-id/firn/nodeid"
	"github.com/firn-id/firn/snowflake"
)

// acquirer takes firn serve's node, at start and after a lost lease, and
// while it cannot says why: /readyz answers 503 with the reason, and the
// process waits rather than exits, so a supervisor's back-off (systemd,
// Kubernetes) does not stretch the time to serve past the moment a node
// frees.
type acquirer struct {
	nodes nodeid.Store
	o     serveOptions
	log   *slog.Logger
	why   atomic.Pointer[string] // nil while not waiting
	// logged and loggedAt are the last wait logged: the same reason is
	// logged again only after logEvery, not on every retry.
	logged   string
	loggedAt time.Time
}

// logEvery spaces the log lines of one unchanged reason to wait.
const logEvery = 10 * time.Second

// notReady returns why no node is held, or nil. It does no I/O.
func (a *acquirer) notReady() error {
	if why := a.why.Load(); why != nil {
		return errors.New(*why)
	}
	return nil
}

func (a *acquirer) waiting(why string) { a.why.Store(&why) }

// acquire takes a node and a generator on it. While the store does not
// answer, no node is free, or the node asked for is held, it waits, not
// ready, and tries again — every 75–150 ms while the nodes are held, with
// back-off up to the lease TTL otherwise; after a lost
// lease (again) it tries again whatever the error. Otherwise it returns
// the error, as it does when ctx ends.
func (a *acquirer) acquire(ctx context.Context, again bool) (*nodeid.Lease, *snowflake.Generator, error) {
	b := newBackoff(cmp.Or(a.o.lease.TTL, nodeid.DefaultTTL))
	for {
		lease, g, err := a.once(ctx)
		if err == nil {
			a.why.Store(nil)
			return lease, g, nil
		}
		why, wait := a.reason(err)
		if ctx.Err() != nil || (!wait && !again) {
			return nil, nil, err
		}
		a.waiting(why)
		d := b.next()
		if freeSoon(err) {
			// A node frees when its holder releases it or its claim
			// expires: try again soon, whatever the back-off, so the
			// node is served within about a tick of this of coming free.
			d = min(d, nodePoll/2+rand.N(nodePoll/2+1))
		}
		if why != a.logged || time.Since(a.loggedAt) >= logEvery {
			a.log.Warn("not ready: no node held", "why", why, "retry", d.String())
			a.logged, a.loggedAt = why, time.Now()
		}
		select {
		case <-ctx.Done():
			return nil, nil, err
		case <-time.After(d):
		}
	}
}

// once makes one attempt, which the store must answer within twice the
// dial timeout.
func (a *acquirer) once(ctx context.Context) (*nodeid.Lease, *snowflake.Generator, error) {
	actx, cancel := context.WithTimeout(ctx, 2*a.o.stores.dialTimeout)
	defer cancel()
	lease, err := nodeid.Acquire(actx, a.nodes, a.o.lease)
	if err != nil {
		return nil, nil, err
	}
	for _, cb := range lease.Skipped() {
		a.log.Warn("passed over a free node whose HWM is ahead of the clock", "node", cb.Node,
			"ahead", cb.HWM.Sub(cb.Now).String(), "hwm", cb.HWM.UTC(), "took", lease.Node())
	}
	gc := a.o.gen
	gc.Node, gc.Reservation = lease.Node(), lease
	g, err := snowflake.New(gc)
	if err == nil {
		err = checkFloor(g, a.o.floor, a.o.opaque) // another node may start lower
	}
	if err != nil {
		return nil, nil, errors.Join(err, lease.Close(ctx))
	}
	return lease, g, nil
}

// reason says why an attempt failed, for /readyz and the log, and
// whether waiting can cure it.
func (a *acquirer) reason(err error) (string, bool) {
	var pf *nodeid.PoolFullError
	var ce *nodeid.ConflictError
	var ae *nodeid.AheadError
	switch {
	case errors.As(err, &ae):
		// The clock catches up with every node in time; restarting
		// under a supervisor's back-off would only serve later.
		return fmt.Sprintf("%s; waiting for the clock (or fix it, or --start-ahead); retrying", err), true
	case errors.As(err, &pf):
		reserved := ""
		if pf.Reserved > 0 {
			reserved = fmt.Sprintf(" (%d more reserved)", pf.Reserved)
		}
		return fmt.Sprintf("no free node in %s: %d of %d held%s; retrying", a.o.stores.describe(), pf.Held, pf.Pool-uint64(pf.Reserved), reserved), true
	case errors.As(err, &ce):
		return fmt.Sprintf("node %d is held by another owner in %s; retrying", ce.Node, a.o.stores.describe()), true
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Sprintf("%s did not answer: %s; retrying", a.o.stores.describe(), err), true
	}
	return err.Error() + "; retrying", false
}

// nodePoll bounds the wait between claims while every node is held (one
// small store transaction each), so a freed node is taken within about
// this long.
const nodePoll = 150 * time.Millisecond

// freeSoon reports whether err is a node held by another (the pool full,
// or the node asked for held), which may come free at any moment.
func freeSoon(err error) bool {
	var pf *nodeid.PoolFullError
	var ce *nodeid.ConflictError
	return errors.As(err, &pf) || errors.As(err, &ce)
}
