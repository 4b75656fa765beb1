package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
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
	fmt.Fprint(w, l.Diagram())
	fmt.Fprintln(w)
	writeCapacity(w, l)
	return w.Flush()
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
