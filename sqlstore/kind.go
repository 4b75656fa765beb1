package sqlstore

import (
	"context"
	"database/sql"
	"errors"

	"github.com/firn-id/firn/internal/secret"
	"github.com/firn-id/firn/segment"
	"github.com/firn-id/firn/store"
)

// Driver is what a SQL database's row of the store table adds to this
// package's rules: the database/sql driver its package registered, and
// how that driver reads a DSN. The rows are sqlstore/postgres and
// sqlstore/mysql, each importing its driver, so a program links only
// the drivers of the stores it imports.
type Driver struct {
	// Name is the database/sql driver's name: "pgx".
	Name string
	// Endpoint reads dsn as the driver does and returns the address it
	// dials, for messages; an error says why the driver cannot read it,
	// or what in it firn refuses, without quoting it.
	Endpoint func(dsn string) (string, error)
	// Redact is the row's store.Kind.Redact.
	Redact func(dsn string) (string, []string, bool)
	// Answered is the row's store.Kind.Answered.
	Answered func(error) bool
	// ServerError, for a driver whose server errors have no SQLState
	// method (go-sql-driver/mysql's), finds one in err for Classify and
	// RefusedConnection.
	ServerError func(err error) (ServerError, bool)
}

// Kind completes k, a SQL database's row, with this package's rules for
// dialect d and the driver drv: the node table, the segment table of
// Settings.Segments over the same connection, and a dial within the
// settings' timeout.
func Kind(d Dialect, drv Driver, k store.Kind) store.Kind {
	k.Segments, k.Database, k.Sites, k.Ledgers, k.Requires = true, true, true, true, []string{"dsn"}
	k.Redact, k.Answered = drv.Redact, drv.Answered
	if drv.ServerError != nil {
		readersMu.Lock()
		readers = append(readers, drv.ServerError)
		readersMu.Unlock()
	}
	k.Check = func(s store.Settings) error { return check(d, drv, s) }
	k.Open = func(ctx context.Context, s store.Settings) (*store.Conn, error) { return open(ctx, d, drv, s) }
	k.OpenDB = func(ctx context.Context, s store.Settings) (*sql.DB, error) { return OpenDB(ctx, drv, s) }
	return k
}

// check refuses settings open could not open: no DSN, or one its
// driver cannot read, a dial timeout out of range, and the node and
// segment tables' own rules.
func check(d Dialect, drv Driver, s store.Settings) error {
	if s.DSN == "" {
		return store.Fieldf(s.Field("dsn"), "%s %s needs %s", s.Flag("store"), s.Store, s.Flag("dsn"))
	}
	// An empty format asks for no segment table (an embedded process
	// takes node IDs alone); open's Segments then opens Leaf's.
	if f := s.Segments.Format; f != "" && f != "leaf" && f != "tinyid" && f != "set" {
		return store.Fieldf("segments.format", "--segments %q: want leaf, tinyid or set", f)
	}
	if err := s.CheckDialTimeout(); err != nil {
		return err
	}
	if _, err := endpoint(drv, s); err != nil {
		return err
	}
	// The tables' constructors do no I/O: given no database they apply
	// their rules alone. The token reader is left to the open that has a
	// database.
	if _, err := nodeStore(d, nil, s); err != nil {
		return err
	}
	if s.Segments.Format == "" {
		return nil
	}
	_, _, err := segmentStore(d, nil, s.Segments, nil)
	return err
}

// endpoint is the address the settings' DSN dials, or the field error of
// a DSN the driver cannot read, which never quotes its password.
func endpoint(drv Driver, s store.Settings) (string, error) {
	shown := store.Redact(s.Store, s.DSN) // also remembers the password for Scrub
	ep, err := drv.Endpoint(s.DSN)
	if err != nil {
		return "", store.Fieldf(s.Field("dsn"), "%s %s: %s", s.Flag("dsn"), shown, err)
	}
	return ep, nil
}

// nodeStore is the node table of the settings in db.
func nodeStore(d Dialect, db *sql.DB, s store.Settings) (*Store, error) {
	st, err := New(db, d, Options{Table: s.Table, Namespace: s.Namespace})
	if err != nil {
		return nil, store.Fieldf(s.Field("table"), "%s", err)
	}
	return st, nil
}

// segmentStore is the segment table of the chosen format in db, and
// Tinyid's token reader when asked for and the table is Tinyid's.
func segmentStore(d Dialect, db *sql.DB, sg store.Segments, s *store.Settings) (segment.Store, *TinyidTokens, error) {
	var st segment.Store
	var tokens *TinyidTokens
	var err error
	switch sg.Format {
	case "tinyid":
		st, err = NewTinyid(db, d, TinyidOptions{Table: sg.Table})
		if err == nil && sg.Tokens && s != nil {
			tokens, err = NewTinyidTokens(db, d, TinyidTokenOptions{Table: sg.TokenTable, Timeout: s.DialTimeout, Log: s.Log})
		}
	case "set":
		st, err = NewSetStore(db, d, SetOptions{Table: sg.Table, Set: sg.Set})
	default:
		st, err = NewSegments(db, d, SegmentOptions{Table: sg.Table})
	}
	if err != nil {
		return nil, nil, store.Fieldf("segments.table", "--segment-table: %s", err)
	}
	return st, tokens, nil
}

// open connects to the database: its node table, and the segment table
// of Settings.Segments over the same connection.
func open(ctx context.Context, d Dialect, drv Driver, s store.Settings) (*store.Conn, error) {
	db, err := OpenDB(ctx, drv, s)
	if err != nil {
		return nil, err
	}
	nodes, err := nodeStore(d, db, s)
	if err != nil {
		db.Close()
		return nil, err
	}
	c := &store.Conn{Nodes: nodes, Close: db.Close}
	c.Segments = func() (segment.Store, error) {
		st, tokens, err := segmentStore(d, db, s.Segments, &s)
		if tokens != nil {
			c.Tokens = tokens
		}
		return st, err
	}
	return c, nil
}

// OpenDB opens and pings the database the settings' DSN names: a
// malformed DSN is bad input, a database that does not answer within the
// dial timeout an outage, one refusing connections for want of a free
// one (TooManyConnections) is asked again within the dial timeout. For an
// embedded process (Settings.Embedded) the pool keeps no idle connection
// (Embed).
func OpenDB(ctx context.Context, drv Driver, s store.Settings) (*sql.DB, error) {
	if err := s.CheckDialTimeout(); err != nil {
		return nil, err
	}
	ep, err := endpoint(drv, s)
	if err != nil {
		return nil, err
	}
	db, err := sql.Open(drv.Name, s.DSN)
	if err != nil {
		return nil, store.Fieldf(s.Field("dsn"), "%s %s: %s", s.Flag("dsn"), store.Redact(s.Store, s.DSN), secret.Scrub(err.Error()))
	}
	if s.Embedded {
		Embed(db)
	}
	if err := ping(ctx, db, s, ep); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

// ping waits up to the dial timeout for the database to answer.
func ping(ctx context.Context, db *sql.DB, s store.Settings, endpoint string) error {
	ctx, cancel := context.WithTimeout(ctx, s.DialTimeout)
	defer cancel()
	if err := retryBusy(ctx, func() error { return db.PingContext(ctx) }); err != nil {
		if why, ok := RefusedConnection(err); ok {
			return store.Fieldf(s.Field("dsn"), "%s %s: %s", s.Store, endpoint, secret.Scrub(why))
		}
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			err = errors.Join(context.DeadlineExceeded, err)
		}
		return &store.UnreachableError{Store: s.Store, Endpoint: endpoint, Timeout: s.DialTimeout, Err: err}
	}
	return nil
}
