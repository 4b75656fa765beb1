package migrate_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/firn-id/firn/internal/testseam"
	"github.com/firn-id/firn/internal/testserver"
	"github.com/firn-id/firn/migrate"
	"github.com/firn-id/firn/nodeid"
	"github.com/firn-id/firn/zkstore"
)

// leafZK is a Leaf tree written by hand on a real ensemble: workers are
// created as Leaf creates them (persistent sequential children of
// forever), and every worker ID ZooKeeper gave out is recorded.
type leafZK struct {
	t       *testing.T
	servers []string
	conn    *zk.Conn
	name    string
	given   []uint64 // every worker ID ZooKeeper gave out
}

func newLeafZK(t *testing.T, zks *testserver.Ensemble, conn *zk.Conn, name string) *leafZK {
	l := &leafZK{t: t, servers: zks.Servers(), conn: conn, name: name}
	for _, p := range []string{"/snowflake", migrate.LeafRoot(name), l.forever()} {
		if _, err := conn.Create(p, nil, 0, zk.WorldACL(zk.PermAll)); err != nil && !errors.Is(err, zk.ErrNodeExists) {
			t.Fatalf("create %s: %v", p, err)
		}
	}
	return l
}

func (l *leafZK) forever() string { return migrate.LeafRoot(l.name) + "/forever" }
func (l *leafZK) marker() string  { return migrate.LeafRoot(l.name) + "/" + migrate.LeafMarker }

// worker registers a worker as Leaf does, with timestamp ts (Unix ms),
// and returns its znode's name and worker ID.
func (l *leafZK) worker(ip string, ts int64) (string, uint64) {
	l.t.Helper()
	data := fmt.Appendf(nil, `{"ip":%q,"port":"8080","timestamp":%d}`, ip, ts)
	p, err := l.conn.Create(l.forever()+"/"+ip+":8080-", data, zk.FlagSequence, zk.WorldACL(zk.PermAll))
	if err != nil {
		l.t.Fatalf("register %s: %v", ip, err)
	}
	_, seq, _ := strings.Cut(path.Base(p), "-")
	id, _ := strconv.ParseUint(seq, 10, 64)
	l.given = append(l.given, id)
	return path.Base(p), id
}

func (l *leafZK) remove(znode string) {
	l.t.Helper()
	if err := l.conn.Delete(l.forever()+"/"+znode, -1); err != nil {
		l.t.Fatalf("delete %s: %v", znode, err)
	}
}

func (l *leafZK) forgeMarker(cv int) {
	l.t.Helper()
	if _, err := l.conn.Create(l.marker(), fmt.Appendf(nil, `{"childVersion":%d}`, cv), 0, zk.WorldACL(zk.PermAll)); err != nil {
		l.t.Fatalf("create the marker: %v", err)
	}
}

func (l *leafZK) tree(ctx context.Context) *zkstore.Tree {
	l.t.Helper()
	tree, err := zkstore.OpenTree(ctx, zkstore.Config{Servers: l.servers, Namespace: migrate.LeafRoot(l.name)})
	if err != nil {
		l.t.Fatal(err)
	}
	l.t.Cleanup(func() { tree.Close() })
	return tree
}

func (l *leafZK) registry() *zkstore.Store {
	l.t.Helper()
	reg, err := zkstore.New(zkstore.Config{Servers: l.servers, Namespace: "/firn/" + l.name})
	if err != nil {
		l.t.Fatal(err)
	}
	l.t.Cleanup(func() { reg.Close() })
	return reg
}

func (l *leafZK) check(ctx context.Context, o migrate.LeafOptions) (*migrate.LeafPlan, error) {
	o.Tree, o.Servers, o.Name = l.tree(ctx), "zk", l.name
	return migrate.CheckLeaf(ctx, o)
}

// hookTree runs before ahead of each of the fence's Multis: what Leaf
// instances registering (and operators deleting their znodes) between
// --apply's read and its fence do.
type hookTree struct {
	migrate.LeafTree
	before func(round int)
	rounds atomic.Int32
}

func (h *hookTree) BumpChildren(ctx context.Context, parent string, parentData []byte, from int32, n int, marker string, data []byte) error {
	h.before(int(h.rounds.Add(1)))
	return h.LeafTree.BumpChildren(ctx, parent, parentData, from, n, marker, data)
}

// TestLeafReservesEveryWorkerGivenOut: whatever the tree holds — a
// takeover marker firn did not write (forged, or left beside a forever
// recreated since), workers deleted before the check, workers registered
// and deleted between the check's read and the fence — every worker ID
// ZooKeeper gave out before the fence landed ends reserved, or the
// takeover is refused with nothing in the registry. Before the fix a
// marker {"childVersion":0} beside child version 4 reserved only the
// workers listed, and a worker registered and deleted between the read
// and the fence was reserved by nobody: firn took its node.
func TestLeafReservesEveryWorkerGivenOut(t *testing.T) {
	defer testseam.SetLeafWatch(300 * time.Millisecond)()
	zks := testserver.ZooKeeper(t)
	ctx := testCtx(t)
	conn, _, err := zk.Connect(zks.Servers(), 4*time.Second, zk.WithLogInfo(false))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	now := time.Now().UnixMilli()
	var re *migrate.RefusedError

	t.Run("marker beside a child version below 1024", func(t *testing.T) {
		l := newLeafZK(t, zks, conn, "forged")
		var second string
		for i := range 3 {
			z, _ := l.worker(fmt.Sprintf("10.0.0.%d", i+1), now)
			if i == 1 {
				second = z
			}
		}
		l.remove(second)
		l.forgeMarker(0)
		_, err := l.check(ctx, migrate.LeafOptions{})
		if !errors.As(err, &re) || !strings.Contains(err.Error(), l.marker()) || !strings.Contains(err.Error(), "below 1024") {
			t.Fatalf("check beside a forged marker: %v; want a refusal naming %s", err, l.marker())
		}
		// The advice, followed literally.
		if err := conn.Delete(l.marker(), -1); err != nil {
			t.Fatal(err)
		}
		p, err := l.check(ctx, migrate.LeafOptions{})
		if err != nil || !reservesAll(p.Reserved, l.given) {
			t.Fatalf("after deleting the marker: %v, reserved %v; want %v", err, p.Reserved, l.given)
		}
	})

	t.Run("forged marker beside a child version past 1023", func(t *testing.T) {
		l := newLeafZK(t, zks, conn, "churned")
		// A fleet whose hosts changed address often: 1030 workers, all
		// but the last few deleted.
		var znodes []string
		for i := range 1030 {
			z, _ := l.worker(fmt.Sprintf("10.1.%d.%d", i/256, i%256), now)
			znodes = append(znodes, z)
		}
		for _, z := range znodes[:1025] {
			l.remove(z)
		}
		l.forgeMarker(1)
		_, err := l.check(ctx, migrate.LeafOptions{})
		if !errors.As(err, &re) || !strings.Contains(err.Error(), "not created by the transaction that fenced") {
			t.Fatalf("check beside a forged marker past 1023: %v; want a refusal", err)
		}
		if err := conn.Delete(l.marker(), -1); err != nil {
			t.Fatal(err)
		}
		p, err := l.check(ctx, migrate.LeafOptions{})
		if err != nil || len(p.Reserved) != migrate.LeafWorkers {
			t.Fatalf("after deleting the marker: %v, %d reserved; want all %d", err, len(p.Reserved), migrate.LeafWorkers)
		}
	})

	t.Run("a marker outliving its forever", func(t *testing.T) {
		l := newLeafZK(t, zks, conn, "reborn")
		l.worker("10.2.0.1", now)
		applyLeaf(ctx, t, l, l.tree(ctx), migrate.LeafOptions{})
		// forever deleted and recreated, the marker kept: Leaf starts
		// again from worker 0.
		kids, _, err := conn.Children(l.forever())
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range kids {
			l.remove(k)
		}
		if err := conn.Delete(l.forever(), -1); err != nil {
			t.Fatal(err)
		}
		l = newLeafZK(t, zks, conn, "reborn")
		l.worker("10.2.0.1", now)
		l.worker("10.2.0.2", now)
		if _, err := l.check(ctx, migrate.LeafOptions{}); !errors.As(err, &re) || !strings.Contains(err.Error(), l.marker()) {
			t.Fatalf("check beside a marker older than forever: %v; want a refusal naming it", err)
		}
	})

	t.Run("a second fleet into one namespace", func(t *testing.T) {
		a, b := newLeafZK(t, zks, conn, "fleet-a"), newLeafZK(t, zks, conn, "fleet-b")
		a.worker("10.6.0.1", now)
		b.worker("10.6.1.1", now)
		reg, err := zkstore.New(zkstore.Config{Servers: zks.Servers(), Namespace: "/firn/shared"})
		if err != nil {
			t.Fatal(err)
		}
		defer reg.Close()
		for i, l := range []*leafZK{a, b} {
			p, err := l.check(ctx, migrate.LeafOptions{})
			if err != nil {
				t.Fatal(err)
			}
			err = p.Apply(ctx, migrate.LeafApplyOptions{Tree: l.tree(ctx), Registry: reg, Name: "reg", Space: leafSpace()})
			if i == 0 && err != nil || i == 1 && (!errors.As(err, &re) || !strings.Contains(err.Error(), "namespace of its own")) {
				t.Fatalf("apply of fleet %d: %v", i, err)
			}
		}
	})

	t.Run("workers given out between the read and the fence", func(t *testing.T) {
		for seed := range uint64(6) {
			l := newLeafZK(t, zks, conn, fmt.Sprintf("race-%d", seed))
			rng := rand.New(rand.NewPCG(seed, 34))
			var live []string
			for i := range 2 + rng.IntN(6) {
				z, _ := l.worker(fmt.Sprintf("10.3.%d.%d", seed, i), now)
				live = append(live, z)
			}
			for _, i := range rng.Perm(len(live))[:rng.IntN(len(live))] {
				l.remove(live[i])
			}
			racing := 1 + rng.IntN(3) // rounds in which workers come and go
			tree := &hookTree{LeafTree: l.tree(ctx), before: func(round int) {
				if round > racing {
					return
				}
				for i := range 1 + rng.IntN(3) {
					z, _ := l.worker(fmt.Sprintf("10.4.%d.%d", round, i), now)
					if rng.IntN(2) == 0 {
						l.remove(z)
					}
				}
			}}
			reg := l.registry()
			p, err := l.check(ctx, migrate.LeafOptions{})
			if err != nil {
				t.Fatal(err)
			}
			err = p.Apply(ctx, migrate.LeafApplyOptions{Tree: tree, Registry: reg, Name: "reg", Space: leafSpace()})
			r, rerr := reg.Reservation(ctx)
			if rerr != nil {
				t.Fatal(rerr)
			}
			given := slices.DeleteFunc(slices.Clone(l.given), func(id uint64) bool { return id >= migrate.LeafWorkers })
			switch {
			case err != nil && len(r.Nodes) > 0:
				t.Errorf("seed %d: apply refused (%v) yet wrote %v", seed, err, r.Nodes)
			case err == nil && !reservesAll(r.Nodes, given):
				t.Errorf("seed %d: reserved %v; ZooKeeper gave out %v before the fence", seed, r.Nodes, given)
			}
			// After the fence, a new Leaf instance gets an ID its
			// constructor refuses. ZooKeeper reports a child version that
			// counts deletes too: pushing that past 1023 (as firn did
			// before the fix) left the next worker ID below 1024 when
			// workers had been deleted, and unreserved.
			if _, id := l.worker("10.5.0.1", now); err == nil && id < migrate.LeafWorkers {
				t.Errorf("seed %d: a Leaf instance registered after the fence got worker %d", seed, id)
			}
			t.Logf("seed %d: %d racing rounds, given %v, apply %v", seed, racing, given, err)
		}
	})
}

func applyLeaf(ctx context.Context, t *testing.T, l *leafZK, tree migrate.LeafTree, o migrate.LeafOptions) (*migrate.LeafPlan, *zkstore.Store) {
	t.Helper()
	p, err := l.check(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	reg := l.registry()
	if err := p.Apply(ctx, migrate.LeafApplyOptions{Tree: tree, Registry: reg, Name: "reg", Space: leafSpace()}); err != nil {
		t.Fatal(err)
	}
	return p, reg
}

// reservesAll reports whether every ID of given is in reserved.
func reservesAll(reserved, given []uint64) bool {
	for _, id := range given {
		if !slices.Contains(reserved, id) {
			return false
		}
	}
	return true
}

// TestLeafFloorAhead: a worker timestamp past the layout's end, or far
// ahead of now, is refused naming the worker instead of becoming a floor
// that no claim can pass (before the fix a timestamp of 10^18 made every
// claim fail with "layout exhausted", for ever). --leaf-skip-timestamp
// leaves it out of the floor with a note, and the worker's ID is then
// pinned: unreserve refuses it.
func TestLeafFloorAhead(t *testing.T) {
	defer testseam.SetLeafWatch(300 * time.Millisecond)()
	zks := testserver.ZooKeeper(t)
	ctx := testCtx(t)
	conn, _, err := zk.Connect(zks.Servers(), 4*time.Second, zk.WithLogInfo(false))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	now := time.Now()
	var re *migrate.RefusedError
	for _, tc := range []struct {
		name string
		ts   int64
		want string
	}{
		{"past the layout's end", 1_000_000_000_000_000_000, "past the end of Leaf's layout"},
		{"largest", 1<<63 - 1, "past the end of Leaf's layout"},
		{"an hour ahead", now.Add(time.Hour).UnixMilli(), "ahead of the time of this check"},
		{"two minutes ahead", now.Add(2 * time.Minute).UnixMilli(), "ahead of the time of this check"},
		// In the range of firn's own fence, with no marker of firn's:
		// a Leaf clock, read as it is.
		{"in the fence's range", migrate.LeafFenceBase + now.UnixMilli(), "past the end of Leaf's layout"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := newLeafZK(t, zks, conn, "ahead-"+strings.ReplaceAll(tc.name, " ", "-"))
			l.worker("10.0.0.1", now.UnixMilli())
			_, jumped := l.worker("10.0.0.2", tc.ts)
			l.worker("10.0.0.3", now.UnixMilli())
			_, err := l.check(ctx, migrate.LeafOptions{})
			if !errors.As(err, &re) || !strings.Contains(err.Error(), tc.want) ||
				!strings.Contains(err.Error(), fmt.Sprintf("worker %d (10.0.0.2:8080)", jumped)) ||
				!strings.Contains(err.Error(), fmt.Sprintf("--leaf-skip-timestamp %d --note", jumped)) {
				t.Fatalf("check: %v; want a refusal naming worker %d and the way on", err, jumped)
			}
			if _, err := l.check(ctx, migrate.LeafOptions{SkipTimestamps: []uint64{jumped}}); !errors.As(err, &re) || !strings.Contains(err.Error(), "--note") {
				t.Fatalf("skip without a note: %v; want a refusal asking for --note", err)
			}
			o := migrate.LeafOptions{SkipTimestamps: []uint64{jumped}, Note: "ops: host 10.0.0.2 clock jumped, TICKET-1"}
			p, reg := applyLeaf(ctx, t, l, l.tree(ctx), o)
			if p.Floor > time.Now().Add(migrate.LeafHeartbeat+migrate.LeafSkewMargin).UnixMilli() {
				t.Errorf("floor %d is ahead of now plus the margins", p.Floor)
			}
			r, err := reg.Reservation(ctx)
			if err != nil || !reservesAll(r.Nodes, l.given) || !slices.ContainsFunc(r.Pinned, func(p nodeid.Pinned) bool {
				return p.Node == jumped && strings.Contains(p.Note, "TICKET-1")
			}) {
				t.Fatalf("reservation %+v, %v; want every worker reserved and %d pinned with the note", r, err, jumped)
			}
			var rerr *nodeid.ReservedError
			if _, err := reg.Unreserve(ctx, jumped, "caches deleted"); !errors.As(err, &rerr) || !rerr.Pinned {
				t.Fatalf("unreserve of the skipped worker: %v; want a refusal", err)
			}
			if _, err := reg.Unreserve(ctx, 0, "caches deleted"); err != nil {
				t.Fatalf("unreserve of a worker under the floor: %v", err)
			}
			// A re-run keeps the pin, and claims start at the floor.
			applyLeaf(ctx, t, l, l.tree(ctx), o)
			if r, err := reg.Reservation(ctx); err != nil || !r.Holds(jumped) || r.Holds(0) {
				t.Fatalf("after a re-run: %+v, %v; want %d still reserved and 0 still let out", r, err, jumped)
			}
			_, err = reg.Claim(ctx, nodeid.ClaimRequest{Node: jumped, Pool: 1024, Layout: leafSpace(), TTL: 4 * time.Second})
			if !errors.Is(err, nodeid.ErrNodeReserved) {
				t.Fatalf("claim of the skipped worker: %v; want ErrNodeReserved", err)
			}
		})
	}
}
