package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"io"
	"strconv"
	"strings"

	"github.com/firn-id/firn/snowflake"
)

var nextUsage = `Usage: firn next [-n N] [--node N] [layout flags]

Prints N new IDs, one per line, from a generator for one node.

  -n N       how many IDs (default 1, at most 10000000)
  --node N   the node part: one number, or one per node field,
             most significant first (twitter: --node 3,17). Default 0.

` + layoutHelp()

const maxNext = 10_000_000

func runNext(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("next", flag.ContinueOnError)
	var lf layoutFlags
	lf.register(fs)
	n := fs.Int("n", 1, "")
	nodeArg := fs.String("node", "0", "")
	rest, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usagef("unexpected argument %q; usage: firn next [-n N] [--node N] [layout flags]", rest[0])
	}
	if *n < 1 || *n > maxNext {
		return usagef("-n %d: want 1 to %d", *n, maxNext)
	}
	l, err := lf.layout()
	if err != nil {
		return err
	}
	if l.DecodeOnly() {
		return usagef("layout %s uses all 64 bits, so it is decode-only: generated IDs fit 63 bits (a signed BIGINT)", l.Name)
	}
	node, err := parseNode(l, *nodeArg)
	if err != nil {
		return err
	}
	g, err := snowflake.New(snowflake.Config{Layout: l, Node: node, Reservation: snowflake.Unreserved()})
	if err != nil {
		return usagef("%s", err)
	}
	return printIDs(g, *n, stdout)
}

func printIDs(g *snowflake.Generator, n int, stdout io.Writer) error {
	w := bufio.NewWriter(stdout)
	buf := make([]int64, min(n, 4096))
	var line []byte
	for n > 0 {
		k, err := g.NextN(context.Background(), buf[:min(n, len(buf))])
		for _, id := range buf[:k] {
			line = strconv.AppendInt(line[:0], id, 10)
			line = append(line, '\n')
			w.Write(line)
		}
		if err != nil {
			w.Flush()
			return err
		}
		n -= k
	}
	return w.Flush()
}

// parseNode reads --node: one number for the whole node part, or one per
// node field.
func parseNode(l snowflake.Layout, s string) (uint64, error) {
	parts := strings.Split(s, ",")
	vals := make([]uint64, len(parts))
	for i, p := range parts {
		v, err := strconv.ParseUint(strings.TrimSpace(p), 10, 64)
		if err != nil {
			return 0, usagef("--node %q: want a non-negative number, or one per node field", s)
		}
		vals[i] = v
	}
	if len(vals) == 1 {
		if vals[0] > l.MaxNode() {
			return 0, usagef("--node %d out of range: layout %s has %d node bits (0..%d)", vals[0], l.Name, l.NodeBits(), l.MaxNode())
		}
		return vals[0], nil
	}
	node, err := l.NodeValue(vals...)
	var re *snowflake.RangeError
	if errors.As(err, &re) {
		return 0, usagef("--node %q: %s out of range 0..%d", s, re.What, re.Max)
	}
	if err != nil {
		return 0, usagef("--node %q: %s", s, strings.TrimPrefix(err.Error(), "snowflake: "))
	}
	return node, nil
}
