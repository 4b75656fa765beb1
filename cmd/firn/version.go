package main

import (
	"fmt"
	"io"

	"github.com/firn-id/firn/internal/buildinfo"
)

var versionUsage = `Usage: firn version   (or firn --version)

Prints the module version, the VCS commit (and whether the work tree had
changes) and the Go version this binary was built with. A running server
says the same on /healthz and in the metric firn_build_info.
`

func runVersion(args []string, stdout io.Writer) error {
	if len(args) > 0 {
		if args[0] == "-h" || args[0] == "--help" || args[0] == "-help" {
			return errHelp
		}
		return extraArg("version", args[0])
	}
	_, err := fmt.Fprintln(stdout, buildinfo.Read())
	return err
}
