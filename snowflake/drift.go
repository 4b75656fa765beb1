package snowflake

// drift is how far the generator's clock lies ahead of its monotonic
// baseline (the wall clock at start plus monotonic elapsed time), as a
// function of monotonic time: off at monotonic time at and, while
// shedding, falling from there at the shed rate until it reaches floor.
//
// A drift is never changed in place: sync installs a new one, anchored
// where the old one stood at that moment, so the generator's clock is
// continuous and, as the shed rate is below 1, never goes back. A lead
// shed in steps would set the clock back below ticks already issued, and
// callers would wait for it to reach them again.
type drift struct {
	off   int64   // the offset at monotonic time at; never negative
	at    int64   // monotonic ns since the generator started
	floor int64   // where shedding stops; 0 ≤ floor ≤ off
	shed  float64 // offset lost per monotonic ns after at; 0: none
}

// offsetAt returns the offset at monotonic time mono. Before at (a reader
// that read the clock before a sync installed d) it is d's starting
// offset, which is no more than the previous drift gave at that time.
func (d *drift) offsetAt(mono int64) int64 {
	if d.shed == 0 || mono <= d.at {
		return d.off
	}
	// The product is at most half of an int64 (shed ≤ 0.5), and the
	// conversion of a float64 below 2^63 cannot overflow.
	lost := int64(float64(mono-d.at) * d.shed)
	return max(d.floor, d.off-lost)
}

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
// the clock slower, at 1 − ShedRate of real time, from this moment until
// the lead is gone: never by a step back. The offset never falls below
// zero, the monotonic baseline. Elapsed time is measured on the
// monotonic clock alone, so neither a start ahead of the wall clock nor
// an earlier catch-up counts as time passed.
//
// The drift moves by compare-and-swap from the one it is computed from,
// and a sync that stalled after a later one installed its drift gives up,
// so a stale reading of the wall clock never undoes a fresher one.
func (g *Generator) sync() {
	mono, last := g.monoNs(), g.lastSync.Load()
	if mono-last < syncEvery || !g.lastSync.CompareAndSwap(last, mono) {
		return
	}
	// The offset that would put the clock on the wall clock; never below
	// the monotonic baseline.
	target := max(0, g.wallNs()-g.epochNs-g.base-mono)
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
			next.floor, next.shed = target, g.shed
		}
		if next.same(d) || g.drift.CompareAndSwap(d, next) {
			return
		}
	}
}
