// Command firn-check checks a run the fault harness saved from scratch:
// the IDs of its history, and the node-store operations its processes
// recorded, if any, in the same directory — a failed run's artifact
// directory, or a run's compressed histories under `make evidence`:
//
//	firn-check [-node-bits 10] [-epsilon 50ms] [-lead 10s] [-timeout 5m] history.jsonl[.gz]
//
// The layout is firn's default with -node-bits node bits; the harness's
// runs use 2. The store operations (*.ops.jsonl[.gz]) are checked for
// linearizability against storecheck's model, for at most -timeout; an
// illegal or undecided history has its picture written beside it
// (store-ops.html).
//
// It prints the report and exits 1 if the history broke a rule, 2 if it
// could not be read.
package main

import (
	"compress/gzip"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/firn-id/firn/snowflake"
	"github.com/firn-id/firn/test/cluster/history"
	"github.com/firn-id/firn/test/cluster/storecheck"
)

func main() {
	var opts history.Options
	flag.DurationVar(&opts.Epsilon, "epsilon", 0, "slack on each side of a request's window (default 50ms)")
	flag.DurationVar(&opts.Lead, "lead", 0, "how far ahead of the clock an ID's time may be (default 10s)")
	nodeBits := flag.Int("node-bits", 10, "node bits of the layout (firn's default layout otherwise)")
	timeout := flag.Duration("timeout", storecheck.DefaultTimeout, "how long the linearizability search may take (0: no bound)")
	flag.Parse()
	opts.Layout = snowflake.DefaultLayout()
	opts.Layout.Node = []snowflake.Field{{Name: "node", Bits: *nodeBits}}
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: firn-check [-node-bits N] [-epsilon D] [-lead D] [-timeout D] HISTORY")
		os.Exit(2)
	}
	ok, err := checkIDs(flag.Arg(0), opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, "firn-check:", err)
		os.Exit(2)
	}
	storeOK, err := checkStore(filepath.Dir(flag.Arg(0)), *timeout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "firn-check:", err)
		os.Exit(2)
	}
	if !ok || !storeOK {
		os.Exit(1)
	}
}

func checkIDs(path string, opts history.Options) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		z, err := gzip.NewReader(f)
		if err != nil {
			return false, fmt.Errorf("%s: %w", path, err)
		}
		r = z
	}
	rep, err := history.Check(r, opts)
	if err != nil {
		return false, err
	}
	rep.Write(os.Stdout)
	return rep.OK(), nil
}

// checkStore checks the store logs in dir; a run of the production build
// left none.
func checkStore(dir string, timeout time.Duration) (bool, error) {
	ops, logs, err := storecheck.ReadDir(dir)
	if err != nil {
		return false, err
	}
	if logs == 0 {
		fmt.Println("no store operations recorded (a production build's run): IDs only")
		return true, nil
	}
	r := storecheck.Check(ops, timeout)
	fmt.Printf("store operations of %d process lives: %s\n", logs, r)
	if r.OK() {
		return true, nil
	}
	pic := filepath.Join(dir, "store-ops.html")
	if err := r.Visualize(pic); err != nil {
		return false, err
	}
	fmt.Println("picture of the history:", pic)
	return false, nil
}
