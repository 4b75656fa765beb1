package migrate_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/firn-id/firn/internal/testseam"
	"github.com/firn-id/firn/internal/testserver"
	"github.com/firn-id/firn/migrate"
	"github.com/firn-id/firn/nodeid"
	"github.com/firn-id/firn/zkstore"
)

// TestLeafOddTrees: odd leaf names and odd worker znodes are refused or
// read, never a panic; a fleet of 1024 workers reserves all 1024.
func TestLeafOddTrees(t *testing.T) {
	defer testseam.SetLeafWatch(300 * time.Millisecond)()
	zks := testserver.ZooKeeper(t)
	ctx := testCtx(t)
	conn, _, err := zk.Connect(zks.Servers(), 4*time.Second, zk.WithLogInfo(false))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	mk := func(p string, data []byte, flags int32) string {
		t.Helper()
		parts := strings.Split(strings.TrimPrefix(p, "/"), "/")
		for i := range parts[:len(parts)-1] {
			conn.Create("/"+strings.Join(parts[:i+1], "/"), nil, 0, zk.WorldACL(zk.PermAll))
		}
		got, err := conn.Create(p, data, flags, zk.WorldACL(zk.PermAll))
		if err != nil && !errors.Is(err, zk.ErrNodeExists) {
			t.Fatalf("create %s: %v", p, err)
		}
		return got
	}
	check := func(name string) (*migrate.LeafPlan, error) {
		tree, err := zkstore.OpenTree(ctx, zkstore.Config{Servers: zks.Servers(), Namespace: migrate.LeafRoot(name)})
		if err != nil {
			return nil, fmt.Errorf("open: %w", err)
		}
		defer tree.Close()
		return migrate.CheckLeaf(ctx, migrate.LeafOptions{Tree: tree, Servers: "zk", Name: name})
	}
	for _, name := range []string{"", ".", "..", "a/b", "/", "a\x00b", "layout", "held"} {
		_, err := check(name)
		t.Logf("name %q: %v", name, err)
		if err == nil {
			t.Errorf("name %q: read", name)
		}
	}
	ep := func(ts any) []byte { return []byte(fmt.Sprintf(`{"ip":"10.0.0.1","port":"8080","timestamp":%v}`, ts)) }
	for i, tc := range []struct {
		kid  string
		data []byte
		read bool // a worker CheckLeaf reads; the others it refuses
	}{
		{"10.0.0.1:8080-abc", ep(1), false},
		{"10.0.0.1:8080", ep(1), false},
		{"10.0.0.1:8080-", ep(1), false},
		{"10.0.0.1:8080--1", ep(1), false},
		{"10.0.0.1:8080-99999999999", ep(1), false},
		{"10.0.0.1:8080-0000000000", []byte("garbage"), false},
		{"10.0.0.1:8080-0000000000", nil, false},
		{"10.0.0.1:8080-0000000000", ep(`"12"`), false},
		{"10.0.0.1:99999-0000000000", ep(9223372036854775807), false}, // a floor past the layout's end
		{"10.0.0.1:8080-0000000000", []byte("null"), true},
	} {
		name := fmt.Sprintf("odd-%d", i)
		mk(migrate.LeafRoot(name)+"/forever/"+tc.kid, tc.data, 0)
		p, err := check(name)
		var re *migrate.RefusedError
		switch {
		case tc.read && (err != nil || len(p.Reserved) != 1 || p.Reserved[0] != 0):
			t.Errorf("%s %q: %v, %+v; want worker 0 read and reserved", tc.kid, tc.data, err, p)
		case !tc.read && !errors.As(err, &re):
			t.Errorf("%s %q: %v; want a refusal", tc.kid, tc.data, err)
		}
	}

	// 1024 workers, then the takeover, within a deadline of their own
	// and a generous one: the takeover reads every worker four times,
	// each read after a Sync (8 s under -race alone; past 30 s beside
	// the other packages of make test). It bounds a hang, not the speed.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	name := "big"
	forever := migrate.LeafRoot(name) + "/forever"
	mk(forever, nil, 0)
	ops := []any{}
	for i := range migrate.LeafWorkers {
		ops = append(ops, &zk.CreateRequest{Path: forever + fmt.Sprintf("/10.0.%d.%d:8080-", i/256, i%256), Data: ep(time.Now().UnixMilli()), Acl: zk.WorldACL(zk.PermAll), Flags: zk.FlagSequence})
		if len(ops) == 256 {
			if _, err := conn.Multi(ops...); err != nil {
				t.Fatal(err)
			}
			ops = ops[:0]
		}
	}
	tree, err := zkstore.OpenTree(ctx, zkstore.Config{Servers: zks.Servers(), Namespace: migrate.LeafRoot(name)})
	if err != nil {
		t.Fatal(err)
	}
	defer tree.Close()
	p, err := migrate.CheckLeaf(ctx, migrate.LeafOptions{Tree: tree, Servers: "zk", Name: name})
	if err != nil {
		t.Fatal(err)
	}
	reg, err := zkstore.New(zkstore.Config{Servers: zks.Servers(), Namespace: "/firn/big"})
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Close()
	start := time.Now()
	if err := p.Apply(ctx, migrate.LeafApplyOptions{Tree: tree, Registry: reg, Name: "reg", Space: leafSpace()}); err != nil {
		t.Fatalf("apply 1024: %v", err)
	}
	t.Logf("apply of 1024 took %s: %v", time.Since(start), p.Applied)
	r, err := reg.Reservation(ctx)
	if err != nil || len(r.Nodes) != migrate.LeafWorkers {
		t.Fatalf("reservation: %d nodes, %v", len(r.Nodes), err)
	}
	_, err = reg.Claim(ctx, nodeid.ClaimRequest{AnyNode: true, Pool: 1024, Layout: leafSpace(), TTL: 4 * time.Second})
	if !errors.Is(err, nodeid.ErrPoolFull) {
		t.Fatalf("claim with every Leaf worker reserved: %v", err)
	}
}
