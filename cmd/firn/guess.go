package main

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/firn-id/firn/api"
	"github.com/firn-id/firn/idtext"
	"github.com/firn-id/firn/snowflake"
	"github.com/firn-id/firn/wide"
)

// runGuess answers firn parse --guess: each ID read with every preset,
// ranked by snowflake.Guess. An ID of another form (a UUID, a ULID…) says
// what it is by its form: it is taken apart as firn parse does without
// --guess. All IDs are checked before anything is printed.
func runGuess(args []string, enc idtext.Encoding, asJSON bool, stdout io.Writer) error {
	ids := make([]uint64, len(args))
	wides := make([]*parsed, len(args))
	for i, s := range args {
		if enc == idtext.Decimal && wide.Shaped(s) {
			id, err := wide.Parse(s)
			if err != nil {
				return usagef("ID %q: %s", s, err)
			}
			wides[i] = &parsed{wide: &id, arg: s}
			continue
		}
		id, err := parseID(enc, s)
		if err != nil {
			return err
		}
		ids[i] = id
	}
	now := time.Now()
	w := bufio.NewWriter(stdout)
	for i, id := range ids {
		switch {
		case asJSON && wides[i] != nil:
			writeWideJSON(w, *wides[i])
			continue
		case asJSON:
			writeGuessJSON(w, id, snowflake.Guess(id, now))
			continue
		case i > 0:
			w.WriteString("\n")
		}
		if wides[i] != nil {
			writeWideText(w, *wides[i])
			continue
		}
		writeGuessText(w, id, snowflake.Guess(id, now))
	}
	return w.Flush()
}

// partsText is "node=1 worker=2 sequence=7".
func partsText(p snowflake.Parts) string {
	var b strings.Builder
	for _, f := range p.Fields {
		fmt.Fprintf(&b, "%s=%d ", f.Name, f.Value)
	}
	fmt.Fprintf(&b, "sequence=%d", p.Sequence)
	return b.String()
}

func writeGuessText(w *bufio.Writer, id uint64, ranked []snowflake.Candidate) {
	plausible := snowflake.Plausible(ranked)
	fmt.Fprintf(w, "%-10s %d\n", "id", id)
	switch len(plausible) {
	case 0:
		fmt.Fprintf(w, "%-10s none: no preset reads it as made after its epoch and by now\n", "plausible")
	case 1:
		fmt.Fprintf(w, "%-10s 1 layout\n", "plausible")
	default:
		fmt.Fprintf(w, "%-10s %d layouts, ambiguous; ordered by a heuristic (small node and sequence values first), not by likelihood\n", "plausible", len(plausible))
	}
	for _, c := range plausible {
		fmt.Fprintf(w, "  %-13s %s  %s\n", c.Layout.Name, c.Layout.FormatTime(c.Parts.Time), partsText(c.Parts))
	}
	if len(plausible) < len(ranked) {
		w.WriteString("ruled out\n")
	}
	for _, c := range ranked[len(plausible):] {
		fmt.Fprintf(w, "  %-13s %s\n", c.Layout.Name, c.Reason)
	}
}

func writeGuessJSON(w *bufio.Writer, id uint64, ranked []snowflake.Candidate) {
	writeLine(w, api.NewGuess(id, ranked))
}
