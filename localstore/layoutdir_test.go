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
var otherLayout = nodeid.LayoutID{Fingerprint: "v1:other", Description: "other: 41 time + 12 node + 10 sequence", Bits: "bits1:other"}

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

// TestLayoutsShareTheUsersNodes: a data directory of another layout
// beside the quick start's is served, and takes a node no other data
// directory of the user holds, whatever its layout: node 1 beside node 0.
// A data directory keeps the one layout it recorded.
func TestLayoutsShareTheUsersNodes(t *testing.T) {
	nodes := t.TempDir()
	a := openConfig(t, localstore.Config{Dir: t.TempDir(), NodeDir: nodes})
	b := openConfig(t, localstore.Config{Dir: t.TempDir(), NodeDir: nodes})
	c := openConfig(t, localstore.Config{Dir: t.TempDir(), NodeDir: nodes})
	if got := claim(t, a, anyNode(8)); got.Node != 0 {
		t.Fatalf("first data directory: node %d, want 0", got.Node)
	}
	other := nodeid.ClaimRequest{AnyNode: true, Pool: 8, Layout: otherLayout}
	if got := claim(t, b, other); got.Node != 1 {
		t.Fatalf("a data directory of another layout: node %d, want 1", got.Node)
	}
	if got := claim(t, c, anyNode(8)); got.Node != 2 {
		t.Fatalf("a second data directory of the first layout: node %d, want 2", got.Node)
	}
	_, err := a.Claim(context.Background(), other)
	var lm *nodeid.LayoutMismatchError
	if !errors.As(err, &lm) || lm.Stored != nodeidtest.Layout.Description {
		t.Fatalf("claim with another layout in a data directory that recorded one: %v; want *LayoutMismatchError naming %q", err, nodeidtest.Layout.Description)
	}
}

// sameBits is nodeidtest.Layout's ID bits named otherwise ([worker:10]
// for [node:10], say), and opaqueBits the same bits permuted.
var (
	sameBits   = nodeid.LayoutID{Fingerprint: "v1:suite-worker", Description: "suite with a worker field", Bits: nodeidtest.Layout.Bits}
	opaqueBits = nodeid.LayoutID{Fingerprint: nodeidtest.Layout.Fingerprint + ";key", Description: "suite, opaque", Bits: nodeidtest.Layout.Bits}
)

// TestSameBitsAreOneSpace: layouts that differ only in the names or split
// of their node fields, or in an opaque key, compose the same IDs. The
// user's node directory records the first and refuses the others, in
// every data directory, even after the first has ended; and while it
// runs none of them ever holds its node.
func TestSameBitsAreOneSpace(t *testing.T) {
	ctx := context.Background()
	for _, second := range []nodeid.LayoutID{sameBits, opaqueBits} {
		t.Run(second.Description, func(t *testing.T) {
			nodes := t.TempDir()
			a := openConfig(t, localstore.Config{Dir: t.TempDir(), NodeDir: nodes})
			b := openConfig(t, localstore.Config{Dir: t.TempDir(), NodeDir: nodes})
			ca := claim(t, a, oneNode(0))
			for _, req := range []nodeid.ClaimRequest{
				{Node: 0, Pool: 8, Layout: second},
				{AnyNode: true, Pool: 8, Layout: second},
			} {
				_, err := b.Claim(ctx, req)
				var sm *localstore.SpaceMismatchError
				if !errors.As(err, &sm) || !errors.Is(err, nodeid.ErrLayoutMismatch) || sm.Stored != nodeidtest.Layout.Description {
					t.Fatalf("claim %+v with the ID bits of a recorded layout: %v; want *SpaceMismatchError naming %q", req, err, nodeidtest.Layout.Description)
				}
			}
			if err := a.Release(ctx, ca); err != nil {
				t.Fatal(err)
			}
			if _, err := b.Claim(ctx, nodeid.ClaimRequest{AnyNode: true, Pool: 8, Layout: second}); !errors.Is(err, nodeid.ErrLayoutMismatch) {
				t.Fatalf("claim with the ID bits of a recorded layout, none running: %v; want ErrLayoutMismatch", err)
			}
			// b recorded nothing: the recorded layout is served there.
			if c := claim(t, b, anyNode(8)); c.Node != 0 {
				t.Fatalf("the recorded layout in the refused data directory: node %d, want 0", c.Node)
			}
		})
	}
}

// TestUpgradeKeepsTheRecordedLayoutsNodes: a user's node directory
// written by a previous version records layout L in itself, and an older
// firn of L still running holds node 0 there, whose HWM it wrote. This
// version with L must use those very files: refused node 0, given node 1
// beside it, and once the old process ends, node 0 from its HWM. Another
// layout takes yet another node; the record stays L.
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
	if c := claim(t, o, nodeid.ClaimRequest{AnyNode: true, Pool: 8, Layout: otherLayout}); c.Node != 2 {
		t.Fatalf("another layout beside the recorded one holding nodes 0 and 1: node %d, want 2", c.Node)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "layout")); !strings.HasPrefix(string(b), nodeidtest.Layout.Fingerprint+"\n") {
		t.Fatalf("the user's node directory's record after another layout: %q; want %s's still", b, nodeidtest.Layout.Fingerprint)
	}
}

// TestOlderFirnRefusesANodeDirectoryByLayout: a user's node directory
// first used by this version is marked as one every layout shares, in
// the user's node directory itself, where node 0 is locked.
func TestOlderFirnRefusesANodeDirectoryByLayout(t *testing.T) {
	root := t.TempDir()
	s := openConfig(t, localstore.Config{Dir: t.TempDir(), NodeDir: root})
	claim(t, s, anyNode(8))
	if a, b := olderFirnsClaim(root, nodeidtest.Layout.Fingerprint); a != "" || b != "" {
		t.Fatalf("an older firn of the first claim's layout claims in %q (f871c00), %q (f4ee8fd)", a, b)
	}
	if filepath.Dir(nodeLock(t, s, 0)) != root {
		t.Fatalf("node 0 not locked in the user's node directory itself, where every firn before looked")
	}
}

// TestUnrecordedNodeFilesAreEveryLayouts: a user's node directory holding
// node files but no layout record was written by a firn before layouts
// were recorded there; one such firn still runs and holds node 0, whose
// HWM it wrote. Its layout is unknown, so no layout may take the
// directory as its own: a first claim of another layout (js53 after an
// upgrade, say) marks it, and neither that layout nor the old process's
// own ever takes node 0 while it is held, or below its HWM after.
func TestUnrecordedNodeFilesAreEveryLayouts(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	const oldHWM = 1_700_000_000_000
	writeHWM(t, filepath.Join(root, "node-0.hwm"), oldHWM)
	release := holdAsOldFirn(t, root, 0)

	o := openConfig(t, localstore.Config{Dir: t.TempDir(), NodeDir: root})
	if c := claim(t, o, nodeid.ClaimRequest{AnyNode: true, Pool: 8, Layout: otherLayout}); c.Node == 0 {
		t.Fatal("another layout took node 0 while a firn that recorded no layout holds it")
	}
	if b, _ := os.ReadFile(filepath.Join(root, "layout")); strings.HasPrefix(string(b), otherLayout.Fingerprint+"\n") {
		t.Fatalf("the first claim's layout was recorded as the old firn's: %q", b)
	}
	s := openConfig(t, localstore.Config{Dir: t.TempDir(), NodeDir: root})
	if c := claim(t, s, anyNode(8)); c.Node == 0 {
		t.Fatal("the old firn's layout took node 0 while it holds it")
	}
	if _, err := s.Claim(ctx, oneNode(0)); !errors.Is(err, nodeid.ErrNodeHeld) {
		t.Fatalf("claim of node 0 a firn that recorded no layout holds: %v; want ErrNodeHeld", err)
	}
	release()
	for _, st := range []*localstore.Store{o, s} {
		layout := nodeidtest.Layout
		if st == o {
			layout = otherLayout
		}
		c := claim(t, st, nodeid.ClaimRequest{Node: 0, Pool: 8, Layout: layout})
		if c.HWM < oldHWM {
			t.Fatalf("node 0 after the old firn ended: HWM %d, below the %d it wrote", c.HWM, oldHWM)
		}
		if err := st.Release(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
}

// TestAdvanceMarksAndLocksAsAClaim: firn admin advance on the local store
// takes the same locks and raises the same HWMs as a claim, and marks a
// node directory recording no layout rather than giving it the data
// directory's: one that an older firn holds node 0 of refuses the
// advance, and every layout's claim of node 0 starts past an advance.
func TestAdvanceMarksAndLocksAsAClaim(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	writeHWM(t, filepath.Join(root, "node-1.hwm"), 9000)
	release := holdAsOldFirn(t, root, 0)
	dir := t.TempDir()
	writeRecord(t, filepath.Join(dir, "layout"), otherLayout)
	s := openConfig(t, localstore.Config{Dir: dir, NodeDir: root})
	if _, err := s.Advance(ctx, nodeid.AdvanceRequest{Node: 0, HWM: 1 << 41}); !errors.Is(err, nodeid.ErrNodeHeld) {
		t.Fatalf("advance of node 0 an older firn holds: %v; want ErrNodeHeld", err)
	}
	release()
	const to = 1_800_000_000_000
	if got, err := s.Advance(ctx, nodeid.AdvanceRequest{Node: 2, HWM: to}); err != nil || got != to {
		t.Fatalf("advance of node 2: %d, %v", got, err)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "layout")); strings.HasPrefix(string(b), otherLayout.Fingerprint+"\n") {
		t.Fatalf("advance recorded the data directory's layout in the user's node directory: %q", b)
	}
	l := openConfig(t, localstore.Config{Dir: t.TempDir(), NodeDir: root})
	if c := claim(t, l, oneNode(2)); c.HWM < to {
		t.Fatalf("claim of node 2 after an advance to %d in another layout's data directory: HWM %d", int64(to), c.HWM)
	}
}

// TestPerLayoutNodeDirectoriesStayTaken: a firn that kept a node
// directory per layout fingerprint (layout-<hash>) still runs and holds
// node 0 there, whose HWM it wrote. Every claim of node 0 takes that lock
// too, whatever its layout, and starts past that HWM once it is free.
func TestPerLayoutNodeDirectoriesStayTaken(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "layout"), []byte("by-layout\nkept by a newer firn\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	legacy := filepath.Join(root, "layout-0123456789abcdef")
	writeRecord(t, filepath.Join(legacy, "layout"), otherLayout)
	const oldHWM = 1_700_000_000_000
	writeHWM(t, filepath.Join(legacy, "node-0.hwm"), oldHWM)
	release := holdAsOldFirn(t, legacy, 0)
	// That firn's layout first: it records its ID bits, unknown to
	// this version until then, and another layout is served after it.
	for _, layout := range []nodeid.LayoutID{otherLayout, nodeidtest.Layout} {
		s := openConfig(t, localstore.Config{Dir: t.TempDir(), NodeDir: root})
		if c := claim(t, s, nodeid.ClaimRequest{AnyNode: true, Pool: 8, Layout: layout}); c.Node == 0 {
			t.Fatalf("layout %s took node 0 while a firn holds it in %s", layout.Description, legacy)
		}
	}
	release()
	s := openConfig(t, localstore.Config{Dir: t.TempDir(), NodeDir: root})
	c := claim(t, s, oneNode(0))
	if c.HWM < oldHWM {
		t.Fatalf("node 0 after the per-layout firn ended: HWM %d, below the %d it wrote", c.HWM, oldHWM)
	}
	if got, err := s.Renew(ctx, c, oldHWM+5000); err != nil || got != oldHWM+5000 {
		t.Fatalf("renew: %d, %v", got, err)
	}
	if b, _ := os.ReadFile(filepath.Join(legacy, "node-0.hwm")); strings.TrimSpace(string(b)) != strconv.Itoa(oldHWM+5000) {
		t.Fatalf("the per-layout directory's HWM of node 0 after a renewal: %q; want it raised, for that firn's next claim", b)
	}
}

// TestNoTwoStoresOfALayoutHoldOneNode is a property test: data
// directories of three layouts, two of them with the same ID bits, over
// one user's node directory (fresh; one f871c00 recorded a layout in;
// one holding node files and no record; or one f4ee8fd marked
// "by-layout" and kept a layout's nodes in layout-<hash>/), in random
// order, claim, renew, release and crash, with older firns claiming
// beside them where they claimed. At every step no node is held twice,
// whatever the layouts; every claim starts at or past every HWM
// confirmed for its node; of two layouts with the same ID bits only the
// first to claim is ever served, the older firn's first; and until a
// claim of the older firn's layout records its ID bits, no other layout
// is served.
func TestNoTwoStoresOfALayoutHoldOneNode(t *testing.T) {
	layouts := []nodeid.LayoutID{nodeidtest.Layout, otherLayout, sameBits}
	for seed := range 16 {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { checkNodeOwnership(t, uint64(seed), layouts) })
	}
}

func checkNodeOwnership(t *testing.T, seed uint64, layouts []nodeid.LayoutID) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(seed, 1))
	root := t.TempDir()
	// 0: fresh; 1: f871c00 recorded layouts[0] in the root; 2: a firn
	// before layouts were recorded wrote node files there; 3: f4ee8fd
	// marked the root and kept layouts[1]'s nodes in a subdirectory.
	mode := seed % 4
	oldDir, oldLayout := root, nodeid.LayoutID{}
	switch mode {
	case 1:
		oldLayout = layouts[0]
		writeRecord(t, filepath.Join(root, "layout"), oldLayout)
	case 2:
		writeHWM(t, filepath.Join(root, "node-0.hwm"), 1_700_000_000_000)
	case 3:
		oldLayout = layouts[1]
		if err := os.WriteFile(filepath.Join(root, "layout"), []byte("by-layout\none node directory per layout\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		oldDir = legacyDir(root, oldLayout.Fingerprint)
		writeRecord(t, filepath.Join(oldDir, "layout"), oldLayout)
		writeHWM(t, filepath.Join(oldDir, "node-0.hwm"), 1_700_000_000_000)
	}
	const pool = 3
	type dir struct {
		path   string
		layout nodeid.LayoutID
		s      *localstore.Store
		held   map[uint64]nodeid.Claim
	}
	var dirs []*dir
	for i := range 6 {
		d := &dir{path: t.TempDir(), layout: layouts[i%len(layouts)]}
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
	holder := map[uint64]string{}
	confirmed := map[uint64]int64{}
	if mode == 2 || mode == 3 {
		confirmed[0] = 1_700_000_000_000 // the older firn's node-0.hwm
	}
	served := map[string]string{} // ID bits -> the fingerprint served
	bitsKnown := true             // the older firn's layout's ID bits are recorded
	if oldLayout.Fingerprint != "" {
		served[oldLayout.Bits] = oldLayout.Fingerprint
		bitsKnown = false
	}
	// Older firns, in the root itself: their held nodes.
	old := map[uint64]func(){}
	hwm := int64(1_700_000_000_000)
	take := func(who string, node uint64, start int64) {
		if other, ok := holder[node]; ok {
			t.Fatalf("seed %d: node %d taken by %s while %s holds it", seed, node, who, other)
		}
		if start < confirmed[node] {
			t.Fatalf("seed %d: %s took node %d from HWM %d, below the confirmed %d", seed, who, node, start, confirmed[node])
		}
		holder[node] = who
	}
	for step := range 240 {
		d := dirs[rng.IntN(len(dirs))]
		hwm += 1000
		switch op := rng.IntN(10); {
		case op < 4:
			req := nodeid.ClaimRequest{AnyNode: true, Pool: pool, Layout: d.layout}
			if op == 0 {
				req = nodeid.ClaimRequest{Node: rng.Uint64N(pool), Pool: pool, Layout: d.layout}
			}
			c, err := d.s.Claim(ctx, req)
			first, ok := served[d.layout.Bits]
			if errors.Is(err, nodeid.ErrLayoutMismatch) && ok && first != d.layout.Fingerprint {
				continue
			}
			var ub *localstore.UnrecordedBitsError
			if errors.As(err, &ub) && !bitsKnown && d.layout.Fingerprint != oldLayout.Fingerprint {
				continue
			}
			// A claim that found no node free passed the layout's checks,
			// and recorded it, all the same.
			noNode := errors.Is(err, nodeid.ErrNodeHeld) || errors.Is(err, nodeid.ErrPoolFull)
			if (err == nil || noNode) && !bitsKnown && d.layout.Fingerprint != oldLayout.Fingerprint {
				t.Fatalf("seed %d step %d: %s served beside an older firn's %s, whose ID bits are not recorded", seed, step, d.layout.Description, oldLayout.Description)
			}
			if err != nil && !noNode {
				t.Fatalf("seed %d step %d: claim: %v", seed, step, err)
			}
			if ok && first != d.layout.Fingerprint {
				t.Fatalf("seed %d step %d: %s served with the ID bits %s already served as %s", seed, step, d.layout.Fingerprint, d.layout.Bits, first)
			}
			served[d.layout.Bits] = d.layout.Fingerprint
			bitsKnown = bitsKnown || d.layout.Fingerprint == oldLayout.Fingerprint
			if noNode {
				continue
			}
			take(d.path, c.Node, c.HWM)
			d.held[c.Node] = c
		case op < 7:
			for node, c := range d.held {
				got, err := d.s.Renew(ctx, c, hwm)
				if err != nil {
					t.Fatalf("seed %d step %d: renew: %v", seed, step, err)
				}
				confirmed[node] = max(confirmed[node], got)
				break
			}
		case op < 8:
			for node, c := range d.held {
				if err := d.s.Release(ctx, c); err != nil {
					t.Fatal(err)
				}
				delete(holder, node)
				delete(d.held, node)
				break
			}
		case op < 9:
			for node := range d.held {
				delete(holder, node)
			}
			reopen(d)
		case mode != 0:
			// An older firn claims a node where it claims, or ends.
			node := rng.Uint64N(pool)
			if release, ok := old[node]; ok {
				release()
				delete(old, node)
				delete(holder, node)
				continue
			}
			f, err := os.OpenFile(filepath.Join(oldDir, "node-"+strconv.FormatUint(node, 10)+".lock"), os.O_RDWR|os.O_CREATE, 0o600)
			if err != nil {
				t.Fatal(err)
			}
			if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
				f.Close()
				continue
			}
			b, _ := os.ReadFile(filepath.Join(oldDir, "node-"+strconv.FormatUint(node, 10)+".hwm"))
			start, _ := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
			take("an older firn", node, start)
			old[node] = func() { f.Close() }
		}
	}
	for _, release := range old {
		release()
	}
}

// TestSameBitsInARecordedDataDirectory: a data directory that recorded a
// layout refuses another with the same ID bits as the node directory
// does, so the refusal does not send the caller to another data
// directory, which would refuse it too.
func TestSameBitsInARecordedDataDirectory(t *testing.T) {
	s := openConfig(t, localstore.Config{Dir: t.TempDir(), NodeDir: t.TempDir()})
	claim(t, s, anyNode(8))
	_, err := s.Claim(context.Background(), nodeid.ClaimRequest{AnyNode: true, Pool: 8, Layout: sameBits})
	var sm *localstore.SpaceMismatchError
	if !errors.As(err, &sm) {
		t.Fatalf("claim with the same ID bits named otherwise in a data directory that recorded a layout: %v; want *SpaceMismatchError", err)
	}
	_, err = s.Claim(context.Background(), nodeid.ClaimRequest{AnyNode: true, Pool: 8, Layout: otherLayout})
	if !errors.Is(err, nodeid.ErrLayoutMismatch) || errors.As(err, &sm) {
		t.Fatalf("claim with other ID bits in a data directory that recorded a layout: %v; want a *LayoutMismatchError only", err)
	}
}
