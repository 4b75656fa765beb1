package main

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/firn-id/firn/cmd/firn/internal/backend"
	"github.com/firn-id/firn/snowflake"
)

var configUsage = `Usage: firn config check [--config FILE] [serve flags]
       firn config print [--config FILE] [serve flags]

check validates what firn serve would run with — the file, the FIRN_…
environment and the flags — without opening a store or a port (each DSN
and etcd endpoint is read as serve reads it, without dialing), and prints
a summary (the listen address, layout and store on one line, then opaque
mode, the JavaScript-safe bounds, the tokens and anonymous grants); it
refuses exactly what firn serve refuses before it opens anything.
print refuses only what cannot be read (the file, an unknown key, a
value of the wrong form), so that a setting check refuses can still be
looked at; it writes the effective configuration as YAML: every
setting, the defaults included, then the file, the environment and the
flags over them, with the password of every DSN and every token's secret
redacted. An empty registry.namespace is the store's default (etcd
/firn/default/, SQL default). docs/config.md lists the settings.
`

func runConfig(args []string, stdout io.Writer) error {
	if len(args) == 0 {
		return usagef("want a subcommand: check or print; run 'firn help config'")
	}
	switch {
	case isHelp(args[0]):
		return errHelp
	case args[0] == "check":
		o, err := checkServe(args[1:])
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(stdout, "config ok: http %s, layout %s, store %s\n%s", o.cfg.HTTP.Listen, o.Layout, o.cfg.Registry.Store, checkNotes(&o))
		return err
	case args[0] == "print":
		o, err := parseServe(args[1:])
		if err != nil {
			return err
		}
		out, err := o.cfg.Redacted(backend.Redact)
		if err != nil {
			return err
		}
		_, err = stdout.Write(out)
		return err
	}
	return usagef("unknown subcommand %q: want check or print", args[0])
}

// checkNotes are the lines under config check's summary for the settings
// that change what IDs look like or who may draw them: opaque IDs, the
// JavaScript-safe bounds, borrowing, the tokens and the anonymous grants.
func checkNotes(o *serveOptions) string {
	var b strings.Builder
	if o.Opaque != nil {
		fmt.Fprintf(&b, "  opaque: every snowflake ID is permuted (%s); the key is recorded by fingerprint only\n", o.Opaque.Fingerprint())
	}
	if tags := o.cfg.Opaque.Tags; slices.Contains(tags, "*") {
		b.WriteString("  opaque: the IDs of every tag are permuted, each under its own permutation, recorded with the tag when it is created\n")
	} else if len(tags) > 0 {
		fmt.Fprintf(&b, "  opaque: the IDs of tags %s are permuted, each under its own permutation, recorded with the tag when it is created\n", strings.Join(tags, ","))
	}
	if o.cfg.Snowflake.JavaScriptSafe {
		b.WriteString("  javascript-safe: snowflake IDs stay below 2^53\n")
	}
	if o.Gen.Exhausted == snowflake.Borrow {
		fmt.Fprintf(&b, "  exhausted: borrow: when a tick's sequence runs out, the next ticks are taken, up to %s ahead of the clock (IDs then carry later times)\n", o.Gen.MaxBorrow)
	}
	if tags := o.cfg.Segments.JavaScriptSafe; slices.Contains(tags, "*") {
		b.WriteString("  javascript-safe: the IDs of every tag stay below 2^53\n")
	} else if len(tags) > 0 {
		fmt.Fprintf(&b, "  javascript-safe: the IDs of tags %s stay below 2^53\n", strings.Join(tags, ","))
	}
	tokens, anon := o.cfg.Auth.Tokens, o.cfg.Auth.Anonymous
	fmt.Fprintf(&b, "  auth: %d tokens", len(tokens))
	if len(anon) > 0 {
		fmt.Fprintf(&b, "; anonymous scopes %s", strings.Join(anon, ","))
	}
	if len(tokens) == 0 && len(anon) == 0 {
		b.WriteString(" (no token: anyone on loopback, and loopback only)")
	}
	b.WriteString("\n")
	return b.String()
}
