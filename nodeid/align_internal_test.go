package nodeid

import (
	"math"
	"math/big"
	"testing"
)

// FuzzAlignUp: alignUp returns the least epoch + k·tick at or above ms
// (ms itself for a tick of 1 ms or less, or at or before the epoch), or
// the largest millisecond where that would overflow; checked against
// arbitrary-precision arithmetic.
func FuzzAlignUp(f *testing.F) {
	f.Add(int64(1_700_000_000_123), int64(1_600_000_000_000), int64(3_600_000))
	f.Add(int64(math.MaxInt64-5), int64(0), int64(1000))
	f.Add(int64(math.MaxInt64-5), int64(math.MinInt64), int64(1000))
	f.Add(int64(10), int64(10), int64(7))
	f.Fuzz(func(t *testing.T, ms, epoch, tick int64) {
		got := alignUp(ms, epoch, tick)
		if tick <= 1 || ms <= epoch {
			if got != ms {
				t.Fatalf("alignUp(%d, %d, %d) = %d, want ms itself", ms, epoch, tick, got)
			}
			return
		}
		d := new(big.Int).Sub(big.NewInt(ms), big.NewInt(epoch))
		r := new(big.Int).Mod(d, big.NewInt(tick))
		want := new(big.Int).Set(big.NewInt(ms))
		if r.Sign() != 0 {
			want.Add(want, new(big.Int).Sub(big.NewInt(tick), r))
		}
		if !want.IsInt64() {
			want.SetInt64(math.MaxInt64)
		}
		if got != want.Int64() {
			t.Fatalf("alignUp(%d, %d, %d) = %d, want %s", ms, epoch, tick, got, want)
		}
	})
}
