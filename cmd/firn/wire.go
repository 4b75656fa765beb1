package main

import (
	"flag"
	"os"
	"strings"

	"github.com/firn-id/firn/cmd/firn/internal/config"
)

// The composition root of firn serve: configuration in, the options the
// service runs with out. Stores come from the backend table
// (cmd/firn/internal/backend); serve.go wires stores, lease, generator, allocator and
// server together.

// parseServe reads the configuration: the defaults, the file of
// --config, the FIRN_… environment, then the flags, bound onto one typed
// config.Config and validated once (config.Validate). firn config print
// runs exactly this; firn serve and firn config check run it through
// checkServe.
func parseServe(args []string) (o serveOptions, err error) {
	cfg, err := loadConfig(args)
	if err != nil {
		return o, err
	}
	fs := serveFlagSet(cfg)
	rest, err := parseFlags(fs, args)
	if err != nil {
		return o, err
	}
	if len(rest) > 0 {
		return o, extraArg("serve", rest[0])
	}
	if err := cfg.Validate(); err != nil {
		return o, usagef("%s", err)
	}
	return serveOptionsOf(cfg)
}

// checkServe reads firn serve's command line and settings and refuses,
// without I/O, every one it would refuse before opening a store: parseServe,
// then the stores' own rules. firn config check runs it, and firn serve
// runs it before it binds a port, so a bad setting is reported as itself
// whatever holds the port.
func checkServe(args []string) (serveOptions, error) {
	o, err := parseServe(args)
	if err != nil {
		return o, err
	}
	// backend.ErrConfig: exit 2.
	return o, o.stores.Check()
}

// serveOptionsOf turns a valid configuration into what serve runs with.
func serveOptionsOf(cfg *config.Config) (o serveOptions, err error) {
	o.cfg, o.stores = cfg, storeOf(cfg)
	o.stores.Tokens = cfg.Segments.CheckTokens
	if o.Serving, err = cfg.Serving(); err != nil {
		return o, err
	}
	o.stores.Site, o.stores.Space = o.Lease.Site, o.Lease.Layout
	if o.segmentsOff = cfg.LocalSegmentsOff(); o.segmentsOff == "" {
		o.segmentsOff = o.stores.SegmentsOff()
	}
	return o, nil
}

// loadFor is the configuration of a command other than serve: the file
// of --config and the FIRN_… environment, of which it keeps the settings
// it uses (config.For: the rest is ignored, and registry.node is never
// taken).
func loadFor(args []string, uses ...string) (*config.Config, error) {
	all, err := loadConfig(args)
	if err != nil {
		return nil, err
	}
	return all.For(uses...), nil
}

// bindConfig defines on fs the flags of the settings a command uses,
// bound to cfg, and --config.
func bindConfig(fs *flag.FlagSet, cfg *config.Config, uses ...string) {
	cfg.Register(fs, uses...)
	fs.String("config", "", "")
}

// serveFlagSet is the flag set of serve and config check and print:
// every setting's flag.
func serveFlagSet(cfg *config.Config) *flag.FlagSet {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	bindConfig(fs, cfg)
	return fs
}

// loadConfig reads the defaults, the file named by --config, if any, and
// the FIRN_… environment.
func loadConfig(args []string) (*config.Config, error) {
	var path string
	for i, a := range args {
		name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") || name != "config" {
			continue
		}
		switch {
		case hasVal:
			path = val
		case i+1 < len(args):
			path = args[i+1]
		default:
			return nil, usagef("--config needs a file")
		}
	}
	var doc []byte
	if path != "" {
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, usagef("--config: %s", err)
		}
		doc = b
	}
	c, err := config.LoadFile(path, doc, os.Environ())
	if err != nil {
		return nil, usagef("%s", err)
	}
	return c, nil
}
