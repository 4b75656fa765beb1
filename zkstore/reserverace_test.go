package zkstore_test

import (
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/firn-id/firn/internal/testserver"
	"github.com/firn-id/firn/nodeid"
)

// TestReserveRacesClaim: a Reserve of a node and a claim of it, started
// together, never both succeed: the claim's Multi checks the reserved
// znode's version and the Reserve's creates the node's held znode.
func TestReserveRacesClaim(t *testing.T) {
	zks := testserver.ZooKeeper(t)
	ns := namespace()
	s := newStore(t, zks.Servers(), ns)
	r := newStore(t, zks.Servers(), ns)
	if _, err := s.Reserve(testCtx(t), nodeid.Reservation{Floor: 1, Layout: layoutID}); err != nil {
		t.Fatal(err)
	}
	for n := uint64(0); n < 12; n++ {
		var wg sync.WaitGroup
		var claimErr, resvErr error
		var c nodeid.Claim
		var got nodeid.Reservation
		wg.Add(2)
		go func() {
			defer wg.Done()
			c, claimErr = s.Claim(testCtx(t), nodeid.ClaimRequest{Node: n, Pool: 64, Layout: layoutID, TTL: time.Minute})
		}()
		go func() {
			defer wg.Done()
			got, resvErr = r.Reserve(testCtx(t), nodeid.Reservation{Nodes: []uint64{n}, Floor: int64(n) + 1, Layout: layoutID})
		}()
		wg.Wait()
		if claimErr == nil && resvErr == nil && slices.Contains(got.Nodes, n) {
			t.Fatalf("node %d both claimed (%+v) and reserved (%+v)", n, c, got)
		}
		if claimErr != nil && resvErr != nil {
			t.Fatalf("node %d: neither: %v; %v", n, claimErr, resvErr)
		}
		t.Logf("node %d: claim %v, reserve %v", n, claimErr, resvErr)
	}
}
