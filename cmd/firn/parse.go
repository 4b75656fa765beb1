package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"github.com/firn-id/firn/idtext"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/firn-id/firn/api"
	"github.com/firn-id/firn/cmd/firn/internal/config"
	"github.com/firn-id/firn/opaque"
	"github.com/firn-id/firn/snowflake"
	"github.com/firn-id/firn/wide"
)

var parseUsage = `Usage: firn parse [layout flags] [--json] ID...
       firn parse --guess [--json] ID...
       firn next -n 3 | firn parse [layout flags] [--json]

Takes each ID apart: its time, tick, node fields and sequence. With no ID
argument, reads the IDs from standard input (one per line, or separated by
spaces; at most 1,000,000) unless it is a terminal. All IDs are checked
before anything is printed. A time more than a minute in the future adds
a line "note": the ID is of another layout, or opaque and read without
its key.

A decimal ID is read with the layout. Other systems' IDs are told apart by
their form and printed in their own parts:
  ` + strings.ReplaceAll(wide.Forms(), "\n", "\n  ") + `

A UUIDv7 or ULID that firn next --format uuid|ulid made also shows its
firn slot (firn.tick, firn.<node field>, firn.sequence, and firn.id, the
64-bit ID of the same slot) when layout flags are given and the layout
can have made it.

  --json   one JSON object per line:
           {"id":"…","unix_ms":…,"time":"…","tick":…,"node":{"<field>":…},"sequence":…}
           and for other forms
           {"id":"…","form":"uuid","hex":"…","unix_ms":…,"time":"…","fields":{…},"firn":{…}}
  --guess  for an ID of unknown origin: reads it with every preset below
           instead of one layout (so it takes no layout flags). A layout
           is plausible when the ID fits its width and its time lies after
           the layout's epoch and at most a minute after now. Plausible
           layouts come first, in the order of a heuristic: the one a
           random number would pass least often leads, small node and
           sequence values counting as evidence. It is not the likeliest
           system (Discord's documented example ID leads as sonyflake);
           two or more plausible layouts make the ID ambiguous, and all
           are named (a Mastodon ID also reads as a Discord ID of 2015).
           An ID of another form (UUID, ULID…) names its form and is
           taken apart as without --guess. With --json:
           {"id":"…","ambiguous":…,"candidates":[{"layout":"…","plausible":…,
           "reason":"…","unix_ms":…,"time":"…","tick":…,"node":{…},"sequence":…},…]}

` + encodingUsage + `
With the opaque flags, each ID is an opaque ID of that namespace: it is
revealed with the key first; id shows the plain ID it stands for, and
opaque_id the ID given (in decimal), as GET /v1/snowflake/reveal/{id} does.

` + configFlagUsage + "\n" + opaqueFlagsUsage + "\n" + layoutHelp() + `
Examples:
  firn parse --layout discord --json 175928847299117063
  firn parse --guess 103270115826048975
`

const timeFormat = "2006-01-02T15:04:05.000Z"

// parseUses are the settings firn parse takes.
var parseUses = append([]string{"layout"}, opaqueUses...)

// parseFlags are firn parse's own flags.
type parseOwn struct {
	encoding      func() (idtext.Encoding, error)
	asJSON, guess *bool
}

// parseFlagSet is firn parse's flag set, bound to cfg.
func parseFlagSet(cfg *config.Config) (*flag.FlagSet, *parseOwn) {
	fs := flag.NewFlagSet("parse", flag.ContinueOnError)
	bindConfig(fs, cfg, parseUses...)
	return fs, &parseOwn{encoding: encodingFlag(fs), asJSON: fs.Bool("json", false, ""), guess: fs.Bool("guess", false, "")}
}

func runParse(args []string, stdout io.Writer) error {
	cfg, err := loadFor(args, parseUses...)
	if err != nil {
		return err
	}
	fs, own := parseFlagSet(cfg)
	encoding, asJSON, guess := own.encoding, own.asJSON, own.guess
	ids, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if *guess {
		if set := setLayoutFlags(fs); len(set) > 0 {
			return usagef("--guess reads every preset, so it takes no layout flags (got --%s)", strings.Join(set, ", --"))
		}
	}
	if len(ids) == 0 && !isTerminal(stdin) {
		if ids, err = readIDs(stdin); err != nil {
			return err
		}
	}
	if len(ids) == 0 {
		return usagef("no ID given; usage: firn parse [layout flags] [--json] ID..., or IDs on standard input")
	}
	enc, err := encoding()
	if err != nil {
		return err
	}
	if *guess {
		return runGuess(ids, enc, *asJSON, stdout)
	}
	l, err := cfg.Layout.Snowflake()
	if err != nil {
		return err
	}
	perm, err := cfg.Opaque.Permutation(l)
	if err != nil {
		return err
	}
	withLayout := len(setLayoutFlags(fs)) > 0 || cfg.Layout != config.Default().Layout
	parts := make([]parsed, len(ids))
	for i, s := range ids {
		if parts[i], err = parseArg(l, perm, enc, withLayout, s); err != nil {
			return err
		}
	}
	return writeParsed(stdout, parts, *asJSON, perm != nil)
}

// writeParsed prints the IDs taken apart, as JSON lines or as text blocks;
// a plain ID (not revealed from an opaque one) whose time is in the
// future gets a note.
func writeParsed(stdout io.Writer, parts []parsed, asJSON, revealed bool) error {
	w := bufio.NewWriter(stdout)
	for i, p := range parts {
		switch {
		case asJSON && p.wide != nil:
			writeWideJSON(w, p)
		case asJSON:
			writeJSON(w, p)
		default:
			if i > 0 {
				w.WriteString("\n")
			}
			if p.wide != nil {
				writeWideText(w, p)
				continue
			}
			writeText(w, p)
			if !revealed && p.Time.After(time.Now().Add(snowflake.GuessSkew)) {
				fmt.Fprintf(w, "%-10s %s\n", "note", futureNote)
			}
		}
	}
	return w.Flush()
}

// futureNote follows a decoded time later than now (plus
// snowflake.GuessSkew): the ID was not made with this layout, or is
// opaque.
const futureNote = "the time is in the future: the ID is of another layout (try --guess), or opaque (reveal it with --opaque --opaque-key-file FILE)"

// maxStdinIDs bounds how many IDs firn parse reads from standard input:
// all are held and checked before anything is printed.
const maxStdinIDs = 1_000_000

// readIDs reads whitespace-separated IDs from r.
func readIDs(r io.Reader) ([]string, error) {
	ids, err := idtext.ReadIDs(r, maxStdinIDs)
	switch {
	case errors.Is(err, idtext.ErrTooMany):
		return nil, usagef("standard input holds more than %d IDs: parse them in parts", maxStdinIDs)
	case err != nil:
		return nil, fmt.Errorf("read standard input: %w", err)
	}
	return ids, nil
}

// parseID reads one ID written in enc, wording idtext's reasons: a
// decimal ID is named in full.
func parseID(enc idtext.Encoding, s string) (uint64, error) {
	id, err := enc.Parse(s)
	var se *idtext.SyntaxError
	switch {
	case !errors.As(err, &se):
		return id, err
	case enc != idtext.Decimal:
		return 0, usagef("%s", se.Reason())
	case se.Kind == idtext.OutOfRange:
		return 0, usagef("ID %q is larger than 64 bits", s)
	}
	return 0, usagef("ID %q is not a non-negative decimal number (for base62 or base32, give --encoding)", s)
}

// decodeText parses one ID written in enc and takes it apart; in opaque
// mode (p set) it undoes the permutation first.
func decodeText(l snowflake.Layout, p *opaque.Permutation, enc idtext.Encoding, s string) (snowflake.Parts, error) {
	id, err := parseID(enc, s)
	if err != nil {
		return snowflake.Parts{}, err
	}
	return decodeID(l, p, id)
}

// decodeID takes id apart; in opaque mode (p set) it undoes the
// permutation first.
func decodeID(l snowflake.Layout, p *opaque.Permutation, id uint64) (snowflake.Parts, error) {
	id, err := reveal(p, id)
	if err != nil {
		return snowflake.Parts{}, err
	}
	parts, err := l.Decompose(id)
	if re := (*snowflake.RangeError)(nil); errors.As(err, &re) {
		return parts, usagef("ID %d does not fit the %d-bit %s layout: its top bits are set", re.Value, re.Bits, re.Layout)
	}
	return parts, err
}

func writeText(w *bufio.Writer, p parsed) {
	row := func(k string, v any) { fmt.Fprintf(w, "%-10s %v\n", k, v) }
	row("id", p.ID)
	if p.opaque != nil {
		row("opaque_id", *p.opaque)
	}
	row("time", p.Time.Format(timeFormat))
	row("unix_ms", p.Time.UnixMilli())
	row("tick", p.Tick)
	for _, f := range p.Fields {
		row(f.Name, f.Value)
	}
	row("sequence", p.Sequence)
}

func writeJSON(w *bufio.Writer, p parsed) {
	d := api.NewDecoded(p.ID, p.Parts)
	if p.opaque != nil {
		d.OpaqueID = strconv.FormatUint(*p.opaque, 10)
	}
	writeLine(w, d)
}

// writeLine writes v as one line of JSON.
func writeLine(w *bufio.Writer, v any) {
	b, _ := json.Marshal(v) // the api types always marshal
	w.Write(append(b, '\n'))
}
