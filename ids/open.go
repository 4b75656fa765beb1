package ids

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"slices"

	"github.com/firn-id/firn/localstore"
	"github.com/firn-id/firn/nodeid"
	"github.com/firn-id/firn/sqlstore"
	"github.com/firn-id/firn/store"
)

// Open returns a source on the store of kind ("postgres", "mysql",
// "etcd", "zookeeper", "local": a kind whose package the program
// imports) at target: a DSN or URL for a database, endpoints for etcd or
// ZooKeeper (comma-separated), the data directory, an absolute path, for
// the local store. The settings are checked at once (ErrConfig, never
// quoting a password); the connection is made, and the node taken, in
// the background, a store that does not answer or refuses connections
// retried with back-off, so that a fleet starting at once, or before its
// database, waits rather than fails. Close closes the connection.
func Open(ctx context.Context, kind, target string, o Options) (*Source, error) {
	k, ok := store.Lookup(kind)
	if !ok {
		return nil, fmt.Errorf("%w: store %q is not registered: import the package that registers it (see the package documentation); registered: %s",
			ErrConfig, kind, cmp.Or(store.Names(nil), "none"))
	}
	log := cmp.Or(o.Log, slog.Default())
	s := store.Settings{Store: kind, Namespace: o.Namespace, DialTimeout: cmp.Or(o.DialTimeout, store.DefaultDialTimeout), Log: log, Embedded: true}
	switch {
	case target == "":
		return nil, fmt.Errorf("%w: no target for store %s: give its %s", ErrConfig, kind, targetOf(k))
	case k.DataDir:
		if o.Namespace != "" {
			return nil, fmt.Errorf("%w: the %s store's namespace is its data directory: leave Options.Namespace empty", ErrConfig, kind)
		}
		s.DataDir = target
		s.StateHome, s.Home = localstore.UserDirs()
	case o.Namespace == "":
		return nil, fmt.Errorf("%w: no namespace: name the ID space in %s (Options.Namespace)", ErrConfig, k.Title)
	case slices.Contains(k.Requires, "dsn"):
		s.DSN = target
	case slices.Contains(k.Requires, "endpoints"):
		s.Endpoints = []string{target}
	default:
		return nil, fmt.Errorf("%w: store %s takes no target", ErrConfig, kind)
	}
	if err := store.Check(s); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	open := func(ctx context.Context) (nodeid.Store, func() error, error) {
		c, err := store.Open(ctx, s)
		var le *localstore.LockedError
		if errors.As(err, &le) {
			// The store's own words are firn's commands'.
			return nil, nil, fmt.Errorf("data directory %s is held by another process or Source (process %s): each holds a directory of its own: %w",
				le.Dir, cmp.Or(le.PID, "unknown"), localstore.ErrLocked)
		}
		if err != nil {
			return nil, nil, err
		}
		return c.Nodes, c.Close, nil
	}
	return start(open, store.Describe(s), o)
}

// targetOf says what Open's target is for k.
func targetOf(k store.Kind) string {
	switch {
	case k.DataDir:
		return "data directory, an absolute path"
	case slices.Contains(k.Requires, "dsn"):
		return "DSN"
	}
	return "endpoints, host:port"
}

// FromDB returns a source on the node table (sqlstore.DefaultNodeTable)
// of db, a database the application opened with a driver for dialect; the
// caller closes db after Close. The table is created at first use if
// missing. Every write of a lease must be durable when the database
// confirms it: a session that sets PostgreSQL's synchronous_commit to off
// (which Open refuses in a DSN) can lose a confirmed HWM in a crash.
//
// The source uses one connection of db at a time, for one short
// statement or transaction per renewal (every second by default) and per
// claim. A *sql.DB keeps idle connections open between uses (two by
// default), so a fleet of N processes holds N to 2N connections of the
// database, and one past its limit (PostgreSQL's max_connections: 100 by
// default) cannot start. A db that serves firn alone: call
// sqlstore.Embed(db), the rule Open applies (no idle connection, at most
// two open). A db the application shares with firn: keep N ×
// db.SetMaxIdleConns(k), plus what the application's own peaks open,
// within the database's limit, or put a pooler (PgBouncer, ProxySQL) in
// front of it. A refused connection ("too many connections") is retried
// within the renewal's deadline; docs/performance.md ("Fleets") has the
// figures. While the application holds every connection of a shared db,
// renewals wait for one and fail ("all N connections of the pool in
// use"): issuing stops at the HWM, and a lease not renewed for its TTL
// is lost and taken again once a connection comes free.
func FromDB(db *sql.DB, dialect sqlstore.Dialect, o Options) (*Source, error) {
	if db == nil {
		return nil, fmt.Errorf("%w: no database", ErrConfig)
	}
	if o.Namespace == "" {
		return nil, fmt.Errorf("%w: no namespace: name the ID space in the node table (Options.Namespace)", ErrConfig)
	}
	st, err := sqlstore.New(db, dialect, sqlstore.Options{Namespace: o.Namespace})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	return start(given(st), fmt.Sprintf("%s namespace %q", dialect, o.Namespace), o)
}

// New returns a source on nodes, a node store the caller built over a
// client it has (etcdstore.New over its etcd client, say); the caller
// closes that client after Close. The namespace is the store's;
// Options.Namespace only names it in messages.
func New(nodes nodeid.Store, o Options) (*Source, error) {
	if nodes == nil {
		return nil, fmt.Errorf("%w: no node store", ErrConfig)
	}
	return start(given(nodes), cmp.Or(o.Namespace, "the node store"), o)
}

// given opens a store the caller built: nothing to open or close.
func given(nodes nodeid.Store) opener {
	return func(context.Context) (nodeid.Store, func() error, error) { return nodes, nil, nil }
}
