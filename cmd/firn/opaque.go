package main

import (
	"crypto/sha256"
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/firn-id/firn/idtext"
	"github.com/firn-id/firn/segment"

	"github.com/firn-id/firn/internal/config"
	"github.com/firn-id/firn/nodeid"
	"github.com/firn-id/firn/opaque"
	"github.com/firn-id/firn/snowflake"
)

// opaqueUses are opaque mode's settings on the commands that check a
// namespace's ID space or read its IDs (next, admin, parse), the flags of
// opaqueFlagsUsage; opaque.key is the file's only.
var opaqueUses = []string{"opaque.snowflake", "opaque.key_file", "opaque.key", "opaque.tweak", "opaque.accept_unchecked_key"}

const opaqueFlagsUsage = `Opaque flags (a namespace in opaque mode: serve's opaque.* settings):
  --opaque               its IDs are opaque, a keyed permutation of the layout's IDs
  --opaque-key-file F    the file holding the key, in hex
  --opaque-tweak T       the tweak
  --opaque-accept-unchecked-key
                         required with a static or derived node (--node on
                         next and admin): promise every machine uses this key
                         and tweak (each records only its own; two keys collide)
`

// permutation checks opaque mode's settings and returns the permutation
// they name over l's IDs, or nil when opaque mode is off.
func permutation(o config.Opaque, l snowflake.Layout) (*opaque.Permutation, error) {
	if err := o.Validate(); err != nil {
		return nil, usagef("%s", err)
	}
	return permutationOf(o, l)
}

// permutationOf reads the key of valid opaque settings and returns the
// permutation of l's ID space, or nil when opaque mode is off. The key is
// never part of a message.
func permutationOf(o config.Opaque, l snowflake.Layout) (*opaque.Permutation, error) {
	if !o.Snowflake {
		return nil, nil
	}
	key, err := opaqueKey(o)
	if err != nil {
		return nil, err
	}
	p, err := opaque.New(key, []byte(o.Tweak), l.Bits())
	if errors.Is(err, opaque.ErrDomain) {
		return nil, usagef("opaque.snowflake: the layout has %d bits; opaque mode needs %d to %d (FF1's smallest binary domain holds a million IDs)",
			l.Bits(), opaque.MinBits, opaque.MaxBits)
	}
	if err != nil {
		return nil, usagef("opaque: %s", err)
	}
	return p, nil
}

// opaqueKey reads the key of valid opaque settings. The key is never
// part of a message.
func opaqueKey(o config.Opaque) ([]byte, error) {
	text, where := []byte(o.Key), "opaque.key"
	if o.KeyFile != "" {
		b, err := os.ReadFile(o.KeyFile)
		if err != nil {
			if _, kerr := opaque.ParseKey([]byte(o.KeyFile)); kerr == nil {
				// The key itself was given where its file's name goes:
				// never repeat it.
				return nil, usagef("opaque.key_file: the value given is a key, not the name of a file: write the key to a file and name that")
			}
			return nil, usagef("%s", &config.FieldError{Field: "opaque.key_file", Reason: err.Error()})
		}
		text, where = b, "opaque.key_file "+o.KeyFile
	}
	key, err := opaque.ParseKey(text)
	if err != nil {
		return nil, usagef("%s: %s", where, err)
	}
	return key, nil
}

// tagPermutations returns the permutation of each tag o lists, nil for the
// others: 63 bits, or 53 for a tag maxID bounds at 2^53−1
// (segments.javascript_safe). Each tag has its own permutation, under a
// tweak derived from opaque.tweak and the tag's name, so equal plain IDs
// of two tags look unrelated. It returns nil when no tag is opaque.
func tagPermutations(o config.Opaque, maxID func(string) int64) (func(tag string) segment.Permutation, error) {
	if len(o.Tags) == 0 {
		return nil, nil
	}
	key, err := opaqueKey(o)
	if err != nil {
		return nil, err
	}
	for _, bits := range []int{53, 63} { // every tag's permutation differs from these in its tweak alone
		if _, err := opaque.New(key, tagTweak(o.Tweak, ""), bits); err != nil {
			return nil, usagef("opaque.tags: %s", err)
		}
	}
	all, listed := slices.Contains(o.Tags, "*"), map[string]bool{}
	for _, t := range o.Tags {
		listed[t] = true
	}
	var cache sync.Map // tag -> segment.Permutation
	var cached atomic.Int64
	return func(tag string) segment.Permutation {
		if !all && !listed[tag] {
			return nil
		}
		if p, ok := cache.Load(tag); ok {
			return p.(segment.Permutation)
		}
		bits := 63
		if maxID != nil && maxID(tag) == segment.JavaScriptSafe {
			bits = 53
		}
		p, err := opaque.New(key, tagTweak(o.Tweak, tag), bits)
		if err != nil { // unreachable: the same key and widths, and a tweak of the same length, were taken above
			panic(fmt.Sprintf("opaque permutation of tag %q: %v", tag, err))
		}
		// Bounded: the reveal route takes any tag name; past the bound a
		// permutation is made afresh on each call.
		if cached.Load() < maxCachedTags {
			if _, loaded := cache.LoadOrStore(tag, p); !loaded {
				cached.Add(1)
			}
		}
		return p
	}, nil
}

// maxCachedTags bounds the permutations tagPermutations keeps.
const maxCachedTags = 100_000

// tagTweak is the tweak of tag's permutation: SHA-256 over a label, the
// length of opaque.tweak, opaque.tweak and the tag, so that no two
// (tweak, tag) pairs share one.
func tagTweak(tweak, tag string) []byte {
	h := sha256.New()
	fmt.Fprintf(h, "firn segment tag v1\x00%d\x00%s%s", len(tweak), tweak, tag)
	return h.Sum(nil)
}

// spaceID is how stores record a namespace's ID space: its layout and, in
// opaque mode, the permutation over it (the key's fingerprint and the
// tweak, never the key). Two permutations over one space collide, so a
// namespace recorded with one refuses every other, and plain IDs.
func spaceID(l snowflake.Layout, p *opaque.Permutation) nodeid.LayoutID {
	id := nodeid.LayoutID{Fingerprint: l.Fingerprint(), Description: l.String()}
	if p != nil {
		id.Fingerprint += ";" + p.Fingerprint() // 19 + 1 + 33 characters, within nodeid.MaxFingerprint
		id.Description += fmt.Sprintf(", opaque IDs (%s; --opaque --opaque-key-file and --opaque-tweak name it)", p.Fingerprint())
	}
	return id
}

// reveal undoes p on id, when p is set.
func reveal(p *opaque.Permutation, id uint64) (uint64, error) {
	if p == nil {
		return id, nil
	}
	x, err := p.Decode(id)
	if err != nil {
		return 0, usagef("ID %d does not fit the %d-bit opaque space", id, p.Bits())
	}
	return x, nil
}

// encodingFlag registers --encoding, the text form of IDs a command
// prints or reads (idtext: decimal, base62, base32).
func encodingFlag(fs *flag.FlagSet) func() (idtext.Encoding, error) {
	name := fs.String("encoding", "", "")
	return func() (idtext.Encoding, error) {
		e, err := idtext.ParseEncoding(*name)
		if err != nil {
			return e, usagef("--encoding %q: want %s", *name, idtext.EncodingNames)
		}
		return e, nil
	}
}

const encodingUsage = `  --encoding E           decimal (default), base62 (11 characters, 0-9A-Za-z) or
                         base32 (13 characters, Crockford's): fixed width, so the
                         strings sort as the numbers do
`

// permutationName is p's fingerprint, or "" for plain IDs.
func permutationName(p *opaque.Permutation) string {
	if p == nil {
		return ""
	}
	return p.Fingerprint()
}

// opaqueDesc says which IDs a permutation fingerprint stands for.
func opaqueDesc(fp string) string {
	if fp == "" {
		return "plain IDs"
	}
	return "opaque IDs (" + fp + ")"
}
