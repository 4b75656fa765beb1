package localstore_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/firn-id/firn/localstore"
	"github.com/firn-id/firn/nodeid"
	"github.com/firn-id/firn/nodeid/nodeidtest"
)

// otherLayout is a second ID space beside nodeidtest.Layout.
var otherLayout = nodeid.LayoutID{Fingerprint: "v1:other", Description: "other: 41 time + 12 node + 10 sequence"}

// nodeLock is the lock file of node that s holds or held last, found
// wherever its layout's node directory is: a lock file names the data
// directory of its holder.
func nodeLock(t *testing.T, s *localstore.Store, node uint64) string {
	t.Helper()
	name := "node-" + strconv.FormatUint(node, 10) + ".lock"
	all, _ := filepath.Glob(filepath.Join(s.NodeDir(), name))
	more, _ := filepath.Glob(filepath.Join(s.NodeDir(), "*", name))
	var found []string
	for _, f := range append(all, more...) {
		if b, _ := os.ReadFile(f); strings.Contains(string(b), "\n"+s.Dir()+"\n") {
			found = append(found, f)
		}
	}
	if len(found) != 1 {
		t.Fatalf("lock files of node %d under %s: %v; want one", node, s.NodeDir(), found)
	}
	return found[0]
}

// writeRecord writes a layout record as a firn of the previous version
// wrote it: the fingerprint, then the description.
func writeRecord(t *testing.T, path string, id nodeid.LayoutID) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(id.Fingerprint+"\n"+id.Description+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
}

// holdAsOldFirn takes the OS lock a firn of the previous version takes
// for node in the user's node directory itself, until the test ends or
// release is called.
func holdAsOldFirn(t *testing.T, root string, node uint64) (release func()) {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(root, "node-"+strconv.FormatUint(node, 10)+".lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		t.Fatalf("lock node %d as an older firn: %v", node, err)
	}
	t.Cleanup(func() { f.Close() })
	return func() { f.Close() }
}

// TestEachLayoutHasItsOwnNodes: a layout is an ID space of its own, so a
// data directory of another layout beside the quick start's takes node 0
// of its own layout's nodes; a second data directory of the first layout
// still takes node 1, never the node the first holds. A data directory
// keeps the one layout it recorded.
func TestEachLayoutHasItsOwnNodes(t *testing.T) {
	nodes := t.TempDir()
	a := openConfig(t, localstore.Config{Dir: t.TempDir(), NodeDir: nodes})
	b := openConfig(t, localstore.Config{Dir: t.TempDir(), NodeDir: nodes})
	c := openConfig(t, localstore.Config{Dir: t.TempDir(), NodeDir: nodes})
	if got := claim(t, a, anyNode(8)); got.Node != 0 {
		t.Fatalf("first data directory: node %d, want 0", got.Node)
	}
	other := nodeid.ClaimRequest{AnyNode: true, Pool: 8, Layout: otherLayout}
	if got := claim(t, b, other); got.Node != 0 {
		t.Fatalf("a data directory of another layout: node %d, want node 0 of its own layout", got.Node)
	}
	if got := claim(t, c, anyNode(8)); got.Node != 1 {
		t.Fatalf("a second data directory of the first layout: node %d, want 1", got.Node)
	}
	if la, lb := nodeLock(t, a, 0), nodeLock(t, b, 0); la == lb {
		t.Fatalf("node 0 of two layouts locks one file %s", la)
	}
	_, err := a.Claim(context.Background(), other)
	var lm *nodeid.LayoutMismatchError
	if !errors.As(err, &lm) || lm.Stored != nodeidtest.Layout.Description {
		t.Fatalf("claim with another layout in a data directory that recorded one: %v; want *LayoutMismatchError naming %q", err, nodeidtest.Layout.Description)
	}
}

// TestUpgradeKeepsTheRecordedLayoutsNodes: a user's node directory
// written by the previous version records layout L in itself, and an
// older firn of L still running holds node 0 there, whose HWM it wrote.
// This version with L must use those very files: refused node 0, given
// node 1 beside it, and once the old process ends, node 0 from its HWM.
// Another layout gets a directory of its own; the record stays L.
func TestUpgradeKeepsTheRecordedLayoutsNodes(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	writeRecord(t, filepath.Join(root, "layout"), nodeidtest.Layout)
	const oldHWM = 1_700_000_000_000
	writeHWM(t, filepath.Join(root, "node-0.hwm"), oldHWM)
	release := holdAsOldFirn(t, root, 0)

	s := openConfig(t, localstore.Config{Dir: t.TempDir(), NodeDir: root})
	if _, err := s.Claim(ctx, oneNode(0)); !errors.Is(err, nodeid.ErrNodeHeld) {
		t.Fatalf("claim of node 0 an older firn of the same layout holds: %v; want ErrNodeHeld", err)
	}
	if c := claim(t, s, anyNode(8)); c.Node != 1 {
		t.Fatalf("any node beside an older firn holding node 0: node %d, want 1", c.Node)
	}
	if l := nodeLock(t, s, 1); filepath.Dir(l) != root {
		t.Fatalf("node 1 of the recorded layout locks %s; want it in %s, where an older firn looks", l, root)
	}
	release()
	if c := claim(t, s, oneNode(0)); c.HWM < oldHWM {
		t.Fatalf("node 0 after the older firn ended: HWM %d, below the %d it wrote", c.HWM, oldHWM)
	}

	o := openConfig(t, localstore.Config{Dir: t.TempDir(), NodeDir: root})
	if c := claim(t, o, nodeid.ClaimRequest{AnyNode: true, Pool: 8, Layout: otherLayout}); c.Node != 0 {
		t.Fatalf("another layout beside the recorded one: node %d, want node 0 of its own", c.Node)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "layout")); !strings.HasPrefix(string(b), nodeidtest.Layout.Fingerprint+"\n") {
		t.Fatalf("the user's node directory's record after another layout: %q; want %s's still", b, nodeidtest.Layout.Fingerprint)
	}
}

// TestOlderFirnRefusesANodeDirectoryByLayout: a user's node directory
// first used by this version holds a node directory per layout. An older
// firn compares the first line of its record with its layout's
// fingerprint and refuses on a difference; were it to accept, it would
// take nodes in the user's node directory beside those its layout's
// subdirectory hands out. So the record must match no layout.
func TestOlderFirnRefusesANodeDirectoryByLayout(t *testing.T) {
	root := t.TempDir()
	s := openConfig(t, localstore.Config{Dir: t.TempDir(), NodeDir: root})
	claim(t, s, anyNode(8))
	b, err := os.ReadFile(filepath.Join(root, "layout"))
	if err != nil {
		t.Fatal(err)
	}
	first, _, _ := strings.Cut(string(b), "\n")
	if first == nodeidtest.Layout.Fingerprint || strings.HasPrefix(first, "v1:") {
		t.Fatalf("the user's node directory records %q: an older firn of that layout would take nodes there", first)
	}
	if filepath.Dir(nodeLock(t, s, 0)) == root {
		t.Fatalf("node 0 locked in the user's node directory itself, where an older firn looks")
	}
}

// TestNodeFilesWithoutARecordStayTheirs: a user's node directory holding
// node files but no layout record (written before layouts were recorded
// there) is taken as the first claim's layout's, as the previous version
// took it, so its HWMs are not left behind.
func TestNodeFilesWithoutARecordStayTheirs(t *testing.T) {
	root := t.TempDir()
	writeHWM(t, filepath.Join(root, "node-0.hwm"), 9000)
	s := openConfig(t, localstore.Config{Dir: t.TempDir(), NodeDir: root})
	if c := claim(t, s, oneNode(0)); c.HWM != 9000 {
		t.Fatalf("claim of node 0 beside its unrecorded HWM: %d, want 9000", c.HWM)
	}
}

// TestNoTwoStoresOfALayoutHoldOneNode is a property test: data
// directories of two layouts over one user's node directory (fresh, or
// one the previous version recorded a layout in, with older firns of
// that layout claiming beside), in random order, claim, renew, release
// and crash. At every step no node of a layout is held twice, and every
// claim starts at or past every HWM confirmed for its node.
func TestNoTwoStoresOfALayoutHoldOneNode(t *testing.T) {
	layouts := []nodeid.LayoutID{nodeidtest.Layout, otherLayout}
	for seed := range 10 {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { checkNodeOwnership(t, uint64(seed), layouts) })
	}
}

type ownerKey struct {
	layout string
	node   uint64
}

func checkNodeOwnership(t *testing.T, seed uint64, layouts []nodeid.LayoutID) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(seed, 1))
	root := t.TempDir()
	upgraded := seed%2 == 1 // the previous version recorded layouts[0] in the root
	if upgraded {
		writeRecord(t, filepath.Join(root, "layout"), layouts[0])
	}
	const pool = 3
	type dir struct {
		path   string
		layout nodeid.LayoutID
		s      *localstore.Store
		held   map[uint64]nodeid.Claim
	}
	var dirs []*dir
	for i := range 5 {
		d := &dir{path: t.TempDir(), layout: layouts[i%2]}
		dirs = append(dirs, d)
	}
	reopen := func(d *dir) {
		if d.s != nil {
			d.s.Close() // a crash: every lock ends, nothing is released
		}
		d.s = openConfig(t, localstore.Config{Dir: d.path, NodeDir: root})
		d.held = map[uint64]nodeid.Claim{}
	}
	for _, d := range dirs {
		reopen(d)
	}
	holder := map[ownerKey]string{}
	confirmed := map[ownerKey]int64{}
	// An older firn of layouts[0], in the root itself: its held nodes.
	old := map[uint64]func(){}
	hwm := int64(1_700_000_000_000)
	take := func(who string, k ownerKey, start int64) {
		if other, ok := holder[k]; ok {
			t.Fatalf("seed %d: node %d of %s taken by %s while %s holds it", seed, k.node, k.layout, who, other)
		}
		if start < confirmed[k] {
			t.Fatalf("seed %d: %s took node %d of %s from HWM %d, below the confirmed %d", seed, who, k.node, k.layout, start, confirmed[k])
		}
		holder[k] = who
	}
	for step := range 200 {
		d := dirs[rng.IntN(len(dirs))]
		hwm += 1000
		switch op := rng.IntN(10); {
		case op < 4:
			req := nodeid.ClaimRequest{AnyNode: true, Pool: pool, Layout: d.layout}
			if op == 0 {
				req = nodeid.ClaimRequest{Node: rng.Uint64N(pool), Pool: pool, Layout: d.layout}
			}
			c, err := d.s.Claim(ctx, req)
			if errors.Is(err, nodeid.ErrNodeHeld) || errors.Is(err, nodeid.ErrPoolFull) {
				continue
			}
			if err != nil {
				t.Fatalf("seed %d step %d: claim: %v", seed, step, err)
			}
			take(d.path, ownerKey{d.layout.Fingerprint, c.Node}, c.HWM)
			d.held[c.Node] = c
		case op < 7:
			for node, c := range d.held {
				got, err := d.s.Renew(ctx, c, hwm)
				if err != nil {
					t.Fatalf("seed %d step %d: renew: %v", seed, step, err)
				}
				k := ownerKey{d.layout.Fingerprint, node}
				confirmed[k] = max(confirmed[k], got)
				break
			}
		case op < 8:
			for node, c := range d.held {
				if err := d.s.Release(ctx, c); err != nil {
					t.Fatal(err)
				}
				delete(holder, ownerKey{d.layout.Fingerprint, node})
				delete(d.held, node)
				break
			}
		case op < 9:
			for node := range d.held {
				delete(holder, ownerKey{d.layout.Fingerprint, node})
			}
			reopen(d)
		case upgraded:
			// An older firn of the recorded layout claims a node, or ends.
			node := rng.Uint64N(pool)
			k := ownerKey{layouts[0].Fingerprint, node}
			if release, ok := old[node]; ok {
				release()
				delete(old, node)
				delete(holder, k)
				continue
			}
			f, err := os.OpenFile(filepath.Join(root, "node-"+strconv.FormatUint(node, 10)+".lock"), os.O_RDWR|os.O_CREATE, 0o600)
			if err != nil {
				t.Fatal(err)
			}
			if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
				f.Close()
				continue
			}
			b, _ := os.ReadFile(filepath.Join(root, "node-"+strconv.FormatUint(node, 10)+".hwm"))
			start, _ := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
			take("an older firn", k, start)
			old[node] = func() { f.Close() }
		}
	}
	for _, release := range old {
		release()
	}
}
