package main

import (
	"fmt"
	"io"
)

var configUsage = `Usage: firn config check [--config FILE] [serve flags]
       firn config print [--config FILE] [serve flags]

check validates what firn serve would run with — the file, the FIRN_…
environment and the flags — without opening a store or a port, and prints
a one-line summary; both refuse exactly what firn serve refuses before it
opens anything. print writes the effective configuration as YAML: every
setting, the defaults included, then the file, the environment and the
flags over them, with the password of every DSN and every token's secret
redacted. An empty registry.namespace is the store's default (etcd
/firn/default/, SQL default). docs/config.md lists the settings.
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
		out, err := o.cfg.Redacted(redact)
		if err != nil {
			return err
		}
		_, err = stdout.Write(out)
		return err
	}
	return usagef("unknown subcommand %q: want check or print", args[0])
}
