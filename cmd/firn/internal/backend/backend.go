// Package backend opens the node and segment stores a configuration
// names, for firn's commands: it maps the configuration into the
// settings of the store table (package store), whose rows own each
// kind's rules and dialing, and adds what is not one kind's — a segment
// table in a database of its own or in a set of databases, the token
// reader, retrying a store that does not answer, and the discovery file
// of a server on the local store. It names no kind: it asks the table.
// Bad settings match ErrConfig; a store that does not answer is an
// *UnreachableError.
package backend

import (
	"context"
	"errors"
	"log/slog"

	"github.com/firn-id/firn/cmd/firn/internal/config"
	"github.com/firn-id/firn/localstore"
	"github.com/firn-id/firn/nodeid"
	"github.com/firn-id/firn/segment"
	"github.com/firn-id/firn/sqlstore"
	"github.com/firn-id/firn/store"
	"github.com/firn-id/firn/zkstore"
)

// Names lists the store kinds, for messages: "local, etcd, postgres or
// mysql".
func Names() string { return store.Names(nil) }

// Help is one line per store kind for --store's help, each after indent.
func Help(indent string) string { return store.Help(indent) }

// Reserving lists the kinds whose node store keeps a reservation of its
// own (nodeid.Reserver).
func Reserving() string { return store.Names(func(k store.Kind) bool { return k.Reserves }) }

// CheckReserves refuses, without I/O, a registry whose store keeps no
// reservation of its own: a takeover that reserved nodes in
// configuration only would see a firn started without it take one.
func (o Options) CheckReserves() error {
	if k, ok := o.Kind(); ok && k.Reserves {
		return nil
	}
	return configf("registry.store", "%s keeps no reservation of its own: the reserved node IDs would live in configuration only, and a firn "+
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
	// Site is the process's site (the zero Site: none), and Space the ID
	// space it presents to its registry: a site's segment stores issue
	// the residue classes its registry's site record gives them.
	Site  nodeid.Site
	Space nodeid.LayoutID
}

// Settings are the registry's settings as the store table reads them.
func (o Options) Settings() store.Settings {
	s := config.StoreSettings(o.Registry, o.ZooKeeper, o.Segments)
	s.ZooKeeper.Digest, s.MustExist, s.StateHome, s.Home, s.Log = o.ZooKeeperDigest, o.MustExist, o.StateHome, o.Home, o.Log
	return s
}

// Kind is the registry's row of the store table; false when no row has
// its name.
func (o Options) Kind() (store.Kind, bool) { return store.Lookup(o.Registry.Store) }

// Describe names the store for messages: the local store by its data
// directory's path, where its state lives.
func (o Options) Describe() string { return store.Describe(o.Settings()) }

// CheckDataDir applies store.CheckDataDir to the registry's data
// directory.
func (o Options) CheckDataDir() error {
	if err := store.CheckDataDir(o.Registry.Store, o.Registry.DataDir); err != nil {
		return configf("registry.data_dir", "data directory (--data-dir, FIRN_REGISTRY_DATA_DIR or registry.data_dir) %s", err)
	}
	return nil
}

// DataDir is the registry's data directory — its own, or the user's
// default — when its store keeps one; ok is false for a store that keeps
// none.
func (o Options) DataDir() (dir string, ok bool) {
	if k, found := o.Kind(); !found || !k.DataDir {
		return "", false
	}
	dir, err := o.LocalDir()
	return dir, err == nil
}

// LocalDir is the local store's data directory: the registry's, or the
// user's default.
func (o Options) LocalDir() (string, error) { return localstore.DirOf(o.Settings()) }

// Schema is what the registry's store creates, from the settings alone,
// and what it is ("its znodes"); ok is false for a store without such a
// schema (a SQL database, whose tables firn schema prints by dialect).
func (o Options) Schema() (schema, of string, ok bool, err error) {
	k, found := o.Kind()
	if !found || k.Schema == nil {
		return "", "", false, nil
	}
	schema, err = k.Schema(o.Settings())
	return schema, k.SchemaOf, true, err
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
	// Off is why a site serves no segments though they are configured
	// (its site record says so); "" otherwise.
	Off   string
	close func() error
}

// Close closes every connection Open made.
func (s *Stores) Close() error { return s.close() }

// Check refuses, without I/O, every setting Open would refuse before it
// dials: the registry's (the store table's rules: an unknown store, a
// data directory that is not one, a DSN its driver cannot read, an etcd
// endpoint or namespace that is not one, a dial timeout out of range, a
// table name that needs quoting), and the same of the segment stores.
// firn config check runs it; Open, OpenNodes and OpenSegments run the
// same rules first.
func (o Options) Check() error {
	if err := store.Check(o.Settings()); err != nil {
		return err
	}
	if err := o.checkSiteSegments(); err != nil {
		return err
	}
	switch {
	case o.Segments.Store != "":
		return o.checkOwnSegments()
	case len(o.Segments.Stores) > 0:
		return o.checkSet()
	}
	return nil
}

// OpenNodes returns the registry's node store and a function that closes
// it.
func (o Options) OpenNodes(ctx context.Context) (nodeid.Store, func() error, error) {
	c, err := store.Open(ctx, o.Settings())
	if err != nil {
		return nil, nil, err
	}
	return c.Nodes, c.Close, nil
}

// OpenSegments returns the segment store and a function that closes it:
// the set of Segments.Stores, the database of its own of Segments.Store,
// or the registry's. A
// registry that can record a site is opened too, and read: a site's
// segments issue the classes its record gives them, and a namespace of
// a site refuses a process without the site setting.
func (o Options) OpenSegments(ctx context.Context) (segment.Store, func() error, error) {
	switch off := o.SegmentsOff(); {
	case off != "" && !o.Site.IsZero():
		return nil, nil, configf("segments.store", "%s", off)
	case off != "" && o.Segments.Store == "":
		return nil, nil, configf("segments.store", "%s", o.noSegments())
	}
	if k, ok := o.Kind(); ok && k.Sites || len(o.Segments.Stores) > 0 {
		st, err := o.Open(ctx)
		switch {
		case err != nil:
			return nil, nil, err
		case st.Segments == nil:
			return nil, nil, errors.Join(configf("segments.store", "%s", st.Off), st.Close())
		}
		return st.Segments, st.Close, nil
	}
	var t tokens
	if o.Segments.Store != "" {
		return o.ownSegments(ctx, &t)
	}
	c, err := store.Open(ctx, o.Settings())
	if err != nil {
		return nil, nil, err
	}
	segs, err := c.Segments()
	if err != nil {
		return nil, nil, errors.Join(err, c.Close())
	}
	return segs, c.Close, nil
}

// Open opens the node store and the segment store: the registry's own
// segment store over the same connection, the database of its own of
// Segments.Store, or the set of Segments.Stores.
func (o Options) Open(ctx context.Context) (*Stores, error) {
	if err := o.checkSiteSegments(); err != nil {
		return nil, err
	}
	t := tokens{want: o.Tokens}
	s := o.Settings()
	s.Segments.Tokens = t.want
	c, err := store.Open(ctx, s)
	if err != nil {
		return nil, err
	}
	if o.SegmentsOff() != "" { // SegmentsOff says why
		return &Stores{Nodes: c.Nodes, close: c.Close}, nil
	}
	list, closeSegs, err := o.segmentStores(ctx, c, &t)
	if err != nil {
		return nil, errors.Join(err, c.Close())
	}
	st := &Stores{Nodes: c.Nodes, Tokens: t.reader, close: closeAll(c.Close, closeSegs)}
	switch {
	case !o.Site.IsZero():
		st.Segments, st.Off, err = o.siteSegments(ctx, c.Nodes, list)
	default:
		err = o.checkNoSite(ctx, c.Nodes)
		switch {
		case err != nil:
		case len(list) > 1:
			st.Segments, err = segment.NewMulti(list...)
		default:
			st.Segments = list[0]
		}
	}
	if err != nil {
		return nil, errors.Join(err, st.Close())
	}
	return st, nil
}

// segmentStores opens the segment stores of the configuration, in its
// order: the set of Segments.Stores, the database of its own of
// Segments.Store, or the registry's over c.
func (o Options) segmentStores(ctx context.Context, c *store.Conn, t *tokens) ([]segment.Store, func() error, error) {
	switch {
	case len(o.Segments.Stores) > 0:
		return o.openSet(ctx, t)
	case o.Segments.Store != "":
		s, closer, err := o.ownSegments(ctx, t)
		if err != nil {
			return nil, nil, err
		}
		return []segment.Store{s}, closer, nil
	}
	segs, err := c.Segments()
	if err != nil {
		return nil, nil, err
	}
	t.take(c)
	return []segment.Store{segs}, nil, nil
}

// tokens is Tinyid's token reader, asked for (want) and taken from the
// first database of Tinyid's segment table opened.
type tokens struct {
	want   bool
	reader *sqlstore.TinyidTokens
}

// ask reports whether the next segment table opened should read tokens.
func (t *tokens) ask() bool { return t.want && t.reader == nil }

// take keeps the token reader c's segment table opened, if any.
func (t *tokens) take(c *store.Conn) {
	if r, ok := c.Tokens.(*sqlstore.TinyidTokens); ok && t.reader == nil {
		t.reader = r
	}
}

// OpenTree opens a session to another system's ZooKeeper ensemble,
// servers (host:port, comma-separated, as flag names them), for its
// znodes under root: Meituan Leaf's /snowflake/{leaf.name}, within the
// registry's dial timeout (zkstore.DialTree).
func (o Options) OpenTree(ctx context.Context, flag, servers, root string) (*zkstore.Tree, error) {
	return zkstore.DialTree(ctx, o.Settings(), flag, servers, root)
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
