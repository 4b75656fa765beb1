// Package backend opens the node and segment stores a configuration
// names: the one table of backends (local, etcd, postgres, mysql,
// zookeeper), the
// rules that refuse a store that would not be the one the operator
// meant, and the dialing of etcd and SQL databases within a deadline,
// with errors that name the endpoint and never a password. Bad settings
// match ErrConfig; a store that does not answer is an *UnreachableError.
// The binary registers the SQL drivers; this package reads DSNs with the
// drivers' own parsers, so the address it names is the one dialed.
package backend

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/firn-id/firn/internal/config"
	"github.com/firn-id/firn/localstore"
	"github.com/firn-id/firn/nodeid"
	"github.com/firn-id/firn/segment"
	"github.com/firn-id/firn/sqlstore"
)

// A backend is one kind of store that can hold node IDs with their HWMs
// and segment counters. The table below is the one list of them: flags,
// configuration checks, help and messages read it. Adding a backend is
// its own package (a nodeid.Store and a segment.Store) and one line here
// with the function that opens it.
type backend struct {
	name    string
	summary string // for --store's help
	// check refuses, without I/O, what open would refuse before it
	// dials; open runs only after it passed.
	check func(op *opener) error
	open  func(ctx context.Context, op *opener) (*opened, error)
	// reserves says its node store keeps a reservation of its own
	// (nodeid.Reserver), which a takeover records its reserved nodes in.
	reserves bool
}

// opened is one open connection to a store: its node store, its segment
// store (over the same connection, sharing the local directory's lock or
// the etcd client; nil for a store that holds none), and what closes it.
type opened struct {
	nodes    nodeid.Store
	segments func() (segment.Store, error)
	close    func() error
}

var backends = []backend{
	{"local", "the data directory (the default), one machine", checkLocal, openLocal, false},
	{"etcd", "node IDs on etcd leases, a key prefix per namespace", checkEtcd, openEtcd, false},
	{"postgres", "PostgreSQL: firn_nodes, and Leaf's or Tinyid's segment table", checkSQL(sqlstore.Postgres), openSQL(sqlstore.Postgres), false},
	{"mysql", "MySQL or MariaDB, as postgres", checkSQL(sqlstore.MySQL), openSQL(sqlstore.MySQL), false},
	{"zookeeper", "node IDs on ZooKeeper sessions, a path per namespace; no segments", checkZooKeeper, openZooKeeper, true},
}

// Names lists the backends, for messages: "local, etcd, postgres or mysql".
func Names() string {
	names := Kinds()
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// Help is one line per backend for --store's help, each after indent.
func Help(indent string) string {
	var b strings.Builder
	for _, be := range backends {
		b.WriteString(indent + be.name + ": " + be.summary + "\n")
	}
	return b.String()
}

// Kinds lists the backends' names, for config.Config.Validate.
func Kinds() []string {
	kinds := make([]string, len(backends))
	for i, b := range backends {
		kinds[i] = b.name
	}
	return kinds
}

// Reserving lists the backends whose node store keeps a reservation of
// its own (nodeid.Reserver): "zookeeper".
func Reserving() string {
	var names []string
	for _, b := range backends {
		if b.reserves {
			names = append(names, b.name)
		}
	}
	return strings.Join(names, ", ")
}

// CheckReserves refuses, without I/O, a registry whose store keeps no
// reservation of its own: a takeover that reserved nodes in
// configuration only would see a firn started without it take one.
func (o Options) CheckReserves() error {
	i := slices.IndexFunc(backends, func(b backend) bool { return b.name == o.Registry.Store })
	if i >= 0 && backends[i].reserves {
		return nil
	}
	return configf("%s keeps no reservation of its own: the reserved node IDs would live in configuration only, and a firn "+
		"started without it would take one; use --store %s", o.Describe(), Reserving())
}

// Options name the stores to open: the registry and segments sections
// of a configuration, and what the caller adds.
type Options struct {
	Registry  config.Registry
	Segments  config.Segments
	ZooKeeper config.ZooKeeper
	// ZooKeeperDigest is the value of config.DigestVar, ZooKeeper's
	// digest credentials: the caller reads the environment.
	ZooKeeperDigest string
	// MustExist refuses a local data directory that does not exist,
	// rather than create it.
	MustExist bool
	// Tokens has Open read Tinyid's token table (Segments.TokenTable) in
	// the (first) database of Tinyid's segment table.
	Tokens bool
	// StateHome and Home are the user's $XDG_STATE_HOME and home
	// directory, which choose the local store's default directory: the
	// caller reads the environment.
	StateHome, Home string
	// Log receives the token reader's failed refreshes.
	Log *slog.Logger
}

// Describe names the store for messages: the local store by its data
// directory's path, where its state lives.
func (o Options) Describe() string {
	ns := o.Registry.Namespace
	switch {
	case o.Registry.Store == "local":
		if dir, err := o.LocalDir(); err == nil {
			return "local data directory " + dir
		}
		return "local data directory"
	case ns == "" && o.Registry.Store == "etcd":
		ns = "/firn/default/"
	case ns == "" && o.Registry.Store == "zookeeper":
		ns = DefaultZooKeeperNamespace
	case ns == "":
		ns = "default"
	}
	return fmt.Sprintf("%s namespace %q", o.Registry.Store, ns)
}

// CheckDataDir applies config.CheckDataDir to the registry's data
// directory.
func (o Options) CheckDataDir() error {
	if err := config.CheckDataDir(o.Registry.Store, o.Registry.DataDir); err != nil {
		return configf("data directory (--data-dir, FIRN_REGISTRY_DATA_DIR or registry.data_dir) %s", err)
	}
	return nil
}

// LocalDir is the local store's data directory: the registry's, or the
// user's default.
func (o Options) LocalDir() (string, error) {
	if o.Registry.DataDir != "" {
		return o.Registry.DataDir, nil
	}
	return localstore.DefaultDir(o.StateHome, o.Home)
}

// Stores are the node store and the segment store Open opened.
type Stores struct {
	Nodes nodeid.Store
	// Segments is nil when the registry's store holds no segments and no
	// database of their own is named (Options.SegmentsOff says why).
	Segments segment.Store
	// Tokens reads Tinyid's token table when Options.Tokens asked for it
	// and the segment table is Tinyid's; nil otherwise. The caller
	// starts and closes it.
	Tokens *sqlstore.TinyidTokens
	close  func() error
}

// Close closes every connection Open made.
func (s *Stores) Close() error { return s.close() }

// opener is one open: the options and what it found on the way.
type opener struct {
	Options
	// readTokens is set by Open only, which hands the reader back to be
	// started and closed.
	readTokens bool
	tokens     *sqlstore.TinyidTokens
}

// Check refuses, without I/O, every setting Open would refuse before it
// dials: an unknown store, a data directory that is not one, a DSN its
// driver cannot read, an etcd endpoint or namespace that is not one, a
// dial timeout out of range, a table name that needs quoting, and the
// same of the segment stores. firn config check runs it; Open,
// OpenNodes and OpenSegments run the same rules first.
func (o Options) Check() error {
	op := &opener{Options: o}
	if _, err := op.checkBackend(); err != nil {
		return err
	}
	switch {
	case o.Segments.Store != "":
		return op.checkOwnSegments()
	case len(o.Segments.Stores) > 0:
		return op.checkSet()
	}
	return nil
}

// checkBackend refuses the registry's store as Check does, and returns
// its backend.
func (op *opener) checkBackend() (backend, error) {
	kind := op.Registry.Store
	i := slices.IndexFunc(backends, func(b backend) bool { return b.name == kind })
	if i < 0 {
		return backend{}, configf("--store %q: want %s", kind, Names())
	}
	if err := op.CheckDataDir(); err != nil {
		return backend{}, err
	}
	return backends[i], backends[i].check(op)
}

// openBackend opens the registry's store.
func (op *opener) openBackend(ctx context.Context) (*opened, error) {
	b, err := op.checkBackend()
	if err != nil {
		return nil, err
	}
	return b.open(ctx, op)
}

// OpenNodes returns the registry's node store and a function that closes
// it.
func (o Options) OpenNodes(ctx context.Context) (nodeid.Store, func() error, error) {
	op := &opener{Options: o}
	b, err := op.openBackend(ctx)
	if err != nil {
		return nil, nil, err
	}
	return b.nodes, b.close, nil
}

// OpenSegments returns the segment store and a function that closes it:
// the database of its own of Segments.Store, or the registry's.
func (o Options) OpenSegments(ctx context.Context) (segment.Store, func() error, error) {
	op := &opener{Options: o}
	if o.Segments.Store != "" {
		return op.ownSegments(ctx)
	}
	if off := o.SegmentsOff(); off != "" {
		return nil, nil, configf("%s", noSegments)
	}
	b, err := op.openBackend(ctx)
	if err != nil {
		return nil, nil, err
	}
	segs, err := b.segments()
	if err != nil {
		return nil, nil, errors.Join(err, b.close())
	}
	return segs, b.close, nil
}

// Open opens the node store and the segment store: the registry's own
// segment store over the same connection, the database of its own of
// Segments.Store, or the set of Segments.Stores.
func (o Options) Open(ctx context.Context) (*Stores, error) {
	op := &opener{Options: o, readTokens: o.Tokens}
	b, err := op.openBackend(ctx)
	if err != nil {
		return nil, err
	}
	if len(o.Segments.Stores) > 0 || o.Segments.Store != "" {
		open := op.openSet
		if o.Segments.Store != "" {
			open = op.ownSegments
		}
		segs, closeSegs, err := open(ctx)
		if err != nil {
			return nil, errors.Join(err, b.close())
		}
		return &Stores{Nodes: b.nodes, Segments: segs, Tokens: op.tokens, close: closeAll(b.close, closeSegs)}, nil
	}
	if b.segments == nil { // SegmentsOff says why
		return &Stores{Nodes: b.nodes, close: b.close}, nil
	}
	segs, err := b.segments()
	if err != nil {
		return nil, errors.Join(err, b.close())
	}
	return &Stores{Nodes: b.nodes, Segments: segs, Tokens: op.tokens, close: b.close}, nil
}

// closeAll closes what opened, in reverse order, joining the errors.
func closeAll(closers ...func() error) func() error {
	return func() error {
		var errs []error
		for i := len(closers) - 1; i >= 0; i-- {
			if closers[i] != nil {
				errs = append(errs, closers[i]())
			}
		}
		return errors.Join(errs...)
	}
}
