package nodeid_test

import (
	"math/rand/v2"
	"testing"

	"github.com/firn-id/firn/nodeid"
)

// TestClaimOrder: over random pools, a ClaimOrder yields every free node
// once and only free nodes; with fewer than InOrderLosses lost tries, in
// ascending order (the lowest free node first: processes started
// together take 0, 1, 2…); with more, still every free node.
func TestClaimOrder(t *testing.T) {
	for i := range 2000 {
		pool := uint64(rand.IntN(70))
		freeSet := map[uint64]bool{}
		for n := range pool {
			if rand.IntN(3) > 0 {
				freeSet[n] = true
			}
		}
		lose := i%2 == 1
		o := nodeid.NewClaimOrder(pool, func(n uint64) bool { return freeSet[n] })
		seen := map[uint64]bool{}
		var last uint64
		losses := 0
		for k := 0; ; k++ {
			n, ok := o.Next()
			if !ok {
				break
			}
			switch {
			case !freeSet[n]:
				t.Fatalf("pool %d: yielded %d, not free", pool, n)
			case seen[n]:
				t.Fatalf("pool %d: yielded %d twice", pool, n)
			case losses < nodeid.InOrderLosses && k > 0 && n <= last:
				t.Fatalf("pool %d: %d after %d after %d lost tries", pool, n, last, losses)
			}
			seen[n], last = true, n
			if lose && rand.IntN(2) == 0 {
				o.Lost()
				losses++
			}
		}
		if len(seen) != len(freeSet) {
			t.Fatalf("pool %d: yielded %d of %d free nodes", pool, len(seen), len(freeSet))
		}
	}
}
