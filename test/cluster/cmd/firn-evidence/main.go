// Command firn-evidence prints the report of `make evidence` from the
// sections its runs wrote to a directory (package evidence):
//
//	firn-evidence DIR > DIR/report.md
//
// It exits 1 if a run's IDs broke a rule or its store operations were not
// found linearizable, 2 if the directory holds no section or one cannot
// be read.
package main

import (
	"fmt"
	"os"

	"github.com/firn-id/firn/test/cluster/evidence"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: firn-evidence DIR")
		os.Exit(2)
	}
	sections, err := evidence.Read(os.Args[1])
	if err == nil && len(sections) == 0 {
		err = fmt.Errorf("no run's section in %s", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "firn-evidence:", err)
		os.Exit(2)
	}
	evidence.Report(os.Stdout, sections)
	for _, s := range sections {
		if s.Failed() {
			fmt.Fprintf(os.Stderr, "firn-evidence: the %s run on %s failed\n", s.Build, s.Store)
			os.Exit(1)
		}
	}
}
