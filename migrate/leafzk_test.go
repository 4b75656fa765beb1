package migrate_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/firn-id/firn/internal/legacytest"
	"github.com/firn-id/firn/internal/testseam"
	"github.com/firn-id/firn/internal/testserver"
	"github.com/firn-id/firn/migrate"
	"github.com/firn-id/firn/nodeid"
	"github.com/firn-id/firn/snowflake"
	"github.com/firn-id/firn/zkstore"
)

// leafHeartbeat is the stand-ins' heartbeat, and leafWatch the watch
// --apply keeps in this test: over three heartbeats, as Leaf's 3 s
// heartbeat and the 8 s watch.
const (
	leafHeartbeat = 200 * time.Millisecond
	leafWatch     = 700 * time.Millisecond
)

type leafFleet struct {
	t       *testing.T
	servers []string
	name    string
	tree    *zkstore.Tree
	reg     *zkstore.Store
	hosts   []legacytest.SnowflakeConfig
	ids     []int64 // every ID Leaf issued
}

func newLeafFleet(t *testing.T) *leafFleet {
	zk := testserver.ZooKeeper(t)
	b := make([]byte, 4)
	rand.Read(b)
	f := &leafFleet{t: t, servers: zk.Servers(), name: "leaf-" + hex.EncodeToString(b)}
	var err error
	f.tree, err = zkstore.OpenTree(testCtx(t), zkstore.Config{Servers: f.servers, Namespace: migrate.LeafRoot(f.name)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.tree.Close() })
	f.reg, err = zkstore.New(zkstore.Config{Servers: f.servers, Namespace: "/firn/" + f.name})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.reg.Close() })
	for _, ip := range []string{"10.0.0.1", "10.0.0.2", "10.0.0.3"} {
		f.hosts = append(f.hosts, f.host(ip, t.TempDir()))
	}
	return f
}

func (f *leafFleet) host(ip, tmp string) legacytest.SnowflakeConfig {
	return legacytest.SnowflakeConfig{IP: ip, Port: "8080", Servers: f.servers, Name: f.name, TmpDir: tmp, Heartbeat: leafHeartbeat}
}

// run starts a Leaf instance and has it issue n IDs.
func (f *leafFleet) run(cfg legacytest.SnowflakeConfig, n int) *legacytest.Snowflake {
	f.t.Helper()
	s, err := legacytest.StartSnowflake(cfg)
	if err != nil {
		f.t.Fatalf("start Leaf %s: %v", cfg.IP, err)
	}
	for range n {
		id, err := s.Next()
		if err != nil {
			f.t.Fatal(err)
		}
		f.ids = append(f.ids, id)
	}
	return s
}

func (f *leafFleet) apply() (*migrate.LeafPlan, error) {
	p, err := migrate.CheckLeaf(testCtx(f.t), migrate.LeafOptions{Tree: f.tree, Servers: strings.Join(f.servers, ","), Name: f.name})
	if err != nil {
		f.t.Fatalf("check: %v", err)
	}
	return p, p.Apply(testCtx(f.t), migrate.LeafApplyOptions{Tree: f.tree, Registry: f.reg, Name: "the test registry", Space: leafSpace()})
}

func leafLayout() snowflake.Layout { l, _ := snowflake.Preset("twitter"); return l }

func leafSpace() nodeid.LayoutID {
	l := leafLayout()
	return nodeid.LayoutID{Fingerprint: l.Fingerprint(), Description: l.String()}
}

// TestLeafZooKeeperTakeover: three Leaf stand-ins register and issue; the
// takeover is refused while one still heartbeats, then applies, twice;
// firn serves Leaf's layout past every Leaf ID; and Leaf instances that
// restart after the switch start only from a cached worker ID.
func TestLeafZooKeeperTakeover(t *testing.T) {
	defer testseam.SetLeafWatch(leafWatch)()
	f := newLeafFleet(t)
	var fleet []*legacytest.Snowflake
	for i, h := range f.hosts {
		s := f.run(h, 3000)
		if s.WorkerID != int64(i) {
			t.Fatalf("Leaf %s has worker %d, want %d", h.IP, s.WorkerID, i)
		}
		fleet = append(fleet, s)
	}
	time.Sleep(2 * leafHeartbeat) // every worker has written a heartbeat
	fleet[0].Stop()
	fleet[1].Stop()
	_, err := f.apply()
	var re *migrate.RefusedError
	if !errors.As(err, &re) || !strings.Contains(err.Error(), "worker 2 (10.0.0.3:8080)") {
		t.Fatalf("apply beside a live Leaf: %v, want a refusal naming worker 2", err)
	}
	if r, err := f.reg.Reservation(testCtx(t)); err == nil && (len(r.Nodes) > 0 || r.Floor != 0) {
		t.Fatalf("the refused apply wrote %+v into the registry", r)
	}
	fleet[2].Stop()
	checkApplied(t, f)
	checkApplied(t, f) // a re-run recognises its fence
	firnIDs := serveFirn(t, f, 3000)
	checkUnique(t, f.ids, firnIDs)
	checkRestarts(t, f)
}

func checkApplied(t *testing.T, f *leafFleet) {
	t.Helper()
	p, err := f.apply()
	if err != nil {
		t.Fatalf("apply: %v", err)
	}
	if !slices.Equal(p.Reserved, []uint64{0, 1, 2}) || p.Sequence != 3 {
		t.Fatalf("reserved %v from sequence %d, want [0 1 2] from 3", p.Reserved, p.Sequence)
	}
	r, err := f.reg.Reservation(testCtx(t))
	if err != nil || !slices.Equal(r.Nodes, []uint64{0, 1, 2}) {
		t.Fatalf("registry reservation %+v, %v; want nodes [0 1 2]", r, err)
	}
	for _, id := range f.ids {
		parts, _ := leafLayout().Decompose(uint64(id))
		if parts.Time.UnixMilli() >= r.Floor {
			t.Fatalf("Leaf ID %d at %s is not below the floor %d", id, parts.Time, r.Floor)
		}
	}
}

// serveFirn takes a node of the registry in Leaf's layout and issues n IDs.
func serveFirn(t *testing.T, f *leafFleet, n int) []int64 {
	t.Helper()
	_, err := f.reg.Claim(testCtx(t), nodeid.ClaimRequest{Node: 1, Pool: 1024, Layout: leafSpace(), TTL: 2 * time.Second})
	if !errors.Is(err, nodeid.ErrNodeReserved) {
		t.Fatalf("claim of Leaf's worker 1: %v, want ErrNodeReserved", err)
	}
	l, err := nodeid.Acquire(testCtx(t), f.reg, nodeid.Config{NodeBits: 10, Layout: leafSpace(), TTL: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close(context.Background())
	if l.Node() < 3 {
		t.Fatalf("firn took node %d, one of Leaf's", l.Node())
	}
	g, err := snowflake.New(snowflake.Config{Layout: leafLayout(), Node: l.Node(), Reservation: l})
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]int64, n)
	for i := range ids {
		if ids[i], err = g.Next(testCtx(t)); err != nil {
			t.Fatal(err)
		}
	}
	return ids
}

func checkUnique(t *testing.T, leaf, firn []int64) {
	t.Helper()
	maxLeaf := slices.Max(leaf)
	seen := map[int64]bool{}
	for _, id := range append(slices.Clone(leaf), firn...) {
		if seen[id] {
			t.Fatalf("ID %d issued twice", id)
		}
		seen[id] = true
	}
	if minFirn := slices.Min(firn); minFirn <= maxLeaf {
		t.Fatalf("firn's least ID %d is not above Leaf's largest %d", minFirn, maxLeaf)
	}
}

// checkRestarts starts Leaf instances after the switch: with a cached
// worker ID they start (the hazard the docs' step removes), without one
// they refuse; as a returning instance and as a new one.
func checkRestarts(t *testing.T, f *leafFleet) {
	t.Helper()
	s, err := legacytest.StartSnowflake(f.hosts[0])
	if err != nil || !s.FromCache || s.WorkerID != 0 {
		t.Fatalf("returning Leaf with its cache: %v (from cache %t), want a start on cached worker 0", err, s != nil && s.FromCache)
	}
	s.Stop()
	if err := os.Remove(f.hosts[1].PropPath()); err != nil {
		t.Fatal(err)
	}
	if _, err := legacytest.StartSnowflake(f.hosts[1]); err == nil {
		t.Fatal("returning Leaf without its cache started")
	}
	// A new address on a host that kept a cache (the file is per port,
	// java.io.tmpdir/{leaf.name}/leafconf/{port}): while ZooKeeper
	// answers, the child version gives it a worker ID Leaf's constructor
	// refuses and the cache is not read; out of ZooKeeper's reach, the
	// cache starts it.
	cached, err := os.ReadFile(f.hosts[2].PropPath())
	if err != nil {
		t.Fatal(err)
	}
	moved := f.host("10.0.0.9", f.hosts[2].TmpDir)
	if s, err := legacytest.StartSnowflake(moved); err == nil || !strings.Contains(err.Error(), "1023") {
		t.Fatalf("new Leaf with a cache, ZooKeeper up: %v (%+v), want the worker ID refusal", err, s)
	}
	away := f.host("10.0.0.10", t.TempDir())
	away.Servers = []string{testserver.Addr(t)} // nothing listens there
	if err := os.MkdirAll(filepath.Dir(away.PropPath()), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(away.PropPath(), cached, 0o644); err != nil {
		t.Fatal(err)
	}
	s, err = legacytest.StartSnowflake(away)
	if err != nil || !s.FromCache || s.WorkerID != 2 {
		t.Fatalf("new Leaf with a cache, ZooKeeper out of reach: %v, want a start on cached worker 2", err)
	}
	s.Stop()
	fresh := f.host("10.0.0.11", t.TempDir())
	if _, err := legacytest.StartSnowflake(fresh); err == nil {
		t.Fatal("new Leaf without a cache started")
	}
	fresh.Servers = away.Servers
	if _, err := legacytest.StartSnowflake(fresh); err == nil {
		t.Fatal("new Leaf without a cache, ZooKeeper out of reach, started")
	}
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}
