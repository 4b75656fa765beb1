package localstore

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/firn-id/firn/nodeid"
)

// The user's node directory (Config.NodeDir) holds one node directory per
// layout: a layout is an ID space of its own, so a user may try js53
// beside the quick start's layout, and two data directories or two
// namespaces of one layout still meet in one node directory and never
// hold one node. Keying by namespace instead would let two namespaces of
// one layout both take node 0 and issue the same IDs.
//
// A firn before this kept one layout in the user's node directory itself,
// recorded in its file "layout". That layout keeps the user's node
// directory as its own, so a firn of this version with that layout locks
// the same node-N.lock files as an older one still running, and reads the
// HWMs it wrote. Every other layout gets a subdirectory. A user's node
// directory that records no layout yet is marked as one holding
// subdirectories (byLayout), and an older firn refuses it, as it refuses
// a layout it does not hold: it would otherwise take nodes in the user's
// node directory beside those of its layout's subdirectory.

// byLayout is the first line of the record in a user's node directory
// that holds a node directory per layout. It is no layout's fingerprint,
// so an older firn, which compares its layout's fingerprint with that
// line, refuses to claim there.
const byLayout = "by-layout"

// byLayoutRecord is that record; its second line is what an older firn
// reports as the layout the directory holds.
const byLayoutRecord = byLayout + "\none node directory per layout, in subdirectories, kept by a newer firn: run that firn\n"

// layoutNodes returns the node directory of layout id in the user's node
// directory root, creating it and recording the layout on first use.
func layoutNodes(root string, id nodeid.LayoutID) (string, error) {
	top, err := recordOnce(filepath.Join(root, "layout"), func() ([]byte, error) { return firstRecord(root, id) })
	if err != nil {
		return "", fmt.Errorf("node directory %s: %w", root, err)
	}
	if top.Fingerprint == id.Fingerprint {
		return root, nil
	}
	dir := filepath.Join(root, layoutDirName(id.Fingerprint))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("node directory of layout %s: %w", id.Description, err)
	}
	rec, err := recordOnce(filepath.Join(dir, "layout"), func() ([]byte, error) { return layoutRecord(id), nil })
	switch {
	case err != nil:
		return "", fmt.Errorf("node directory %s: %w", dir, err)
	case rec.Fingerprint != id.Fingerprint:
		// Two fingerprints with one name, or an edited file: the nodes
		// there are another layout's.
		return "", fmt.Errorf("%w (recorded in the node directory %s, named for this layout)",
			&nodeid.LayoutMismatchError{Stored: rec.Description, Want: id.Description}, dir)
	}
	return dir, nil
}

// firstRecord is what a user's node directory that records no layout is
// given: the mark of a node directory per layout; or, when it holds node
// files already (written by a firn that recorded no layout there), the
// layout of this first claim, as that firn's successor recorded it, so
// the nodes and HWMs there stay where a firn of their layout looks.
func firstRecord(root string, id nodeid.LayoutID) ([]byte, error) {
	for _, pattern := range []string{"node-*.lock", "node-*.hwm"} {
		found, err := filepath.Glob(filepath.Join(root, pattern))
		if err != nil {
			return nil, err
		}
		if len(found) > 0 {
			return layoutRecord(id), nil
		}
	}
	return []byte(byLayoutRecord), nil
}

// recordOnce reads the layout record at path, creating it with what
// first gives if it is absent. Created only if absent, by a hard link of
// an fsynced file: two first claims at once agree on one record.
func recordOnce(path string, first func() ([]byte, error)) (nodeid.LayoutID, error) {
	rec, ok, err := readLayoutFile(path)
	if err != nil || ok {
		return rec, err
	}
	b, err := first()
	if err != nil {
		return rec, fmt.Errorf("record layout: %w", err)
	}
	if err := createFile(path, b); err != nil && !errors.Is(err, os.ErrExist) {
		return rec, fmt.Errorf("record layout: %w", err)
	}
	rec, ok, err = readLayoutFile(path)
	switch {
	case err != nil:
		return rec, err
	case !ok:
		return rec, fmt.Errorf("record layout: %s vanished", path)
	}
	return rec, nil
}

// layoutDirName names the node directory of the layout with fingerprint
// fp: a fixed-length name whatever the fingerprint holds (an opaque
// permutation's fingerprint is part of it).
func layoutDirName(fp string) string {
	sum := sha256.Sum256([]byte(fp))
	return "layout-" + hex.EncodeToString(sum[:8])
}
