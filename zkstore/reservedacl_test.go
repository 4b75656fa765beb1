package zkstore_test

import (
	"errors"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/firn-id/firn/internal/testserver"
	"github.com/firn-id/firn/nodeid"
	"github.com/firn-id/firn/zkstore"
)

// TestReservedZnodeExposed: with digest credentials a stranger can
// neither rewrite nor delete the reserved znode. Without them, Exposed
// must name it: an operator who puts a digest ACL on every znode Exposed
// lists, until it lists none, would otherwise leave the reservation open,
// and a stranger who empties it has a reserved node served.
func TestReservedZnodeExposed(t *testing.T) {
	zks := testserver.ZooKeeper(t)
	ctx := testCtx(t)

	ns := namespace()
	d := zkstore.Digest{User: "firn", Password: "s3cret-pass"}
	s, err := zkstore.New(zkstore.Config{Servers: zks.Servers(), Namespace: ns, Digest: &d})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if _, err := s.Reserve(ctx, nodeid.Reservation{Nodes: []uint64{0}, Floor: 1, Layout: layoutID}); err != nil {
		t.Fatal(err)
	}
	stranger := connect(t, zks.Servers())
	if _, err := stranger.Set(ns+"/reserved", []byte("{}"), -1); !errors.Is(err, zk.ErrNoAuth) {
		t.Errorf("a stranger rewrites the reservation: %v, want ErrNoAuth", err)
	}
	if err := stranger.Delete(ns+"/reserved", -1); !errors.Is(err, zk.ErrNoAuth) {
		t.Errorf("a stranger deletes the reservation: %v, want ErrNoAuth", err)
	}

	plainNS := namespace()
	plain := newStore(t, zks.Servers(), plainNS)
	if _, err := plain.Reserve(ctx, nodeid.Reservation{Nodes: []uint64{0}, Floor: 1, Layout: layoutID}); err != nil {
		t.Fatal(err)
	}
	if _, err := plain.Claim(ctx, nodeid.ClaimRequest{Node: 1, Pool: 4, Layout: layoutID, TTL: time.Minute}); err != nil {
		t.Fatal(err)
	}
	// The operator locks down what Exposed lists, until it lists nothing.
	admin := connect(t, zks.Servers())
	if err := admin.AddAuth("digest", []byte("firn:s3cret-pass")); err != nil {
		t.Fatal(err)
	}
	locked, err := zkstore.New(zkstore.Config{Servers: zks.Servers(), Namespace: plainNS, Digest: &d})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		open, err := locked.Exposed(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range open {
			if _, err := admin.SetACL(p, zk.DigestACL(zk.PermAll, "firn", "s3cret-pass"), -1); err != nil {
				t.Fatalf("set ACL of %s: %v", p, err)
			}
		}
	}
	if _, err := stranger.Set(plainNS+"/reserved", []byte("{}"), -1); err == nil {
		if r, err := locked.Reservation(ctx); err == nil && len(r.Nodes) == 0 {
			if c, err := locked.Claim(ctx, nodeid.ClaimRequest{Node: 0, Pool: 4, Layout: layoutID, TTL: time.Minute}); err == nil {
				t.Errorf("Exposed never named %s/reserved: a stranger emptied it and node %d, reserved, was claimed with HWM %d", plainNS, c.Node, c.HWM)
			}
		}
	}
}
