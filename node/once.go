package node

import (
	"context"
	"errors"

	"github.com/firn-id/firn/nodeid"
	"github.com/firn-id/firn/snowflake"
)

// Once holds a node for one job that ends (a batch, one command-line
// run), where a Holder serves until Close: it takes a node of store with
// lc, builds a generator on its lease from gc (Node and Reservation set
// to the lease's, StartAhead when lc.StartAhead is, as a Holder does), runs
// f, and releases the lease. It returns f's error joined with the
// release's; an error of nodeid.Acquire (nodeid.ErrLayoutMismatch, say)
// is returned as it is, and f does not run. The lease reserves whole
// ticks, as a Holder's does (fitTicks), and extends its HWM in the
// background while f runs; a generator that reaches it first says so
// (Waiting) rather than issue past it. Each job starts past the last
// one's reservation, a whole tick: jobs in a tight loop on a layout of
// long ticks run ahead of the clock by a tick each, and one that would
// start more than MaxBehind ahead is refused (*nodeid.BehindHWMError,
// saying how far) unless lc.StartAhead.
func Once(ctx context.Context, store nodeid.Store, lc nodeid.Config, gc snowflake.Config, f func(*snowflake.Generator, *nodeid.Lease) error) (err error) {
	lc, gc = fitTicks(lc, gc)
	lease, err := nodeid.Acquire(ctx, store, lc)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, lease.Close(ctx)) }()
	gc.Node, gc.Reservation = lease.Node(), lease
	gc.StartAhead = gc.StartAhead || lc.StartAhead
	g, err := snowflake.New(gc)
	if err != nil {
		return err
	}
	return f(g, lease)
}

// Waiting reports whether err, from a generator on lease, says only that
// the generator reached the HWM before the lease's next extension
// landed (snowflake.ErrNotServing while the lease holds): a one-shot job
// that wants more IDs sleeps a moment and asks again. A lost lease is
// not waiting: its generator never serves again.
func Waiting(err error, lease *nodeid.Lease) bool {
	return errors.Is(err, snowflake.ErrNotServing) && lease.Err() == nil
}
