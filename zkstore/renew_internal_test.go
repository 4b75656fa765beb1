package zkstore

import (
	"errors"
	"testing"
	"time"

	"github.com/firn-id/firn/internal/testserver"
	"github.com/firn-id/firn/nodeid"
)

// TestRenewPastTTL calls Renew after the claim's TTL, before its
// watchdog has run (a timer fires late on a starved machine; here it is
// stopped): the lease expired by the store's clock must not be renewed.
func TestRenewPastTTL(t *testing.T) {
	zks := testserver.ZooKeeper(t)
	s := mustNew(t, zks.Servers(), testNamespace())
	ttl := 2 * testserver.ZooKeeperTick
	nc, err := s.Claim(testCtx(t), nodeid.ClaimRequest{Node: 0, Pool: 1, Layout: layout, TTL: ttl})
	if err != nil {
		t.Fatal(err)
	}
	c := s.lookup(nc)
	c.mu.Lock()
	c.timer.Stop()
	c.mu.Unlock()
	time.Sleep(ttl + ttl/2)
	if got, err := s.Renew(testCtx(t), nc, 1000); !errors.Is(err, nodeid.ErrLeaseLost) {
		t.Fatalf("renew %s past the TTL, watchdog late = %d, %v; want ErrLeaseLost", ttl/2, got, err)
	}
}
