package zkstore

import (
	"errors"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/firn-id/firn/internal/testserver"
	"github.com/firn-id/firn/nodeid"
)

// TestLayoutFingerprintNewline records a layout whose fingerprint holds a
// newline, then claims with a fingerprint that is only its first line:
// two layouts in one namespace must be refused.
func TestLayoutFingerprintNewline(t *testing.T) {
	zks := testserver.ZooKeeper(t)
	ns := testNamespace()
	a, b := mustNew(t, zks.Servers(), ns), mustNew(t, zks.Servers(), ns)
	first := nodeid.LayoutID{Fingerprint: "v1:aaaa\nextra", Description: "first"}
	if _, err := a.Claim(testCtx(t), nodeid.ClaimRequest{Node: 0, Pool: 4, Layout: first, TTL: time.Minute}); err != nil {
		t.Fatal(err)
	}
	other := nodeid.LayoutID{Fingerprint: "v1:aaaa", Description: "other"}
	_, err := b.Claim(testCtx(t), nodeid.ClaimRequest{Node: 1, Pool: 4, Layout: other, TTL: time.Minute})
	if !errors.Is(err, nodeid.ErrLayoutMismatch) {
		t.Fatalf("claim with fingerprint %q in a namespace recorded with %q: %v, want ErrLayoutMismatch", other.Fingerprint, first.Fingerprint, err)
	}
}

// TestAnyNodeSkipsCorruptNode: hwm/0 holds what the store never writes
// (here what a namespace nested at hwm/0 would have left). A claim of
// node 0 is refused; a claim of any node takes another, and says why
// node 0 was passed over only when no node could be taken.
func TestAnyNodeSkipsCorruptNode(t *testing.T) {
	zks := testserver.ZooKeeper(t)
	s := mustNew(t, zks.Servers(), testNamespace())
	if _, err := s.Claim(testCtx(t), nodeid.ClaimRequest{Node: 1, Pool: 3, Layout: layout, TTL: time.Minute}); err != nil {
		t.Fatal(err)
	}
	conn, _, err := zk.Connect(zks.Servers(), 4*time.Second, zk.WithLogInfo(false))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Create(s.hwmPath(0), nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Claim(testCtx(t), nodeid.ClaimRequest{Node: 0, Pool: 3, Layout: layout, TTL: time.Minute}); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("claim of node 0 with a corrupt HWM: %v, want ErrCorrupt", err)
	}
	c, err := s.Claim(testCtx(t), nodeid.ClaimRequest{AnyNode: true, Pool: 3, Layout: layout, TTL: time.Minute})
	if err != nil || c.Node != 2 {
		t.Fatalf("claim of any node, 0 corrupt and 1 held = node %d, %v; want node 2", c.Node, err)
	}
	_, err = s.Claim(testCtx(t), nodeid.ClaimRequest{AnyNode: true, Pool: 3, Layout: layout, TTL: time.Minute})
	var full *nodeid.PoolFullError
	if !errors.As(err, &full) || !errors.Is(err, ErrCorrupt) {
		t.Fatalf("claim of any node, 0 corrupt and 1, 2 held: %v; want a PoolFullError naming the corrupt node", err)
	}
}
