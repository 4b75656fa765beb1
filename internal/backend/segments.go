package backend

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/firn-id/firn/segment"
	"github.com/firn-id/firn/sqlstore"
)

// checkOwnSegments refuses, without I/O, what ownSegments would refuse
// before it dials.
func (op *opener) checkOwnSegments() error {
	sg := op.Segments
	switch {
	case sg.Store != "postgres" && sg.Store != "mysql":
		return configf("--segment-store %q: want postgres or mysql", sg.Store)
	case sg.DSN == "":
		return configf("--segment-store %s needs --segment-dsn", sg.Store)
	}
	if err := op.checkSegFormat(); err != nil {
		return err
	}
	return op.checkSQLSegments(sg.Store, sg.DSN)
}

// ownSegments opens the segment table in the database of its own named
// by Segments.Store and Segments.DSN.
func (op *opener) ownSegments(ctx context.Context) (segment.Store, func() error, error) {
	if err := op.checkOwnSegments(); err != nil {
		return nil, nil, err
	}
	return op.openSQLSegments(ctx, op.Segments.Store, op.Segments.DSN)
}

// checkSegFormat refuses an unknown segment table format.
func (op *opener) checkSegFormat() error {
	if f := op.Segments.Format; f != "leaf" && f != "tinyid" && f != "set" {
		return configf("--segments %q: want leaf, tinyid or set", f)
	}
	return nil
}

// sqlSegments is the segment table of the chosen format in db.
func (op *opener) sqlSegments(d sqlstore.Dialect, db *sql.DB) (segment.Store, error) {
	sg := op.Segments
	var s segment.Store
	var err error
	switch sg.Format {
	case "tinyid":
		s, err = sqlstore.NewTinyid(db, d, sqlstore.TinyidOptions{Table: sg.Table})
		if err == nil && op.readTokens && op.tokens == nil {
			op.tokens, err = sqlstore.NewTinyidTokens(db, d, sqlstore.TinyidTokenOptions{Table: sg.TokenTable, Timeout: op.Registry.DialTimeout, Log: op.Log})
		}
	case "set":
		s, err = sqlstore.NewSetStore(db, d, sqlstore.SetOptions{Table: sg.Table, Set: sg.Set})
	default:
		s, err = sqlstore.NewSegments(db, d, sqlstore.SegmentOptions{Table: sg.Table})
	}
	if err != nil {
		return nil, configf("--segment-table: %s", err)
	}
	return s, nil
}

// checkSQLSegments refuses, without I/O, what openSQLSegments would
// refuse before it dials: the DSN, and the segment table's own rules.
func (op *opener) checkSQLSegments(kind, dsn string) error {
	d, _ := sqlstore.ParseDialect(kind)
	if err := op.checkDB(kind, dsn); err != nil {
		return err
	}
	return op.checkSegTable(d)
}

// checkSegTable applies the segment table's rules: its constructors do
// no I/O, and given no database apply them alone. The token reader is
// left to the open that has a database.
func (op *opener) checkSegTable(d sqlstore.Dialect) error {
	check := opener{Options: op.Options}
	_, err := check.sqlSegments(d, nil)
	return err
}

// openSQLSegments opens the segment table of the chosen format in one
// database of a set.
func (op *opener) openSQLSegments(ctx context.Context, kind, dsn string) (segment.Store, func() error, error) {
	d, _ := sqlstore.ParseDialect(kind)
	db, err := op.OpenDB(ctx, kind, dsn)
	if err != nil {
		return nil, nil, err
	}
	s, err := op.sqlSegments(d, db)
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	return s, db.Close, nil
}

// checkSet refuses, without I/O, what openSet would refuse before it
// dials.
func (op *opener) checkSet() error {
	if f := op.Segments.Format; f != "tinyid" && f != "set" {
		return configf("--segments %q with segments.stores: want tinyid or set, whose rows record their residue class", f)
	}
	for i, st := range op.Segments.Stores {
		if err := op.checkSQLSegments(st.Store, st.DSN); err != nil {
			return fmt.Errorf("segments.stores[%d]: %w", i, err)
		}
	}
	return nil
}

// openSet opens the set of segment stores of the configuration
// (segments.stores), store i issuing remainder i.
func (op *opener) openSet(ctx context.Context) (segment.Store, func() error, error) {
	if err := op.checkSet(); err != nil {
		return nil, nil, err
	}
	var stores []segment.Store
	var closers []func() error
	closeAll := func() error {
		var errs []error
		for _, c := range closers {
			errs = append(errs, c())
		}
		return errors.Join(errs...)
	}
	for i, st := range op.Segments.Stores {
		s, closer, err := op.openSQLSegments(ctx, st.Store, st.DSN)
		if err != nil {
			return nil, nil, errors.Join(fmt.Errorf("segments.stores[%d]: %w", i, err), closeAll())
		}
		stores = append(stores, s)
		closers = append(closers, closer)
	}
	m, err := segment.NewMulti(stores...)
	if err != nil {
		return nil, nil, errors.Join(err, closeAll())
	}
	return m, closeAll, nil
}
