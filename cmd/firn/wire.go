package main

import (
	"crypto/tls"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/firn-id/firn/internal/backend"
	"github.com/firn-id/firn/internal/config"
	"github.com/firn-id/firn/nodeid"
	"github.com/firn-id/firn/segment"
	"github.com/firn-id/firn/snowflake"
)

// The composition root of firn serve: configuration in, the options the
// service runs with out. Stores come from the backend table
// (internal/backend); serve.go wires stores, lease, generator, allocator and
// server together.

// parseServe reads the configuration: the defaults, the file of
// --config, the FIRN_… environment, then the flags, bound onto one typed
// config.Config and validated once (config.Validate). firn config check
// and print run exactly this, so they refuse what serve refuses.
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
		return o, usagef("unexpected argument %q; run 'firn help serve'", rest[0])
	}
	if err := cfg.Validate(backend.Kinds()); err != nil {
		return o, usagef("%s", err)
	}
	return serveOptionsOf(cfg)
}

// serveOptionsOf turns a valid configuration into what serve runs with,
// reading the layout and the files it names.
func serveOptionsOf(cfg *config.Config) (o serveOptions, err error) {
	o.cfg = cfg
	o.addr, o.grpcAddr, o.maxBatch, o.floor = cfg.HTTP.Listen, cfg.GRPC.Listen, cfg.HTTP.MaxBatch, cfg.Snowflake.Floor
	o.snowflake = cfg.Snowflake.Enabled
	o.logLevel, o.logFormat = cfg.Log.Level, cfg.Log.Format
	r, sg := cfg.Registry, cfg.Segments
	o.stores = storeOf(cfg)
	o.stores.Tokens = sg.CheckTokens
	o.anonymous = cfg.Auth.Anonymous
	if o.auth, err = cfg.Auth.New(); err != nil { // config.Validate ran the same rules
		return o, usagef("%s", err)
	}
	// Off loopback the node must come from a shared registry (etcd, SQL)
	// or be the operator's: a local store picking "the lowest free node"
	// gives node 0 on every machine, explicit or not.
	explicitStore := r.Store != "local" || r.Node != "" || !cfg.Snowflake.Enabled
	if err := checkListen("http", o.addr, explicitStore, o.auth); err != nil {
		return o, err
	}
	// Segments from the local directory serve one machine: off loopback,
	// machines behind one address would each count the same IDs.
	if r.Store == "local" && len(sg.Stores) == 0 && sg.Store == "" && !sg.Local &&
		(!loopback(o.addr) || (o.grpcAddr != "off" && !loopback(o.grpcAddr))) {
		o.segmentsOff = "segments are off: this server listens off loopback on the local data directory, " +
			"whose counters serve one machine (machines behind one address would each hand out the same IDs); " +
			"name shared segment databases (segments.stores) or a shared store (--store etcd|postgres|mysql), " +
			"or --local-segments if this machine alone serves its tags"
	}
	if o.grpcAddr != "off" {
		if err := checkListen("grpc", o.grpcAddr, explicitStore, o.auth); err != nil {
			return o, err
		}
	}
	// Files are read now, before any store is opened or node claimed: a
	// missing key is bad input, not a server that fails after announcing
	// itself.
	if h := cfg.HTTP; h.TLSCert != "" {
		cert, err := tls.LoadX509KeyPair(h.TLSCert, h.TLSKey)
		if err != nil {
			return o, usagef("--tls-cert %s, --tls-key %s: %s", h.TLSCert, h.TLSKey, err)
		}
		o.tls = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	if o.layout, err = layoutOf(cfg.Layout); err != nil {
		return o, err
	}
	if err := checkGenerates(o.layout, time.Now()); err != nil {
		return o, err
	}
	if cfg.Snowflake.JavaScriptSafe && cfg.Snowflake.Enabled && !o.layout.JavaScriptSafe() {
		return o, usagef("snowflake.javascript_safe (--javascript-safe): the layout has %d bits, so its IDs reach past 2^53; use a layout of at most %d bits, such as --layout js53",
			o.layout.Bits(), snowflake.JavaScriptBits)
	}
	o.maxID = maxIDOf(cfg.Segments.JavaScriptSafe)
	if o.opaque, err = permutationOf(cfg.Opaque, o.layout); err != nil {
		return o, err
	}
	if o.tagOpaque, err = tagPermutations(cfg.Opaque, o.maxID); err != nil {
		return o, err
	}
	if o.gen, err = generatorOf(o.layout, cfg); err != nil {
		return o, err
	}
	o.lease = nodeid.Config{NodeBits: o.layout.NodeBits(), Layout: spaceID(o.layout, o.opaque), StartAhead: r.StartAhead, TTL: r.LeaseTTL}
	if o.lease.Reserved, err = reservedNodes(o.layout, r.ReservedNodes); err != nil {
		return o, err
	}
	o.lease.Node, err = nodeOf(o.layout, r)
	return o, err
}

// nodeOf is the node registry.node names for layout l: nil for the
// lowest free one in the store, a value for a static or derived node.
func nodeOf(l snowflake.Layout, r config.Registry) (*uint64, error) {
	var node uint64
	var err error
	switch {
	case r.Node == "":
		return nil, nil
	case r.Node == "derived":
		node, err = derivedNode(l, r.AcceptCollisionRisk)
	default:
		node, err = parseNode(l, r.Node)
	}
	if err != nil {
		return nil, err
	}
	return &node, nil
}

// generatorOf is the generator's configuration from the settings, for
// serve and firn next alike; the caller sets Node and Reservation once it
// holds a lease.
func generatorOf(l snowflake.Layout, cfg *config.Config) (snowflake.Config, error) {
	p, err := cfg.Snowflake.Policy()
	if err != nil {
		return snowflake.Config{}, usagef("%s", err)
	}
	return snowflake.Config{Layout: l, Exhausted: p, MaxBorrow: cfg.Snowflake.MaxBorrow, StartAhead: cfg.Registry.StartAhead}, nil
}

// exhaustedHelp is the help of snowflake.exhausted and max_borrow, its
// text starting at column col, as the command's other flags.
func exhaustedHelp(col int) string {
	rows := [][2]string{
		{"--exhausted P", "when a tick's sequence runs out: wait (default)"},
		{"", "for the next tick, or borrow the next ticks, at"},
		{"", "most --max-borrow ahead of the clock (IDs then"},
		{"", "carry later times)"},
		{"--max-borrow D", "how far ahead borrowing goes (default 1s, at"},
		{"", "most 10s)"},
	}
	var b strings.Builder
	for _, r := range rows {
		fmt.Fprintf(&b, "  %-*s%s\n", col-2, r[0], r[1])
	}
	return b.String()
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

// maxIDOf is the allocator's bound per tag: 2^53−1 for the tags listed
// (all with "*"), none for the others.
func maxIDOf(tags []string) func(string) int64 {
	if len(tags) == 0 {
		return nil
	}
	all, set := slices.Contains(tags, "*"), map[string]bool{}
	for _, t := range tags {
		set[t] = true
	}
	return func(tag string) int64 {
		if all || set[tag] {
			return segment.JavaScriptSafe
		}
		return 0
	}
}
