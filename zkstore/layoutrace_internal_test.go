package zkstore

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/firn-id/firn/internal/testserver"
	"github.com/firn-id/firn/nodeid"
)

// TestFirstClaimLayoutRace: the first claims of a new namespace come at
// once with two layouts. One layout is recorded; every claim with the
// other is refused, so no two layouts issue IDs side by side.
func TestFirstClaimLayoutRace(t *testing.T) {
	zks := testserver.ZooKeeper(t)
	layouts := []nodeid.LayoutID{{Fingerprint: "v1:race-a", Description: "a"}, {Fingerprint: "v1:race-b", Description: "b"}}
	for round := range 3 {
		ns := testNamespace()
		var mu sync.Mutex
		won := map[string]int{}
		var wg sync.WaitGroup
		for i := range 6 {
			s := mustNew(t, zks.Servers(), ns)
			lay := layouts[i%2]
			wg.Go(func() {
				_, err := s.Claim(testCtx(t), nodeid.ClaimRequest{Node: uint64(i), Pool: 8, Layout: lay, TTL: time.Minute})
				switch {
				case err == nil:
					mu.Lock()
					won[lay.Fingerprint]++
					mu.Unlock()
				case !errors.Is(err, nodeid.ErrLayoutMismatch):
					t.Errorf("claim with layout %s: %v", lay.Fingerprint, err)
				}
			})
		}
		wg.Wait()
		if len(won) != 1 {
			t.Fatalf("round %d: claims granted per layout %v; want one layout only", round, won)
		}
	}
}
