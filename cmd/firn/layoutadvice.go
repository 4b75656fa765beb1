package main

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"path/filepath"
	"strings"

	"github.com/firn-id/firn/internal/backend"
	"github.com/firn-id/firn/nodeid"
	"github.com/firn-id/firn/snowflake"
)

// layoutRefused is the refusal of a store whose namespace holds another
// layout. On the local store the namespace is the data directory, and a
// data directory keeps one layout; another layout is another ID space,
// with nodes of its own in the user's node directory, so a data
// directory of its own, named outright, serves it.
func layoutRefused(err error, sf *backend.Options, id nodeid.LayoutID) error {
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
