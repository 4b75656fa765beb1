package localstore

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/firn-id/firn/nodeid"
)

// The user's node directory (Config.NodeDir) holds node N of the user,
// whatever the layout: node-N.lock, the OS lock every claim of node N
// holds, and node-N.hwm, which every claim reads and raises. Node numbers
// are thus exclusive across the user's layouts at any one time, and each
// node's HWM, absolute Unix milliseconds, means the same to all of them.
// That costs a user trying js53 beside the quick start nothing but node
// 0, and it needs no knowledge of which layouts could issue the same IDs:
// a layout split or named otherwise, or an older firn of a layout no one
// recorded, holds the same lock.
//
// A layout is still an ID space of its own, recorded per ID bits: the
// subdirectory space-<hash of nodeid.LayoutID.Bits> records the first
// layout to claim with those bits (its fingerprint, the opaque key's
// included), and refuses another (*SpaceMismatchError). Layouts with one
// Bits issue the same IDs for the same node: a second fingerprint there
// is another split or naming of node fields, or another opaque key, and
// two of them would read or permute one ID space two ways.
//
// Older firns:
//   - one before the node directory recorded a layout took node-N.lock
//     here and wrote node-N.hwm, as every claim does now;
//   - one that recorded its layout in the file "layout" here does the
//     same for that layout, and refuses a directory recording another; a
//     directory that records none is marked byLayout on first use, which
//     such a firn refuses, whether or not it holds node files already
//     (whose layout no one can tell);
//   - one that kept a node directory per layout fingerprint, in
//     layout-<hash of the fingerprint>, took node-N.lock and wrote
//     node-N.hwm there: every claim of node N takes that lock too, in each
//     such subdirectory, and reads and raises that HWM as well.

// byLayout is the first line of the record in a user's node directory
// that newer firns keep. It is no layout's fingerprint, so an older firn,
// which compares its layout's fingerprint with that line, refuses to
// claim there.
const byLayout = "by-layout"

// byLayoutRecord is that record; its second line is what an older firn
// reports as the layout the directory holds.
const byLayoutRecord = byLayout + "\none node directory for every layout, kept by a newer firn: run that firn\n"

// markRoot records byLayout in the user's node directory root unless it
// records a layout already (an older firn's, which keeps it).
func markRoot(root string) error {
	if _, err := recordOnce(filepath.Join(root, "layout"), []byte(byLayoutRecord)); err != nil {
		return fmt.Errorf("node directory %s: %w", root, err)
	}
	return nil
}

// recordSpace records layout id as the one of its ID bits in the user's
// node directory root, or refuses it with a *SpaceMismatchError if
// another is recorded there.
func recordSpace(root string, id nodeid.LayoutID) error {
	dir := filepath.Join(root, spaceDirName(id))
	switch err := os.Mkdir(dir, 0o700); {
	case errors.Is(err, os.ErrExist):
	case err != nil:
		return fmt.Errorf("node directory of layout %s: %w", id.Description, err)
	default:
		// The new entry durable before a record in it is relied on.
		if err := syncDir(root); err != nil {
			return fmt.Errorf("node directory of layout %s: %w", id.Description, err)
		}
	}
	path := filepath.Join(dir, "layout")
	rec, err := recordOnce(path, layoutRecord(id))
	switch {
	case err != nil:
		return fmt.Errorf("node directory %s: %w", dir, err)
	case rec.Fingerprint != id.Fingerprint:
		return &SpaceMismatchError{Stored: rec.Description, Want: id.Description, Record: path}
	}
	return nil
}

// checkSpace refuses layout id with a *SpaceMismatchError if the user's
// node directory root records another layout for its ID bits, and
// records nothing.
func checkSpace(root string, id nodeid.LayoutID) error {
	path := filepath.Join(root, spaceDirName(id), "layout")
	rec, ok, err := readLayoutFile(path)
	switch {
	case err != nil:
		return err
	case ok && rec.Fingerprint != id.Fingerprint:
		return &SpaceMismatchError{Stored: rec.Description, Want: id.Description, Record: path}
	}
	return nil
}

// spaceDirName names the subdirectory that records the layout of id's ID
// bits: a fixed-length name whatever they are. Bits empty means the
// fingerprint (nodeid.LayoutID.Bits).
func spaceDirName(id nodeid.LayoutID) string {
	key := "bits\n" + id.Bits
	if id.Bits == "" {
		key = "fingerprint\n" + id.Fingerprint
	}
	sum := sha256.Sum256([]byte(key))
	return "space-" + hex.EncodeToString(sum[:8])
}

// nodeDirs returns the directories a claim of a node takes its lock in
// and reads and raises its HWM in: the user's node directory root first,
// then each node directory an older firn kept per layout fingerprint
// (layout-*), sorted.
func nodeDirs(root string) ([]string, error) {
	found, err := filepath.Glob(filepath.Join(root, "layout-*"))
	if err != nil {
		return nil, err
	}
	dirs := []string{root}
	for _, d := range found {
		fi, err := os.Stat(d)
		if err != nil {
			return nil, fmt.Errorf("node directory %s: %w", d, err)
		}
		if fi.IsDir() {
			dirs = append(dirs, d)
		}
	}
	slices.Sort(dirs[1:])
	return dirs, nil
}

// recordOnce reads the layout record at path, creating it with first if
// it is absent. Created only if absent, by a hard link of an fsynced
// file: two first claims at once agree on one record.
func recordOnce(path string, first []byte) (nodeid.LayoutID, error) {
	rec, ok, err := readLayoutFile(path)
	if err != nil || ok {
		return rec, err
	}
	if err := createFile(path, first); err != nil && !errors.Is(err, os.ErrExist) {
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
