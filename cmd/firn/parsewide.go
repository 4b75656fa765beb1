package main

import (
	"bufio"
	"encoding/hex"
	"fmt"

	"github.com/firn-id/firn/api"
	"github.com/firn-id/firn/idtext"
	"github.com/firn-id/firn/opaque"
	"github.com/firn-id/firn/snowflake"
	"github.com/firn-id/firn/wide"
)

// parsed is one argument of firn parse taken apart: a decimal ID of the
// layout, or another system's ID (wide) with, for a UUIDv7 or ULID the
// layout can have made, its firn slot (Parts, when firn is set).
type parsed struct {
	snowflake.Parts
	wide   *wide.ID
	arg    string
	firn   bool
	opaque *uint64 // the ID given, when it was revealed with a key
}

// parseArg reads an ID of l — decimal, or in enc, revealed with perm in
// opaque mode — or another form by its shape. The firn slot of a UUIDv7 or
// ULID is looked for only with withLayout: any generator's UUIDv7 reads as
// some slot of a 1 ms layout.
func parseArg(l snowflake.Layout, perm *opaque.Permutation, enc idtext.Encoding, withLayout bool, s string) (parsed, error) {
	if enc != idtext.Decimal || !wide.Shaped(s) {
		id, err := parseID(enc, s)
		if err != nil {
			return parsed{}, err
		}
		p, err := decodeID(l, perm, id)
		out := parsed{Parts: p}
		if perm != nil {
			out.opaque = &id
		}
		return out, err
	}
	id, err := wide.Parse(s)
	if err != nil {
		return parsed{}, usagef("ID %q: %s", s, err)
	}
	out := parsed{wide: &id, arg: s}
	if !withLayout {
		return out, nil
	}
	out.Parts, out.firn, err = id.Slot(l)
	return out, err
}

func writeWideText(w *bufio.Writer, p parsed) {
	row := func(k string, v any) { fmt.Fprintf(w, "%-13s %v\n", k, v) }
	row("id", p.arg)
	row("form", p.wide.Form)
	row("hex", hex.EncodeToString(p.wide.Bytes))
	if !p.wide.Time.IsZero() {
		row("time", p.wide.Time.Format(timeFormat))
		row("unix_ms", p.wide.Time.UnixMilli())
	}
	for _, f := range p.wide.Fields {
		row(f.Name, f.Value)
	}
	if p.firn {
		row("firn.id", p.ID)
		row("firn.tick", p.Tick)
		for _, f := range p.Fields {
			row("firn."+f.Name, f.Value)
		}
		row("firn.sequence", p.Sequence)
	}
}

func writeWideJSON(w *bufio.Writer, p parsed) {
	var firn *snowflake.Parts
	if p.firn {
		firn = &p.Parts
	}
	writeLine(w, api.NewWideDecoded(p.arg, *p.wide, firn))
}
