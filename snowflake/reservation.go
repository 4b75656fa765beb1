package snowflake

import (
	"fmt"
	"math"
	"strings"
	"sync/atomic"
)

// Reservation is the generator's permit to issue ticks: the high-water
// mark (HWM) reserved for its node ID in durable storage. A lease from
// package nodeid satisfies it; the generator declares it here so that it
// depends on nothing else.
//
// All times are Unix milliseconds. The HWM is exclusive: tick t may be
// issued only if epoch + (t+1)·tick ≤ Limit().
type Reservation interface {
	// BindGenerator attaches the reservation to one generator, whose clock
	// reports its time in Unix milliseconds: the reservation extends the
	// HWM ahead of that clock, not of the raw wall clock. A second
	// BindGenerator must fail (ErrAlreadyBound, or nodeid.ErrAlreadyBound
	// for a lease).
	BindGenerator(clock func() int64) error
	// Start returns the HWM stored when the node ID was taken: the
	// generator's first tick starts at or after it.
	Start() int64
	// Limit returns the reserved HWM: the generator issues no tick that
	// ends after it. It must be safe for concurrent use and never
	// decrease. The generator calls it only when it reaches the last
	// value it read.
	Limit() int64
}

// A reservation taken for one node (nodeid.Lease) says which, and one
// taken for one layout says which by its fingerprint: New refuses a
// generator of another node or layout over it, which would issue IDs
// whose node or layout no lease protects.
type (
	nodeReservation   interface{ Node() uint64 }
	layoutReservation interface{ LayoutFingerprint() string }
)

// fits refuses a reservation held for another node than node, or for
// another layout than l.
func fits(r Reservation, node uint64, l Layout) error {
	if nr, ok := r.(nodeReservation); ok && nr.Node() != node {
		return fmt.Errorf("%w: the generator is for node %d, the reservation holds node %d", ErrReservationMismatch, node, nr.Node())
	}
	if lr, ok := r.(layoutReservation); ok && !ofLayout(lr.LayoutFingerprint(), l) {
		return fmt.Errorf("%w: the generator's layout is %s (fingerprint %s), the reservation was taken for fingerprint %s",
			ErrReservationMismatch, l, l.Fingerprint(), lr.LayoutFingerprint())
	}
	return nil
}

// ofLayout reports whether fp, the fingerprint of the ID space a
// reservation was taken for, is l's: l.Fingerprint(), alone or followed
// by ";" and what else the space records (opaque mode's permutation).
func ofLayout(fp string, l Layout) bool {
	lf := l.Fingerprint()
	return fp == lf || strings.HasPrefix(fp, lf+";")
}

// Unreserved returns a reservation with no limit and no start: the
// explicit choice to run without restart safety. Use it only where a
// duplicate after a restart is acceptable or impossible: a generator
// restarted with its clock set back, or started on a second machine with
// the same node, issues IDs the first one already issued. Nothing in the
// generator can see either. Each call returns a new reservation, which
// binds to one generator.
func Unreserved() Reservation { return new(unreserved) }

type unreserved struct{ bound atomic.Bool }

func (u *unreserved) BindGenerator(func() int64) error {
	if !u.bound.CompareAndSwap(false, true) {
		return ErrAlreadyBound
	}
	return nil
}

func (*unreserved) Start() int64 { return 0 }

func (*unreserved) Limit() int64 { return math.MaxInt64 }
