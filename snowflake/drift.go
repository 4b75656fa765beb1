package snowflake

import "time"

// drift is how far the generator's clock lies ahead of its monotonic
// baseline (the wall clock at start plus monotonic elapsed time), as a
// function of monotonic time: off at monotonic time at and, while
// shedding, the clock running at 1 − shed of real time from there until
// the offset reaches floor. Before at, the drift it follows (before)
// still holds: shedding starts one sync interval after the sync that
// decides it, so every reading taken under the previous drift — by a
// caller whose reading ran late, or while the sync installed this one —
// is of a time the previous drift still governs.
//
// A drift is never changed in place: sync installs a new one, so the
// generator's clock is continuous and never goes back. A lead shed in
// steps would set the clock back below ticks already issued, and callers
// would wait for it to reach them again.
type drift struct {
	off    int64   // the offset at monotonic time at; never negative
	at     int64   // monotonic ns since the generator started
	floor  int64   // where shedding stops; 0 ≤ floor ≤ off
	shed   float64 // ShedRate while shedding; 0: none
	before *drift  // the drift in force before at, whose own before is nil
}

// offsetAt returns the offset at monotonic time mono. The clock it gives,
// mono plus the offset, never decreases as mono grows: the time kept past
// at is computed from a float64 that only grows with mono, and the floor
// grows with mono too.
func (d *drift) offsetAt(mono int64) int64 {
	if d.shed == 0 { // flat: before is nil
		return d.off
	}
	return d.shedding(mono)
}

// shedding is offsetAt of a shedding drift, apart and out of line so
// that the flat case costs the hot path one compare.
//
//go:noinline
func (d *drift) shedding(mono int64) int64 {
	if mono < d.at && d.before != nil {
		d = d.before // whose own before is nil
	}
	if d.shed == 0 || mono <= d.at {
		return d.off
	}
	// kept is at most the time elapsed since at, so the sum stays below
	// the clock's own range.
	kept := int64(float64(mono-d.at) * (1 - d.shed))
	return max(d.floor, d.off+d.at+kept-mono)
}

// maxReadGap is how far apart sync's readings of the monotonic and the
// wall clock may lie.
const maxReadGap = int64(time.Millisecond)

// same reports whether d gives the offset e gives from d's anchor on.
func (d *drift) same(e *drift) bool {
	if d.shed == 0 {
		return e.shed == 0 && d.off == e.off
	}
	return e.shed == d.shed && e.floor == d.floor
}

// sync moves the generator's clock toward the wall clock. A wall clock
// ahead is caught up in a step of at most CatchUpRate times the monotonic
// time since the last sync (capped at maxSyncSpan, so a bogus step of
// years moves the clock little). A wall clock behind is met by running
// the clock slower, at 1 − ShedRate of real time, from one sync interval
// on until the lead is gone: never by a step back. The offset never falls
// below zero, the monotonic baseline. Elapsed time is measured on the
// monotonic clock alone, so neither a start ahead of the wall clock nor
// an earlier catch-up counts as time passed.
//
// The drift moves by compare-and-swap from the one it is computed from. A
// sync that finds a later one installed, or whose own change would start
// before it is installed (it stalled a sync interval), gives up: a stale
// reading never undoes a fresher one, and no reading of the clock under
// the previous drift lies past the new one's start.
func (g *Generator) sync() {
	mono, last := g.monoNs(), g.lastSync.Load()
	if mono-last < syncEvery || !g.lastSync.CompareAndSwap(last, mono) {
		return
	}
	// The offset that would put the clock on the wall clock; never below
	// the monotonic baseline. The two clocks are read as a pair: a sync
	// descheduled between them would take the stall for a step of the
	// wall clock, and leaves it to the next.
	wall := g.wallNs()
	if g.monoNs()-mono > maxReadGap {
		return
	}
	target := max(0, wall-g.epochNs-g.base-mono)
	gain := int64(float64(min(mono-last, maxSyncSpan)) * g.rate)
	for {
		d := g.drift.Load()
		if d.at > mono {
			return
		}
		off := d.offsetAt(mono)
		next := &drift{off: off, at: mono}
		switch {
		case target > off:
			next.off = off + min(gain, target-off)
		case target < off:
			prev := *d
			prev.before = nil
			next.at += syncEvery
			next.off, next.shed, next.before = d.offsetAt(next.at), g.shed, &prev
			next.floor = min(target, next.off)
			if g.monoNs() >= next.at {
				return
			}
		}
		if next.same(d) || g.drift.CompareAndSwap(d, next) {
			return
		}
	}
}
