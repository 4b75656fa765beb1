package main

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"path/filepath"
	"strings"

	"github.com/firn-id/firn/cmd/firn/internal/backend"
	"github.com/firn-id/firn/localstore"
	"github.com/firn-id/firn/nodeid"
	"github.com/firn-id/firn/snowflake"
)

// layoutRefused is the refusal of a store whose namespace holds another
// layout. On the local store the namespace is the data directory, and a
// data directory keeps one layout; another layout is another ID space,
// so a data directory of its own, named outright, serves it — unless the
// user's node directory records another layout for its ID bits, which
// every data directory refuses: only the recorded layout serves then.
func layoutRefused(err error, sf *backend.Options, id nodeid.LayoutID) error {
	var sm *localstore.SpaceMismatchError
	if errors.As(err, &sm) {
		return usagef("the user's node directory %s records layout %q for the ID bits this command asked for as %q: the same IDs with other node field names or splits, or another opaque key, and two of them would issue one ID twice; "+
			"every data directory of the user refuses it: run with the recorded layout%s",
			filepath.Dir(filepath.Dir(sm.Record)), sm.Stored, sm.Want, recordedFlags(sm.Stored, sm.Want))
	}
	var ub *localstore.UnrecordedBitsError
	if errors.As(err, &ub) {
		return usagef("the user's node directory holds layout %q, recorded by an older firn in %s without its ID bits, and this command asked for %q, which could issue the same IDs: "+
			"run firn next once with the recorded layout (the layout flags it was recorded with: its --layout, --epoch, --tick, --time-bits, --node-bits, --node-names, --sequence-bits and --order as then%s), "+
			"which records its ID bits; then this layout runs beside it unless it has the same ID bits",
			ub.Stored, ub.Record, ub.Want, opaqueFlags(ub.Stored))
	}
	var lm *nodeid.LayoutMismatchError
	dir, local := sf.DataDir()
	if !local || !errors.As(err, &lm) {
		return usagef("%s (%s)", err, sf.Describe())
	}
	return usagef("local data directory %s holds layout %q, and this command asked for %q: run with the stored layout%s, or, for IDs of the other layout (another ID space, with nodes of its own), give it a data directory of its own: --data-dir %s",
		dir, lm.Stored, lm.Want, storedFlags(lm.Stored), layoutDataDir(dir, id))
}

// storedFlags names the preset flag of a stored layout description when
// a preset describes it exactly; the empty string otherwise.
func storedFlags(stored string) string {
	name, _, ok := strings.Cut(stored, ":")
	if !ok {
		return ""
	}
	if l, ok := snowflake.Preset(name); ok && l.String() == stored {
		return " (--layout " + name + " and no other layout flags)"
	}
	return ""
}

// opaqueMark begins the part of a layout description config.SpaceID adds
// for opaque IDs.
const opaqueMark = ", opaque IDs ("

// recordedFlags says how to ask for the recorded layout stored when a
// command asked for want, a layout with the same ID bits: the preset
// flag when a preset describes it, and the opaque flags when the two
// differ in them.
func recordedFlags(stored, want string) string {
	plain, _, storedOpaque := strings.Cut(stored, opaqueMark)
	_, _, wantOpaque := strings.Cut(want, opaqueMark)
	flags := storedFlags(plain)
	if flags == "" {
		flags = " (the layout flags it was recorded with: its --node-bits and --node-names as then)"
	}
	switch {
	case storedOpaque:
		flags += ", with the opaque key and tweak it names (--opaque --opaque-key-file --opaque-tweak)"
	case wantOpaque:
		flags += ", without --opaque"
	}
	return flags
}

// opaqueFlags names the opaque flags of a recorded layout description
// that has an opaque key.
func opaqueFlags(stored string) string {
	if _, _, ok := strings.Cut(stored, opaqueMark); ok {
		return ", with the opaque key and tweak it names (--opaque --opaque-key-file --opaque-tweak)"
	}
	return ""
}

// layoutDataDir is the data directory suggested beside dir for the ID
// space id: named for its layout and fingerprint, so that two layouts
// (two presets, or one preset with other flags or another opaque key)
// are never sent to one directory, which would refuse the second.
func layoutDataDir(dir string, id nodeid.LayoutID) string {
	name, _, _ := strings.Cut(id.Description, ":")
	name = strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			return r
		}
		return -1
	}, name)
	sum := sha256.Sum256([]byte(id.Fingerprint))
	return filepath.Clean(dir) + "-" + name + "-" + hex.EncodeToString(sum[:4])
}

// otherSpace says where IDs of the ID space id come from when a server
// issues another's: on the local store, a data directory named outright.
func otherSpace(sf *backend.Options, id nodeid.LayoutID) string {
	if dir, local := sf.DataDir(); local {
		return "give them a data directory of their own: --data-dir " + layoutDataDir(dir, id)
	}
	return "a data directory of their own (--data-dir DIR)"
}
