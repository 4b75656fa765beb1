package node

import (
	"math"
	"strconv"
	"strings"
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

// Site is the site name whose leading node fields of layout l are fixed:
// the node range it leases from (snowflake.Layout.SiteNodes), refused
// with the field's width when a value does not fit. Every entry point —
// firn's configuration, package ids — reads a site here.
func Site(l snowflake.Layout, name string, fixed []snowflake.FieldValue) (nodeid.Site, error) {
	if err := nodeid.CheckSiteName(name); err != nil {
		return nodeid.Site{}, err
	}
	first, count, err := l.SiteNodes(fixed)
	if err != nil {
		return nodeid.Site{}, err
	}
	fields := make([]string, len(fixed))
	for i, f := range fixed {
		fields[i] = f.Name + "=" + strconv.FormatUint(f.Value, 10)
	}
	return nodeid.Site{Name: name, Fields: strings.Join(fields, ","), First: first, Count: count, Values: l.MaxNode()/count + 1}, nil
}

// fitTicks fits a lease and a generator to the generator's layout. The
// lease reserves whole ticks (nodeid.Config.Tick), so the tick the
// generator stands in is issuable however long it is. A lease leaves its
// HWM up to its window and a tick ahead of the clock, and the generator
// starts at the next whole tick past it: the bounds on how far the clock
// may be behind the stored HWM at start — the lease's MaxBehind and the
// generator's MaxStartAhead — must admit that, or a node taken again
// soon after its release could never be served. For a tick longer than
// 10 ms MaxBehind grows by two ticks; the generator's bound is always at
// least MaxBehind and a tick.
func fitTicks(lc nodeid.Config, gc snowflake.Config) (nodeid.Config, snowflake.Config) {
	l := layoutOf(gc)
	if l.Tick%time.Millisecond == 0 { // else decode-only: snowflake.New says so
		lc.Tick, lc.Epoch = l.Tick, l.Epoch
	}
	d := lc.WithDefaults()
	if d.MaxBehind <= d.Window {
		return lc, gc // nodeid.Acquire refuses it, naming both
	}
	behind := d.MaxBehind
	if l.Tick > 10*time.Millisecond {
		lc.MaxBehind = addSat(behind, addSat(l.Tick, l.Tick))
		behind = lc.MaxBehind
	}
	if ahead := addSat(behind, l.Tick); gc.MaxStartAhead >= 0 && ahead > max(gc.MaxStartAhead, snowflake.DefaultMaxStartAhead) {
		gc.MaxStartAhead = ahead
	}
	return lc, gc
}

// addSat returns a+b for non-negative durations, saturating at the
// longest duration rather than overflowing.
func addSat(a, b time.Duration) time.Duration {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// layoutOf is the layout of a generator's configuration: the zero Layout
// stands for snowflake.DefaultLayout.
func layoutOf(gc snowflake.Config) snowflake.Layout {
	if gc.Layout.Tick == 0 && gc.Layout.TimeBits == 0 { // as snowflake.New reads it
		return snowflake.DefaultLayout()
	}
	return gc.Layout
}
