package zkstore_test

import (
	"errors"
	"testing"
	"time"

	"github.com/firn-id/firn/internal/testserver"
	"github.com/firn-id/firn/nodeid"
)

// TestReservedNodesInAnyOrder: a reserved znode whose nodes are not
// sorted (written by hand with zkCli, or by another tool: ZooKeeper keeps
// whatever JSON it is given) still reserves every node it lists. Holds
// searches a sorted list; before the fix node 1 of [5, 1, 3] was claimed.
func TestReservedNodesInAnyOrder(t *testing.T) {
	zks := testserver.ZooKeeper(t)
	ns := namespace()
	s := newStore(t, zks.Servers(), ns)
	if _, err := s.Reserve(testCtx(t), nodeid.Reservation{Nodes: []uint64{7}, Layout: layoutID}); err != nil {
		t.Fatal(err)
	}
	admin := connect(t, zks.Servers())
	if _, err := admin.Set(ns+"/reserved", []byte(`{"nodes":[5,1,3]}`), -1); err != nil {
		t.Fatal(err)
	}
	for _, n := range []uint64{5, 1, 3} {
		c, err := s.Claim(testCtx(t), nodeid.ClaimRequest{Node: n, Pool: 8, Layout: layoutID, TTL: time.Minute})
		if !errors.Is(err, nodeid.ErrNodeReserved) {
			t.Errorf("claim of reserved node %d: %+v, %v; want ErrNodeReserved", n, c, err)
		}
	}
	if _, err := s.Unreserve(testCtx(t), 1, "checked"); err != nil {
		t.Errorf("unreserve of reserved node 1: %v", err)
	}
}
