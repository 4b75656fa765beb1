package node

import (
	"time"

	"github.com/firn-id/firn/nodeid"
	"github.com/firn-id/firn/snowflake"
)

// LayoutID is the ID space a namespace records for plain IDs of layout
// l: its fingerprint, its description and the fingerprint of the bits it
// composes. Every process of a namespace — firn serve, firn next, a
// program embedding package ids — computes it here, so the same layout
// is one ID space to all of them.
func LayoutID(l snowflake.Layout) nodeid.LayoutID {
	return nodeid.LayoutID{Fingerprint: l.Fingerprint(), Description: l.String(), Bits: l.BitsFingerprint()}
}

// CoverTick returns w, a lease window (0: nodeid.DefaultWindow), widened
// for a layout whose tick is long: the HWM must reach the end of the
// generator's current tick, up to a tick past the clock, or that tick is
// never issued, so a window of a tick longer than 10 ms is its default
// plus the tick, and any window at least the tick plus margin, the time
// the caller's lease must be renewed within.
func CoverTick(l snowflake.Layout, w, margin time.Duration) time.Duration {
	if l.Tick <= 10*time.Millisecond {
		return w
	}
	if w == 0 {
		return nodeid.DefaultWindow + l.Tick
	}
	return max(w, l.Tick+margin)
}

// layoutOf is the layout of a generator's configuration: the zero Layout
// stands for snowflake.DefaultLayout.
func layoutOf(gc snowflake.Config) snowflake.Layout {
	if gc.Layout.Tick == 0 && gc.Layout.TimeBits == 0 { // as snowflake.New reads it
		return snowflake.DefaultLayout()
	}
	return gc.Layout
}
