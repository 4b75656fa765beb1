package main

import (
	"context"

	"github.com/firn-id/firn/idtext"
	"github.com/firn-id/firn/opaque"
	"github.com/firn-id/firn/snowflake"
	"github.com/firn-id/firn/wide"
)

// idFormat is a form firn next prints IDs in.
type idFormat struct {
	name string
}

var idFormats = []idFormat{{name: "snowflake"}, {name: "uuid"}, {name: "ulid"}}

func parseIDFormat(name string) (idFormat, error) {
	for _, f := range idFormats {
		if f.name == name {
			return f, nil
		}
	}
	return idFormat{}, usagef("--format %q: want snowflake, uuid or ulid", name)
}

// drawer makes up to k IDs, appending each and a newline to b.
type drawer func(ctx context.Context, k int, b []byte) ([]byte, int, error)

// check refuses what the form cannot carry: opaque mode hides an ID's
// time and count, which a UUIDv7 or ULID carries in plain, and the text
// encodings are of 64-bit IDs.
func (f idFormat) check(perm *opaque.Permutation, enc idtext.Encoding) error {
	switch {
	case f.name != "snowflake" && perm != nil:
		return usagef("--format %s with --opaque: a %s carries its time and sequence in plain, which opaque mode hides; use --format snowflake", f.name, f.name)
	case f.name != "snowflake" && enc != idtext.Decimal:
		return usagef("--encoding %s applies to snowflake IDs; a %s has its own text form", enc, f.name)
	}
	return nil
}

// drawer returns the drawer of f over g: snowflake IDs permuted by perm
// in opaque mode and written in enc.
func (f idFormat) drawer(g *snowflake.Generator, perm *opaque.Permutation, enc idtext.Encoding) (drawer, error) {
	if err := f.check(perm, enc); err != nil {
		return nil, err
	}
	if f.name == "snowflake" {
		ids := make([]int64, 4096)
		return func(ctx context.Context, k int, b []byte) ([]byte, int, error) {
			n, err := g.NextN(ctx, ids[:k])
			if perm != nil {
				if perr := perm.EncodeN(ids[:n]); perr != nil {
					return b, 0, perr
				}
			}
			return enc.AppendLines(b, ids[:n]), n, err
		}, nil
	}
	w, err := wide.New(g)
	if err != nil {
		return nil, err
	}
	if f.name == "uuid" {
		return wideDrawer(w.NextUUIDs), nil
	}
	return wideDrawer(w.NextULIDs), nil
}

func wideDrawer[T interface{ String() string }](fill func(context.Context, []T) (int, error)) drawer {
	ids := make([]T, 4096)
	return func(ctx context.Context, k int, b []byte) ([]byte, int, error) {
		n, err := fill(ctx, ids[:k])
		return wide.AppendLines(b, ids[:n]), n, err
	}
}
