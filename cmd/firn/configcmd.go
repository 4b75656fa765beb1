package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/firn-id/firn/internal/config"
)

var configUsage = `Usage: firn config check [--config FILE] [serve flags]
       firn config print [--config FILE] [serve flags]

check validates what firn serve would run with — the file, the FIRN_…
environment and the flags — without opening a store or a port, and prints
a one-line summary. print validates the same and writes the effective
configuration as YAML: the file, then the environment, then the flags, with
the password of every DSN and every token's secret redacted; a setting
left empty (0, "") takes firn serve's default. docs/config.md lists the
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
		o, err := parseServe(args[1:])
		if err != nil {
			return err
		}
		c := o.cfg
		if err := applyFlags(c, args[1:]); err != nil {
			return err
		}
		out, err := c.Redacted(redact)
		if err != nil {
			return err
		}
		_, err = stdout.Write(out)
		return err
	}
	return usagef("unknown subcommand %q: want check or print", args[0])
}

// applyFlags sets in c what the command line's flags say.
func applyFlags(c *config.Config, args []string) error {
	fs := flag.NewFlagSet("config", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.String("config", "", "")
	for name, isBool := range config.Flags() {
		if isBool {
			fs.Bool(name, false, "")
		} else {
			fs.String(name, "", "")
		}
	}
	if err := fs.Parse(args); err != nil {
		return usagef("%s", err)
	}
	var err error
	fs.Visit(func(f *flag.Flag) {
		if f.Name != "config" && err == nil {
			err = c.SetFlag(f.Name, f.Value.String())
		}
	})
	if err != nil {
		return usagef("%s", err)
	}
	return nil
}
