package server

import (
	"sync/atomic"
	"time"
)

// RateSeconds is how many seconds of IDs issued per second /v1/status
// reports for each mode.
const RateSeconds = 180

// The modes whose IDs a throughputRing counts.
const (
	modeSnowflake = iota
	modeSegment
	modes
)

// rateMode returns the ring's index of a mode of firn_ids_issued_total.
func rateMode(mode string) int {
	if mode == "snowflake" {
		return modeSnowflake
	}
	return modeSegment
}

// throughputRing counts the IDs issued per mode in per-second buckets
// over the last RateSeconds (plus the second in progress), in memory: the
// figures behind /v1/status's chart (rate limiting is auth.go's and
// anonymous.go's). Seconds are counted on the monotonic clock
// from base, one clock read per request and immune to steps of the wall
// clock. Adding is lock-free: each bucket packs its second (low 32 bits)
// with its count in one word, so a count from another second is never
// mixed in.
type throughputRing struct {
	base time.Time
	b    [modes][RateSeconds + 1]atomic.Uint64
}

func newThroughputRing(base time.Time) *throughputRing { return &throughputRing{base: base} }

// second returns the second in progress, counted from base.
func (r *throughputRing) second() uint64 { return uint64(time.Since(r.base) / time.Second) }

// add counts n IDs of mode issued now.
func (r *throughputRing) add(mode int, n int) { r.addAt(mode, n, r.second()) }

// addAt counts n IDs of mode issued in second sec.
func (r *throughputRing) addAt(mode int, n int, sec uint64) {
	sec = uint64(uint32(sec))
	b := &r.b[mode][sec%(RateSeconds+1)]
	for {
		old := b.Load()
		next := sec<<32 | uint64(uint32(n))
		if old>>32 == sec {
			next = old + uint64(uint32(n))
		}
		if b.CompareAndSwap(old, next) {
			return
		}
	}
}

// perSecond returns the counts of mode over the RateSeconds seconds
// before second cur, oldest first (cur, in progress, is left out).
func (r *throughputRing) perSecond(mode int, cur uint64) []uint64 {
	out := make([]uint64, RateSeconds)
	for i := range out {
		back := uint64(RateSeconds - i)
		if back > cur {
			continue // before base
		}
		sec := uint64(uint32(cur - back))
		if v := r.b[mode][sec%(RateSeconds+1)].Load(); v>>32 == sec {
			out[i] = v & (1<<32 - 1)
		}
	}
	return out
}

// end returns the instant second cur starts: the end of the seconds
// perSecond reports.
func (r *throughputRing) end(cur uint64) time.Time {
	return r.base.Add(time.Duration(cur) * time.Second)
}
