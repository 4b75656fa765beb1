package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/firn-id/firn/cmd/firn/internal/config"
	"github.com/firn-id/firn/internal/digits"
	"github.com/firn-id/firn/snowflake"
)

var layoutUsage = `Usage: firn layout [layout flags] [--config FILE]

Draws the layout's bits, most significant first, and prints what it can
hold: the last representable tick, nodes, and IDs per node.

` + configFlagUsage + "\n" + layoutHelp() + `
Example:
  firn layout --layout twitter
  firn layout --tick 10ms --time-bits 39 --node-bits 16 --sequence-bits 8 --order time,sequence,node
`

// layoutFlagSet is firn layout's flag set, bound to cfg.
func layoutFlagSet(cfg *config.Config) *flag.FlagSet {
	fs := flag.NewFlagSet("layout", flag.ContinueOnError)
	bindConfig(fs, cfg, "layout")
	return fs
}

func runLayout(args []string, stdout io.Writer) error {
	cfg, err := loadFor(args, "layout")
	if err != nil {
		return err
	}
	rest, err := parseFlags(layoutFlagSet(cfg), args)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return extraArg("layout", rest[0])
	}
	l, err := cfg.Layout.Snowflake()
	if err != nil {
		return err
	}
	w := bufio.NewWriter(stdout)
	fmt.Fprintln(w, l)
	fmt.Fprintln(w)
	drawLayout(w, l)
	fmt.Fprintln(w)
	writeCapacity(w, l)
	return w.Flush()
}

// box is one part of the diagram.
type box struct {
	label  string
	hi, lo int
}

func boxes(l snowflake.Layout) []box {
	var segs []box
	bit := 64
	add := func(label string, bits int) {
		if bits > 0 {
			segs = append(segs, box{label: label, hi: bit - 1, lo: bit - bits})
			bit -= bits
		}
	}
	add("unused", 64-l.Bits())
	if l.Bits() < 64 && segs[0].hi == 63 && segs[0].lo == 63 {
		segs[0].label = "sign"
	}
	order := l.Order
	if order == nil {
		order = []snowflake.Part{snowflake.PartTime, snowflake.PartNode, snowflake.PartSequence}
	}
	for _, p := range order {
		switch p {
		case snowflake.PartTime:
			add(fmt.Sprintf("time %d", l.TimeBits), l.TimeBits)
		case snowflake.PartNode:
			for _, f := range l.Node {
				add(fmt.Sprintf("%s %d", f.Name, f.Bits), f.Bits)
			}
		case snowflake.PartSequence:
			add(fmt.Sprintf("sequence %d", l.SequenceBits), l.SequenceBits)
		}
	}
	return segs
}

// drawLayout draws one box per part, most significant bits on the left,
// with the bit positions each covers.
func drawLayout(w io.Writer, l snowflake.Layout) {
	segs := boxes(l)
	var border, labels, bits strings.Builder
	border.WriteString("+")
	labels.WriteString("|")
	bits.WriteString(" ")
	for _, s := range segs {
		pos := fmt.Sprintf("%d", s.hi)
		if s.lo != s.hi {
			pos = fmt.Sprintf("%d-%d", s.hi, s.lo)
		}
		width := max(len(s.label), len(pos)) + 2
		border.WriteString(strings.Repeat("-", width) + "+")
		labels.WriteString(center(s.label, width) + "|")
		bits.WriteString(center(pos, width) + " ")
	}
	fmt.Fprintln(w, border.String())
	fmt.Fprintln(w, labels.String())
	fmt.Fprintln(w, border.String())
	fmt.Fprintln(w, strings.TrimRight(bits.String(), " "))
}

func center(s string, width int) string {
	left := (width - len(s)) / 2
	return strings.Repeat(" ", left) + s + strings.Repeat(" ", width-len(s)-left)
}

func writeCapacity(w io.Writer, l snowflake.Layout) {
	c := l.Capacity()
	row := func(k, format string, args ...any) {
		fmt.Fprintf(w, "%-12s "+format+"\n", append([]any{k}, args...)...)
	}
	row("epoch", "%s", l.Epoch.UTC().Format(timeFormat))
	row("tick", "%s", l.Tick)
	years := c.Span.Hours() / (365.2425 * 24)
	if c.Span == time.Duration(1<<63-1) {
		row("last tick", "%s (more than 292 years after the epoch)", c.Last.Format(timeFormat))
	} else {
		row("last tick", "%s (%.1f years after the epoch)", c.Last.Format(timeFormat), years)
	}
	if since, ok := l.ExhaustedAt(time.Now()); ok {
		row("", "exhausted since %s: no new IDs (firn parse still decodes them)", since.Format(time.DateOnly))
	}
	row("nodes", "%s", digits.Group(c.Nodes))
	ids := "IDs"
	if c.PerTick == 1 {
		ids = "ID" // a layout with no sequence bits (cockroachdb)
	}
	row("per node", "%s %s per tick, %s IDs/s", digits.Group(c.PerTick), ids, digits.Group(uint64(c.PerSecond)))
	var le *snowflake.LayoutError
	_, exhausted := l.ExhaustedAt(time.Now())
	if err := l.ValidateForGenerator(); errors.As(err, &le) {
		row("generates", "no: %s", le.Reason)
	} else if exhausted {
		row("generates", "no: its time ran out (above); %d bits would fit a signed BIGINT", l.Bits())
	} else {
		row("generates", "yes: %d bits, fits a signed BIGINT", l.Bits())
	}
	if l.JavaScriptSafe() {
		row("JavaScript", "safe: every ID is below 2^53, an exact Number")
	} else {
		row("JavaScript", "IDs above 2^53 lose precision as numbers: carry them as strings (or use --layout js53)")
	}
}
