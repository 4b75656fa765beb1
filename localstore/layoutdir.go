package localstore

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/firn-id/firn/nodeid"
	"github.com/firn-id/firn/snowflake"
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
//   - one that recorded its layout in the file "layout" here (f871c00,
//     released) does the same for that layout, and refuses a directory
//     whose record it cannot read or that records another;
//   - one that kept a node directory per layout fingerprint, in
//     layout-<hash of the fingerprint> (6cce326 to f4ee8fd, never
//     released), took node-N.lock and wrote node-N.hwm there, and used
//     this directory itself only for the layout its file "layout"
//     records: any other record, its own mark "by-layout" included, sent
//     it to its subdirectory, created when missing. Every claim of node
//     N takes node-N.lock in each such subdirectory too, and reads and
//     raises that HWM, but one created after a claim was never locked by
//     it.
//
// So a directory that records no layout is marked with a directory named
// "layout" (markRoot): both read "layout" as a file and, unable to, refuse
// to claim before they take any lock, whatever their layout. A "by-layout"
// record is replaced by the mark. A layout an older firn recorded (in
// "layout" here or in a layout-* subdirectory) stays, and every claim is
// compared with it (checkOlder).

// byLayout is the first line of the record the firns from 6cce326 to this
// one's predecessor wrote in a user's node directory recording no
// layout. f871c00 refuses it; f4ee8fd claims beside it, in a
// subdirectory no claim before had locked, so it is replaced by the mark.
const byLayout = "by-layout"

// markText is what the mark holds, for a user who looks there after an
// older firn could not read it.
const markText = `This directory marks the one above as a node directory kept by a firn
newer than f4ee8fd: node N is the user's whatever the layout, and the
layout of each ID bits is recorded in space-*/layout. An older firn reads
"layout" as a file, cannot, and refuses to run: run the newer firn. Never
delete this directory.
`

// markRoot marks the user's node directory root unless an older firn
// recorded a layout there, and returns that record (ok) if one did. A
// "by-layout" record is replaced by the mark.
func markRoot(root string) (older nodeid.LayoutID, ok bool, err error) {
	path := filepath.Join(root, "layout")
	// A round ends in a change: a mark or a record created where none
	// was, or a "by-layout" record replaced; each is done once, so rounds
	// end.
	for range 8 {
		fi, err := os.Lstat(path)
		switch {
		case errors.Is(err, os.ErrNotExist):
			if err := createMark(root); err != nil {
				return older, false, fmt.Errorf("node directory %s: %w", root, err)
			}
			continue
		case err != nil:
			return older, false, fmt.Errorf("node directory %s: %w", root, err)
		case fi.IsDir():
			return older, false, nil
		}
		rec, found, err := readLayoutFile(path)
		switch {
		case err != nil:
			return older, false, fmt.Errorf("node directory %s: %w", root, err)
		case !found:
			continue
		case rec.Fingerprint != byLayout:
			return rec, true, nil
		}
		if err := replaceByLayout(root); err != nil {
			return older, false, fmt.Errorf("node directory %s: replace its %q record: %w", root, byLayout, err)
		}
	}
	return older, false, fmt.Errorf("node directory %s: its record %s kept changing while read", root, path)
}

// createMark creates the mark, root/layout, if nothing is there: a
// directory made whole beside it, then renamed into place. The rename
// fails if an older firn's record came first (and leaves a mark a mark):
// the caller reads what is there.
func createMark(root string) error {
	tmp, err := os.MkdirTemp(root, "layout.tmp")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(tmp) }() // gone after the rename
	if err := writeFile(filepath.Join(tmp, "README"), []byte(markText)); err != nil {
		return err
	}
	if err := os.Rename(tmp, filepath.Join(root, "layout")); err != nil {
		if _, serr := os.Lstat(filepath.Join(root, "layout")); serr == nil {
			return nil
		}
		return err
	}
	return syncDir(root)
}

// replaceByLayout replaces a "by-layout" record in root with the mark.
// Only this version removes a record, and only holding root/mark.lock,
// so the file removed is the "by-layout" record read under that lock:
// older firns create a record only where none is, never replace one. A
// record an older firn creates between the removal and the mark is
// kept, and the caller reads it.
func replaceByLayout(root string) error {
	unlock, err := lockFile(filepath.Join(root, "mark.lock"))
	if err != nil {
		return err
	}
	defer unlock()
	path := filepath.Join(root, "layout")
	if fi, err := os.Lstat(path); err != nil || fi.IsDir() {
		return nil // replaced meanwhile: the caller reads it again
	}
	rec, found, err := readLayoutFile(path)
	if err != nil || !found || rec.Fingerprint != byLayout {
		return err
	}
	if err := os.Remove(path); err != nil {
		return err
	}
	if err := syncDir(root); err != nil {
		return err
	}
	return createMark(root)
}

// readOlder returns the layout an older firn recorded in the user's node
// directory root itself, if one did, without marking it.
func readOlder(root string) (nodeid.LayoutID, bool) {
	path := filepath.Join(root, "layout")
	if fi, err := os.Lstat(path); err != nil || fi.IsDir() {
		return nodeid.LayoutID{}, false
	}
	rec, ok, err := readLayoutFile(path)
	if err != nil || !ok || rec.Fingerprint == byLayout {
		return nodeid.LayoutID{}, false
	}
	return rec, true
}

// checkOlder refuses layout id if a layout an older firn recorded in the
// user's node directory root (older, if ok, or in a layout-*
// subdirectory) could issue the same IDs: one with the same ID bits and
// another fingerprint (a *SpaceMismatchError), or one whose ID bits are
// not known (an *UnrecordedBitsError). Such a record holds no ID bits,
// only a fingerprint and a description, so its bits are known only from
// a record of this version holding its fingerprint (space-*/layout,
// written by a claim with that layout) or from the preset whose
// fingerprint it is. Left unchecked, another opaque key over the same
// bits would be served beside it: the same IDs at the rate of chance.
func checkOlder(root string, id nodeid.LayoutID, older nodeid.LayoutID, ok bool) error {
	type record struct {
		rec  nodeid.LayoutID
		path string
	}
	var recs []record
	if ok {
		recs = append(recs, record{older, filepath.Join(root, "layout")})
	}
	found, err := filepath.Glob(filepath.Join(root, "layout-*", "layout"))
	if err != nil {
		return err
	}
	slices.Sort(found)
	for _, path := range found {
		rec, ok, err := readLayoutFile(path)
		if err != nil {
			return err
		}
		if ok {
			recs = append(recs, record{rec, path})
		}
	}
	for _, r := range recs {
		if r.rec.Fingerprint == id.Fingerprint {
			continue
		}
		space, known, err := olderSpace(root, r.rec.Fingerprint)
		switch {
		case err != nil:
			return err
		case !known:
			return &UnrecordedBitsError{Stored: r.rec.Description, Want: id.Description, Record: r.path}
		case space == spaceDirName(id):
			return &SpaceMismatchError{Stored: r.rec.Description, Want: id.Description, Record: r.path}
		}
	}
	return nil
}

// olderSpace returns the name of the space-* subdirectory of the ID bits
// of fp, a fingerprint an older firn recorded, if they are known: from a
// space-*/layout record holding fp, or from the preset whose fingerprint
// is fp's layout part (what precedes an opaque key's fingerprint, which
// leaves the ID bits as they are).
func olderSpace(root, fp string) (string, bool, error) {
	found, err := filepath.Glob(filepath.Join(root, "space-*", "layout"))
	if err != nil {
		return "", false, err
	}
	for _, path := range found {
		rec, ok, err := readLayoutFile(path)
		if err != nil {
			return "", false, err
		}
		if ok && rec.Fingerprint == fp {
			return filepath.Base(filepath.Dir(path)), true, nil
		}
	}
	plain, _, _ := strings.Cut(fp, ";")
	for _, name := range snowflake.PresetNames() {
		l, _ := snowflake.Preset(name)
		if l.Fingerprint() == plain {
			return spaceDirName(nodeid.LayoutID{Fingerprint: fp, Bits: l.BitsFingerprint()}), true, nil
		}
	}
	return "", false, nil
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
