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
)

// runGuess answers firn parse --guess: each ID read with every preset,
// ranked by snowflake.Guess. All IDs are checked before anything is
// printed.
func runGuess(args []string, enc idtext.Encoding, asJSON bool, stdout io.Writer) error {
	ids := make([]uint64, len(args))
	for i, s := range args {
		id, err := parseID(enc, s)
		if err != nil {
			return err
		}
		ids[i] = id
	}
	now := time.Now()
	w := bufio.NewWriter(stdout)
	for i, id := range ids {
		ranked := snowflake.Guess(id, now)
		if asJSON {
			writeGuessJSON(w, id, ranked)
			continue
		}
		if i > 0 {
			w.WriteString("\n")
		}
		writeGuessText(w, id, ranked)
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
		fmt.Fprintf(w, "%-10s %d layouts, ambiguous; the most telling first (a heuristic)\n", "plausible", len(plausible))
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
