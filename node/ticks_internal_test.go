package node

import (
	"math"
	"testing"
	"time"

	"github.com/firn-id/firn/nodeid"
	"github.com/firn-id/firn/snowflake"
)

// FuzzFitTicks: for every tick and window, fitTicks leaves the bounds
// on starting ahead at least what a lease leaves behind — its window and
// two ticks, saturating rather than wrapping — and the generator's bound
// at least the lease's and a tick; a MaxBehind nodeid refuses stays
// refused.
func FuzzFitTicks(f *testing.F) {
	f.Add(int64(time.Hour), int64(0), int64(0))
	f.Add(int64(math.MaxInt64/time.Millisecond)*int64(time.Millisecond), int64(time.Minute), int64(0))
	f.Add(int64(time.Millisecond), int64(0), int64(0))
	f.Fuzz(func(t *testing.T, tick, window, behind int64) {
		if tick <= 0 || window < 0 || behind < 0 || window > int64(nodeid.MaxWindow) {
			return
		}
		l := snowflake.Layout{Tick: time.Duration(tick), TimeBits: 1, Epoch: time.Unix(0, 0)}
		lc, gc := fitTicks(nodeid.Config{Window: time.Duration(window), MaxBehind: time.Duration(behind)}, snowflake.Config{Layout: l})
		w := max(time.Duration(window), nodeid.DefaultWindow)
		if window > 0 {
			w = time.Duration(window)
		}
		if behind != 0 && time.Duration(behind) <= w {
			if lc.MaxBehind != time.Duration(behind) {
				t.Fatalf("MaxBehind %s under the window %s became %s: nodeid no longer refuses it", time.Duration(behind), w, lc.MaxBehind)
			}
			return
		}
		eff := lc.MaxBehind
		if eff == 0 {
			eff = max(10*time.Second, 2*w)
		}
		if need := addSat(w, addSat(l.Tick, l.Tick)); l.Tick > 10*time.Millisecond && eff < need {
			t.Fatalf("tick %s window %s: MaxBehind %s under %s", l.Tick, w, eff, need)
		}
		if eff <= w {
			t.Fatalf("tick %s window %s: MaxBehind %s not past the window", l.Tick, w, eff)
		}
		if start := max(gc.MaxStartAhead, snowflake.DefaultMaxStartAhead); start < addSat(eff, l.Tick) {
			t.Fatalf("tick %s: generator bound %s under the lease's %s and a tick", l.Tick, start, eff)
		}
		if l.Tick%time.Millisecond == 0 && lc.Tick != l.Tick {
			t.Fatalf("lease tick %s, layout's %s", lc.Tick, l.Tick)
		}
	})
}
