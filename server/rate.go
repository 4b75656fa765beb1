package server

import (
	"sync/atomic"
	"time"
)

// RateSeconds is how many seconds of IDs issued per second /v1/status
// reports for each mode.
const RateSeconds = 180

// The modes whose IDs a rateRing counts.
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

// rateRing counts the IDs issued per mode in per-second buckets over the
// last RateSeconds (plus the second in progress), in memory: the figures
// behind /v1/status's chart. Adding is lock-free: each bucket packs its
// second (Unix seconds, low 32 bits) with its count in one word, so a
// count from another second is never mixed in.
type rateRing struct {
	b [modes][RateSeconds + 1]atomic.Uint64
}

// add counts n IDs of mode issued now.
func (r *rateRing) add(mode int, n int, now time.Time) {
	sec := uint64(uint32(now.Unix()))
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

// perSecond returns the counts of mode over the RateSeconds seconds that
// ended before the second of now, oldest first.
func (r *rateRing) perSecond(mode int, now time.Time) []uint64 {
	out := make([]uint64, RateSeconds)
	end := now.Unix() // the second in progress, left out
	for i := range out {
		sec := uint64(uint32(end - RateSeconds + int64(i)))
		if v := r.b[mode][sec%(RateSeconds+1)].Load(); v>>32 == sec {
			out[i] = v & (1<<32 - 1)
		}
	}
	return out
}
