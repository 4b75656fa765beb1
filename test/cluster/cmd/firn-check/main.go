// Command firn-check checks a history recorded by the fault harness, such
// as the one a failed run leaves in its artifact directory:
//
//	firn-check [-node-bits 10] [-epsilon 50ms] [-lead 10s] history.jsonl
//
// The layout is firn's default with -node-bits node bits; the harness's
// runs use 2.
//
// It prints the report and exits 1 if the history broke a rule, 2 if it
// could not be read.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/firn-id/firn/snowflake"
	"github.com/firn-id/firn/test/cluster/history"
)

func main() {
	var opts history.Options
	flag.DurationVar(&opts.Epsilon, "epsilon", 0, "slack on each side of a request's window (default 50ms)")
	flag.DurationVar(&opts.Lead, "lead", 0, "how far ahead of the clock an ID's time may be (default 10s)")
	nodeBits := flag.Int("node-bits", 10, "node bits of the layout (firn's default layout otherwise)")
	flag.Parse()
	opts.Layout = snowflake.DefaultLayout()
	opts.Layout.Node = []snowflake.Field{{Name: "node", Bits: *nodeBits}}
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: firn-check [-node-bits N] [-epsilon D] [-lead D] HISTORY")
		os.Exit(2)
	}
	f, err := os.Open(flag.Arg(0))
	if err != nil {
		fmt.Fprintln(os.Stderr, "firn-check:", err)
		os.Exit(2)
	}
	defer f.Close()
	rep, err := history.Check(f, opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, "firn-check:", err)
		os.Exit(2)
	}
	rep.Write(os.Stdout)
	if !rep.OK() {
		os.Exit(1)
	}
}
