package main

import (
	"fmt"
	"io"

	"github.com/firn-id/firn/internal/buildinfo"
)

var versionUsage = `Usage: firn version   (or firn --version)

Prints the module version, the VCS commit (and whether the work tree had
changes) and the Go version this binary was built with. A running server
says the same on /healthz and in the metric firn_build_info. go build
records the commit only in a git clone (not a git worktree) and without
-buildvcs=false (go env GOFLAGS); make build stamps it in any checkout.
`

// noCommit follows the version line of a build that recorded no commit.
const noCommit = "no commit recorded: go build records one only in a git clone (not a git worktree) and without " +
	"-buildvcs=false (go env GOFLAGS); make build stamps it in any checkout"

func runVersion(args []string, stdout io.Writer) error {
	if len(args) > 0 {
		if isHelp(args[0]) {
			return errHelp
		}
		return extraArg("version", args[0])
	}
	bi := buildinfo.Read()
	if bi.Commit == buildinfo.NoCommit {
		_, err := fmt.Fprintf(stdout, "%s\n%s\n", bi, noCommit)
		return err
	}
	_, err := fmt.Fprintln(stdout, bi)
	return err
}
