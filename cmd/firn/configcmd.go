package main

import (
	"fmt"
	"io"
	"os"

	"github.com/firn-id/firn/internal/config"
)

var configUsage = `Usage: firn config check [--config FILE] [serve flags]
       firn config print [--config FILE]

check validates what firn serve would run with — the file, the FIRN_…
environment and the flags — without opening a store or a port, and prints
a one-line summary. print writes the file merged with the environment as
YAML, with the password of a DSN redacted. docs/config.md lists the
settings.
`

func runConfig(args []string, stdout io.Writer) error {
	if len(args) == 0 {
		return usagef("want a subcommand: check or print; run 'firn help config'")
	}
	switch args[0] {
	case "-h", "--help", "-help":
		return errHelp
	case "check":
		o, err := parseServe(args[1:])
		if err != nil {
			return err
		}
		store := o.stores.kind
		_, err = fmt.Fprintf(stdout, "config ok: http %s, layout %s, store %s\n", o.addr, o.layout, store)
		return err
	case "print":
		path := ""
		if len(args) == 3 && (args[1] == "--config" || args[1] == "-config") {
			path = args[2]
		} else if len(args) != 1 {
			return usagef("usage: firn config print [--config FILE]")
		}
		var doc []byte
		if path != "" {
			b, err := os.ReadFile(path)
			if err != nil {
				return usagef("--config: %s", err)
			}
			doc = b
		}
		c, err := config.Load(doc, os.Environ())
		if err != nil {
			return usagef("%s", err)
		}
		out, err := c.Redacted()
		if err != nil {
			return err
		}
		_, err = stdout.Write(out)
		return err
	}
	return usagef("unknown subcommand %q: want check or print", args[0])
}
