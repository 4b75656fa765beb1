package localstore_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/firn-id/firn/localstore"
	"github.com/firn-id/firn/nodeid"
	"github.com/firn-id/firn/nodeid/nodeidtest"
	"github.com/firn-id/firn/snowflake"
)

// olderFirnsClaim says where each older firn of the layout with
// fingerprint fp would take its nodes in the user's node directory root,
// as its source (git show f871c00:localstore/store.go, f4ee8fd:
// localstore/layoutdir.go) reads the file root/layout; "" where it
// refuses. Both refuse a record they cannot read; f871c00 refuses any
// other layout's; f4ee8fd takes any other record, its own "by-layout"
// mark included, as a reason to claim in layout-<hash of fp>.
func olderFirnsClaim(root, fp string) (f871c00, f4ee8fd string) {
	b, err := os.ReadFile(filepath.Join(root, "layout"))
	switch {
	case errors.Is(err, os.ErrNotExist):
		return root, root
	case err != nil:
		return "", ""
	}
	first, _, _ := strings.Cut(string(b), "\n")
	if first == fp {
		return root, root
	}
	return "", legacyDir(root, fp)
}

// legacyDir is the node directory f4ee8fd kept for the layout with
// fingerprint fp.
func legacyDir(root, fp string) string {
	sum := sha256.Sum256([]byte(fp))
	return filepath.Join(root, "layout-"+hex.EncodeToString(sum[:8]))
}

// presetID is the layout of a preset as a claim names it (config.SpaceID),
// opaque with key when key is not empty.
func presetID(t *testing.T, name, key string) nodeid.LayoutID {
	t.Helper()
	l, ok := snowflake.Preset(name)
	if !ok {
		t.Fatalf("no preset %s", name)
	}
	id := nodeid.LayoutID{Fingerprint: l.Fingerprint(), Description: l.String(), Bits: l.BitsFingerprint()}
	if key != "" {
		id.Fingerprint += ";" + key
		id.Description += ", opaque IDs (" + key + ")"
	}
	return id
}

// TestOlderFirnsRefuseTheMark: once this version claimed in a user's
// node directory that records no layout, or that f4ee8fd marked
// "by-layout", neither older firn claims there, whatever its layout.
// f4ee8fd would otherwise create layout-<hash>/, which no claim before
// had locked, and take node 0 there beside this version's node 0: the
// same IDs for the same layout.
func TestOlderFirnsRefuseTheMark(t *testing.T) {
	for _, byLayout := range []bool{false, true} {
		root := t.TempDir()
		if byLayout {
			if err := os.WriteFile(filepath.Join(root, "layout"), []byte("by-layout\none node directory per layout\n"), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		s := openConfig(t, localstore.Config{Dir: t.TempDir(), NodeDir: root})
		if c := claim(t, s, anyNode(8)); c.Node != 0 {
			t.Fatalf("first claim: node %d, want 0", c.Node)
		}
		for _, id := range []nodeid.LayoutID{nodeidtest.Layout, otherLayout, presetID(t, "firn", ""), presetID(t, "js53", "")} {
			if a, b := olderFirnsClaim(root, id.Fingerprint); a != "" || b != "" {
				t.Fatalf("by-layout %v: an older firn of %s claims beside this version's node 0: f871c00 in %q, f4ee8fd in %q", byLayout, id.Description, a, b)
			}
		}
		if _, err := os.Stat(legacyDir(root, nodeidtest.Layout.Fingerprint)); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("a layout-* directory exists: %v", err)
		}
	}
}

// TestByLayoutIsReplacedWhileItsNodesStayTaken: an f4ee8fd firn marked
// the user's node directory "by-layout" and holds node 0 in its
// layout-<hash>/. A claim of this version replaces the mark, and takes
// node 1: the leftover lock keeps node 0 the old firn's.
func TestByLayoutIsReplacedWhileItsNodesStayTaken(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "layout"), []byte("by-layout\none node directory per layout\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	legacy := legacyDir(root, nodeidtest.Layout.Fingerprint)
	writeRecord(t, filepath.Join(legacy, "layout"), nodeidtest.Layout)
	holdAsOldFirn(t, legacy, 0)
	s := openConfig(t, localstore.Config{Dir: t.TempDir(), NodeDir: root})
	if c := claim(t, s, anyNode(8)); c.Node != 1 {
		t.Fatalf("claim beside f4ee8fd's node 0: node %d, want 1", c.Node)
	}
	if fi, err := os.Stat(filepath.Join(root, "layout")); err != nil || !fi.IsDir() {
		t.Fatalf("the user's node directory's \"by-layout\" record after a claim: %v; want the mark", err)
	}
}

// TestOlderRecordsAreCompared: an older firn recorded a layout in the
// user's node directory — f871c00 in its file "layout", f4ee8fd in a
// layout-<hash>/layout — and recorded no ID bits. A claim of the same ID
// bits with another opaque key would issue the same IDs at the rate of
// chance; one of a layout whose bits are unknown might. The recorded
// layout itself is served, and records its bits; then another key over
// them is refused for good and a layout of other bits is served.
func TestOlderRecordsAreCompared(t *testing.T) {
	ctx := context.Background()
	k1 := nodeid.LayoutID{Fingerprint: nodeidtest.Layout.Fingerprint + ";K1", Description: "suite, key K1", Bits: nodeidtest.Layout.Bits}
	k2 := nodeid.LayoutID{Fingerprint: nodeidtest.Layout.Fingerprint + ";K2", Description: "suite, key K2", Bits: nodeidtest.Layout.Bits}
	for _, era := range []string{"f871c00", "f4ee8fd"} {
		t.Run(era, func(t *testing.T) {
			root := t.TempDir()
			record := filepath.Join(root, "layout")
			if era == "f4ee8fd" {
				if err := os.WriteFile(record, []byte("by-layout\none node directory per layout\n"), 0o600); err != nil {
					t.Fatal(err)
				}
				record = filepath.Join(legacyDir(root, k1.Fingerprint), "layout")
			}
			writeRecord(t, record, k1)
			holdAsOldFirn(t, filepath.Dir(record), 0)

			for _, id := range []nodeid.LayoutID{k2, otherLayout, nodeidtest.Layout} {
				s := openConfig(t, localstore.Config{Dir: t.TempDir(), NodeDir: root})
				_, err := s.Claim(ctx, nodeid.ClaimRequest{AnyNode: true, Pool: 8, Layout: id})
				var ub *localstore.UnrecordedBitsError
				if !errors.As(err, &ub) || !errors.Is(err, nodeid.ErrLayoutMismatch) || ub.Stored != k1.Description || ub.Record != record {
					t.Fatalf("claim of %s beside %s, whose ID bits no record holds: %v; want *UnrecordedBitsError naming it", id.Description, k1.Description, err)
				}
			}
			// The advice: the recorded layout, once.
			s := openConfig(t, localstore.Config{Dir: t.TempDir(), NodeDir: root})
			if c := claim(t, s, nodeid.ClaimRequest{AnyNode: true, Pool: 8, Layout: k1}); c.Node != 1 {
				t.Fatalf("the recorded layout beside its older firn's node 0: node %d, want 1", c.Node)
			}
			for _, id := range []nodeid.LayoutID{k2, nodeidtest.Layout, sameBits} {
				o := openConfig(t, localstore.Config{Dir: t.TempDir(), NodeDir: root})
				var sm *localstore.SpaceMismatchError
				if _, err := o.Claim(ctx, nodeid.ClaimRequest{AnyNode: true, Pool: 8, Layout: id}); !errors.As(err, &sm) || sm.Stored != k1.Description {
					t.Fatalf("claim of %s, the ID bits of %s: %v; want *SpaceMismatchError naming it", id.Description, k1.Description, err)
				}
			}
			o := openConfig(t, localstore.Config{Dir: t.TempDir(), NodeDir: root})
			if c := claim(t, o, nodeid.ClaimRequest{AnyNode: true, Pool: 8, Layout: otherLayout}); c.Node != 2 {
				t.Fatalf("other ID bits once the recorded layout's are known: node %d, want 2", c.Node)
			}
		})
	}
}

// TestOlderPresetRecordsKnowTheirBits: f871c00 recorded the firn preset
// (the README's quick start) in the user's node directory. Its ID bits
// are the preset's, so js53 is served beside it at once, and the firn
// preset with an opaque key, the same IDs permuted, is refused.
func TestOlderPresetRecordsKnowTheirBits(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	writeRecord(t, filepath.Join(root, "layout"), presetID(t, "firn", ""))
	holdAsOldFirn(t, root, 0)
	s := openConfig(t, localstore.Config{Dir: t.TempDir(), NodeDir: root})
	if c := claim(t, s, nodeid.ClaimRequest{AnyNode: true, Pool: 8, Layout: presetID(t, "js53", "")}); c.Node != 1 {
		t.Fatalf("js53 beside f871c00's firn preset on node 0: node %d, want 1", c.Node)
	}
	o := openConfig(t, localstore.Config{Dir: t.TempDir(), NodeDir: root})
	var sm *localstore.SpaceMismatchError
	if _, err := o.Claim(ctx, nodeid.ClaimRequest{AnyNode: true, Pool: 8, Layout: presetID(t, "firn", "K")}); !errors.As(err, &sm) {
		t.Fatalf("the firn preset with an opaque key beside f871c00's plain one: %v; want *SpaceMismatchError", err)
	}
	// And the other way round: f871c00's record has the key.
	root = t.TempDir()
	writeRecord(t, filepath.Join(root, "layout"), presetID(t, "firn", "K"))
	p := openConfig(t, localstore.Config{Dir: t.TempDir(), NodeDir: root})
	if _, err := p.Claim(ctx, nodeid.ClaimRequest{AnyNode: true, Pool: 8, Layout: presetID(t, "firn", "")}); !errors.As(err, &sm) {
		t.Fatalf("the plain firn preset beside f871c00's opaque one: %v; want *SpaceMismatchError", err)
	}
	claim(t, p, nodeid.ClaimRequest{AnyNode: true, Pool: 8, Layout: presetID(t, "js53", "")})
}
