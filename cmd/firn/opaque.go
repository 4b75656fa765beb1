package main

import (
	"flag"

	"github.com/firn-id/firn/cmd/firn/internal/config"

	"github.com/firn-id/firn/idtext"
	"github.com/firn-id/firn/opaque"
)

// opaqueUses are opaque mode's settings on the commands that check a
// namespace's ID space or read its IDs (next, admin, parse), the flags of
// opaqueFlagsUsage; opaque.key is the file's only.
var opaqueUses = []string{"opaque.snowflake", "opaque.key_file", "opaque.key", "opaque.tweak", "opaque.accept_unchecked_key"}

var opaqueFlagsUsage = "Opaque flags (a namespace in opaque mode: serve's opaque.* settings):\n" + config.Usage(opaqueUses...)

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

var encodingUsage = ownFlags([2]string{"--encoding E", "decimal (default), base62 (11 characters, 0-9A-Za-z) or " +
	"base32 (13 characters, Crockford's): fixed width, so the strings sort as the numbers do"})

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
