package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"time"
)

var adminUsage = `Usage: firn admin advance --node N (--to TIME | --past-id ID) [store flags] [layout flags]

Moves a node's high-water mark (HWM) forward, never back: after a store was
restored from a backup it may have lost HWMs that IDs were already issued
under. Advance every node past the last ID issued before the restore (or
past the time of the failure plus a margin) before starting firn again.

  --node N       the node value (as firn parse prints it)
  --to TIME      the new HWM: Unix milliseconds or an RFC 3339 time
  --past-id ID   the new HWM: the end of the tick of ID, decoded with the
                 layout flags

` + storeFlagsUsage + "\n" + layoutHelp()

func runAdmin(args []string, stdout io.Writer) (err error) {
	if len(args) == 0 || args[0] != "advance" {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "-help") {
			return errHelp
		}
		return usagef("want a subcommand: firn admin advance --node N --to TIME")
	}
	fs := flag.NewFlagSet("admin", flag.ContinueOnError)
	var sf storeFlags
	sf.register(fs)
	var lf layoutFlags
	lf.register(fs)
	nodeArg := fs.String("node", "", "")
	to := fs.String("to", "", "")
	pastID := fs.String("past-id", "", "")
	rest, err := parseFlags(fs, args[1:])
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usagef("unexpected argument %q", rest[0])
	}
	node, err := strconv.ParseUint(*nodeArg, 10, 64)
	if err != nil {
		return usagef("--node %q: want a node value, a non-negative number", *nodeArg)
	}
	hwm, err := advanceTarget(&lf, *to, *pastID)
	if err != nil {
		return err
	}
	store, closeStore, err := sf.open()
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, closeStore()) }()
	stored, err := store.Advance(context.Background(), node, hwm)
	if err != nil {
		return err
	}
	note := ""
	if stored > hwm {
		note = " (it was already past the requested value)"
	}
	_, err = fmt.Fprintf(stdout, "node %d: HWM %s%s\n", node, time.UnixMilli(stored).UTC().Format(timeFormat), note)
	return err
}

// advanceTarget reads --to or --past-id as Unix milliseconds.
func advanceTarget(lf *layoutFlags, to, pastID string) (int64, error) {
	switch {
	case (to == "") == (pastID == ""):
		return 0, usagef("give exactly one of --to TIME and --past-id ID")
	case to != "":
		t, err := parseEpoch(to)
		if err != nil {
			return 0, usagef("--to %q: want Unix milliseconds or an RFC 3339 time", to)
		}
		return t.UnixMilli(), nil
	}
	l, err := lf.layout()
	if err != nil {
		return 0, err
	}
	p, err := decodeArg(l, pastID)
	if err != nil {
		return 0, err
	}
	return p.Time.Add(l.Tick).UnixMilli(), nil
}
