package node

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/firn-id/firn/nodeid"
	"github.com/firn-id/firn/snowflake"
)

// logEvery spaces the log lines of one unchanged reason to wait.
const logEvery = 10 * time.Second

// nodePoll bounds the wait between claims while every node is held (one
// small store transaction each), so a freed node is taken within about
// this long.
const nodePoll = 150 * time.Millisecond

// acquire takes a node and a checked generator on it. While the store does
// not answer, no node is free, the node asked for is held, or every free
// node is ahead of the clock, it waits, not ready (NotReady says why), and
// tries again — every 75–150 ms while the nodes are held, with back-off up
// to the lease TTL otherwise. The process waits rather than exits, so a
// supervisor's back-off (systemd, Kubernetes) does not stretch the time to
// serve past the moment a node frees. After a lost lease (again) it tries
// again whatever the error, and so it does once the store has answered
// an attempt (a full pool, a held node): the store is then reachable and
// configured, and a later error of its own — an etcd leader election's
// "context deadline exceeded" from the server, a dropped connection — is
// the store's trouble, not the configuration's, unless it says the
// namespace cannot serve this process (permanent). Otherwise it returns
// the error, as it does when ctx ends.
func (h *Holder) acquire(ctx context.Context, again bool) (*nodeid.Lease, *snowflake.Generator, error) {
	b := newBackoff(cmp.Or(h.cfg.Lease.TTL, nodeid.DefaultTTL))
	answered := false
	// full is the reason of the last try the store answered with no node
	// free, and when: a waiter's next try refused for a moment (a
	// database at its connection limit) does not hide that reason.
	// It is kept for a lease TTL, then the refusal is the reason alone.
	var full string
	var fullAt time.Time
	fullKept := cmp.Or(h.cfg.Lease.TTL, nodeid.DefaultTTL)
	for {
		lease, g, err := h.once(ctx)
		if err == nil {
			h.why.Store(nil)
			return lease, g, nil
		}
		why, wait := h.reason(err)
		if ctx.Err() != nil || Permanent(err) || (!wait && !again && !answered) {
			return nil, nil, err
		}
		answered = answered || (wait && !errors.Is(err, context.DeadlineExceeded))
		switch {
		case freeSoon(err):
			full, fullAt = why, time.Now()
		case full != "" && time.Since(fullAt) < fullKept:
			why = full + "; the last try: " + why
		}
		h.waiting(why, err)
		d := b.next()
		if freeSoon(err) {
			// A node frees when its holder releases it or its claim
			// expires: try again soon, whatever the back-off, so the
			// node is served within about a tick of this of coming free.
			d = min(d, nodePoll/2+rand.N(nodePoll/2+1))
		}
		if why != h.logged || time.Since(h.loggedAt) >= logEvery {
			h.log.Warn("not ready: no node held", "why", why, "retry_in", d.String())
			h.logged, h.loggedAt = why, time.Now()
		}
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, nil, err
		case <-t.C:
		}
	}
}

// once makes one attempt, which the store must answer within
// Config.Attempt. The generator is checked (Config.Check) before it is
// returned: a new lease may hold another node, or start lower, than the
// last one, so a check passed at start says nothing about it.
func (h *Holder) once(ctx context.Context) (*nodeid.Lease, *snowflake.Generator, error) {
	actx, cancel := context.WithTimeout(ctx, h.cfg.Attempt)
	defer cancel()
	lease, err := nodeid.Acquire(actx, h.cfg.Store, h.cfg.Lease)
	if err != nil {
		return nil, nil, err
	}
	for _, cb := range lease.Skipped() {
		h.log.Warn("passed over a free node whose HWM is ahead of the clock", "node", cb.Node,
			"ahead", cb.HWM.Sub(cb.Now).String(), "hwm", cb.HWM.UTC(), "took", lease.Node())
	}
	gc := h.cfg.Generator
	gc.Node, gc.Reservation = lease.Node(), lease
	// A lease taken however far its HWM is ahead of the clock makes a
	// generator that starts there too.
	gc.StartAhead = gc.StartAhead || h.cfg.Lease.StartAhead
	g, err := snowflake.New(gc)
	if err == nil && h.cfg.Check != nil {
		err = h.cfg.Check(g) // another node may start lower
	}
	if err != nil {
		// The generator never served: release its node for the next try.
		return nil, nil, errors.Join(err, lease.Close(ctx))
	}
	return lease, g, nil
}

// reason says why an attempt failed, for NotReady and the log, and
// whether waiting can cure it.
func (h *Holder) reason(err error) (string, bool) {
	var pf *nodeid.PoolFullError
	var ce *nodeid.ConflictError
	var ae *nodeid.AheadError
	switch {
	case errors.As(err, &ae):
		// The clock catches up with every node in time; restarting
		// under a supervisor's back-off would only serve later.
		return fmt.Sprintf("%s; waiting for the clock; retrying", err), true
	case errors.As(err, &pf):
		reserved := ""
		if pf.Reserved > 0 {
			reserved = fmt.Sprintf(" (%d more reserved)", pf.Reserved)
		}
		return fmt.Sprintf("no free node in %s: %d of %d held%s; retrying", h.cfg.StoreName, pf.Held, pf.Pool-uint64(pf.Reserved), reserved), true
	case errors.As(err, &ce):
		return fmt.Sprintf("node %d is held by another owner in %s; retrying", ce.Node, h.cfg.StoreName), true
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Sprintf("%s did not answer: %s; retrying", h.cfg.StoreName, err), true
	}
	return err.Error() + "; retrying", false
}

// Permanent reports whether err, from an acquisition, says the namespace
// can never serve this process as configured (another layout recorded,
// a node outside the pool or reserved, a site the namespace does not
// hold or has released): waiting would only hide it.
func Permanent(err error) bool {
	return errors.Is(err, nodeid.ErrLayoutMismatch) || errors.Is(err, nodeid.ErrNodeOutOfRange) ||
		errors.Is(err, nodeid.ErrNodeReserved) || errors.Is(err, nodeid.ErrSite)
}

// freeSoon reports whether err is a node held by another (the pool full,
// or the node asked for held), which may come free at any moment.
func freeSoon(err error) bool {
	var pf *nodeid.PoolFullError
	var ce *nodeid.ConflictError
	return errors.As(err, &pf) || errors.As(err, &ce)
}
