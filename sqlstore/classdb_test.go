package sqlstore_test

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/firn-id/firn/internal/faultproxy"
	"github.com/firn-id/firn/nodeid"
	"github.com/firn-id/firn/nodeid/nodeidtest"
	"github.com/firn-id/firn/segment"
	"github.com/firn-id/firn/sqlstore"
)

// The stores below are opened as a library caller opens them: options
// with no classifier of any kind, so what they report is sqlstore's own
// reading of its drivers' errors, the same firn serve gets.

func randomName(prefix string) string {
	b := make([]byte, 6)
	rand.Read(b)
	return prefix + hex.EncodeToString(b)
}

// account is a database (MySQL) or schema (PostgreSQL) of the test's own,
// with a user that may log in and use it but create nothing in it.
type account struct {
	admin   *sql.DB // the test's own superuser, in the account's database or schema
	userDSN string
	user    string // as GRANT names it
}

func newAccount(t *testing.T, b backend, dsn string) *account {
	t.Helper()
	name := randomName("firn_cls_")
	root := openDB(t, b, dsn)
	run := func(stmts ...string) {
		t.Helper()
		for _, s := range stmts {
			if _, err := root.Exec(s); err != nil {
				t.Fatalf("%s: %v", s, err)
			}
		}
	}
	a := &account{}
	if b.dialect == sqlstore.MySQL {
		cfg, err := mysql.ParseDSN(dsn)
		if err != nil {
			t.Fatal(err)
		}
		run("CREATE DATABASE "+name, "CREATE USER '"+name+"'@'%'")
		t.Cleanup(func() {
			root.Exec("DROP DATABASE IF EXISTS " + name)
			root.Exec("DROP USER IF EXISTS '" + name + "'@'%'")
		})
		cfg.DBName = name
		a.admin = openDB(t, b, cfg.FormatDSN())
		cfg.User, cfg.Passwd = name, ""
		a.userDSN, a.user = cfg.FormatDSN(), "'"+name+"'@'%'"
		return a
	}
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	run("CREATE SCHEMA "+name, "CREATE ROLE "+name+" LOGIN", "GRANT USAGE ON SCHEMA "+name+" TO "+name)
	t.Cleanup(func() {
		root.Exec("DROP SCHEMA IF EXISTS " + name + " CASCADE")
		root.Exec("DROP OWNED BY " + name)
		root.Exec("DROP ROLE IF EXISTS " + name)
	})
	q := u.Query()
	q.Set("search_path", name)
	u.RawQuery = q.Encode()
	a.admin = openDB(t, b, u.String())
	u.User = url.User(name)
	a.userDSN, a.user = u.String(), name
	return a
}

// withParam adds a session setting to a DSN: a URL parameter for pgx,
// a system variable for the MySQL driver.
func withParam(t *testing.T, b backend, dsn, name, value string) string {
	t.Helper()
	if b.dialect == sqlstore.MySQL {
		cfg, err := mysql.ParseDSN(dsn)
		if err != nil {
			t.Fatal(err)
		}
		if cfg.Params == nil {
			cfg.Params = map[string]string{}
		}
		cfg.Params[name] = value
		return cfg.FormatDSN()
	}
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set(name, value)
	u.RawQuery = q.Encode()
	return u.String()
}

// notInputNorPrivilege fails the test if err reads as bad input or a
// refused privilege: an outage must read as neither.
func notInputNorPrivilege(t *testing.T, what string, err error) {
	t.Helper()
	if errors.Is(err, segment.ErrInvalid) || errors.Is(err, sqlstore.ErrDenied) {
		t.Errorf("%s: %v reads as bad input or a refused privilege; want an outage", what, err)
	}
}

// TestLibraryStoreMissingTable: a store told not to create its table
// reports a table that does not exist as MissingTable, for every kind of
// store. It runs as the owner of its database or schema: MySQL answers a
// user with no privilege there 1044 (access denied) rather than say
// whether a table exists.
func TestLibraryStoreMissingTable(t *testing.T) {
	forEach(t, func(t *testing.T, b backend, dsn string) {
		db := newAccount(t, b, dsn).admin
		ctx := context.Background()
		table := randomName("absent_")
		leaf, err := sqlstore.NewSegments(db, b.dialect, sqlstore.SegmentOptions{Table: table, NoCreate: true})
		if err != nil {
			t.Fatal(err)
		}
		tiny, err := sqlstore.NewTinyid(db, b.dialect, sqlstore.TinyidOptions{Table: table, NoCreate: true})
		if err != nil {
			t.Fatal(err)
		}
		set, err := sqlstore.NewSetStore(db, b.dialect, sqlstore.SetOptions{Table: table, NoCreate: true})
		if err != nil {
			t.Fatal(err)
		}
		for name, s := range map[string]segment.Store{"leaf": leaf, "tinyid": tiny, "set": set} {
			_, err := s.Tags(ctx)
			if got := sqlstore.Classify(err); got != sqlstore.MissingTable {
				t.Errorf("%s: Tags on a table that does not exist: %v, classified %v; want %v", name, err, got, sqlstore.MissingTable)
			}
		}
		nodes, err := sqlstore.New(db, b.dialect, sqlstore.Options{Table: table, NoCreate: true})
		if err != nil {
			t.Fatal(err)
		}
		_, err = nodes.Claim(ctx, nodeid.ClaimRequest{AnyNode: true, Pool: 4, Layout: nodeidtest.Layout, TTL: time.Minute})
		if got := sqlstore.Classify(err); got != sqlstore.MissingTable {
			t.Errorf("nodes: Claim on a table that does not exist: %v, classified %v; want %v", err, got, sqlstore.MissingTable)
		}
	})
}

// TestLibraryStoreLockedTableIsAnOutage: a table that exists but cannot
// be read in time — locked by a migration — on an account that may not
// CREATE is an outage: the first use returns the database's own error
// (PostgreSQL's 55P03 lock_not_available, MySQL's 1205 lock wait
// timeout). Were it taken for a missing table, the store would try
// CREATE TABLE and report the refusal: a missing privilege for what
// waiting cures.
func TestLibraryStoreLockedTableIsAnOutage(t *testing.T) {
	forEach(t, func(t *testing.T, b backend, dsn string) {
		a := newAccount(t, b, dsn)
		ctx := context.Background()
		table := randomName("leaf_alloc_")
		ddl, _ := sqlstore.SegmentSchema(b.dialect, table)
		for _, s := range []string{strings.TrimSuffix(strings.TrimSpace(ddl), ";"), "GRANT SELECT, UPDATE ON " + table + " TO " + a.user} {
			if _, err := a.admin.Exec(s); err != nil {
				t.Fatalf("%s: %v", s, err)
			}
		}
		lock, err := a.admin.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer lock.Close()
		userDSN := withParam(t, b, a.userDSN, "lock_timeout", "200")
		if b.dialect == sqlstore.MySQL {
			userDSN = withParam(t, b, a.userDSN, "lock_wait_timeout", "1")
			if _, err := lock.ExecContext(ctx, "LOCK TABLES "+table+" WRITE"); err != nil {
				t.Fatal(err)
			}
			defer lock.ExecContext(ctx, "UNLOCK TABLES")
		} else {
			tx, err := lock.BeginTx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback()
			if _, err := tx.Exec("LOCK TABLE " + table + " IN ACCESS EXCLUSIVE MODE"); err != nil {
				t.Fatal(err)
			}
		}
		s, err := sqlstore.NewSegments(openDB(t, b, userDSN), b.dialect, sqlstore.SegmentOptions{Table: table})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		_, err = s.Reserve(ctx, "order", 100)
		if got := sqlstore.Classify(err); err == nil || got != sqlstore.Outage {
			t.Errorf("a locked table: %v, classified %v; want an error classified %v", err, got, sqlstore.Outage)
		}
		notInputNorPrivilege(t, "a locked table", err)
		var pe interface{ SQLState() string }
		var me *mysql.MySQLError
		if !errors.As(err, &pe) && !errors.As(err, &me) || pe != nil && pe.SQLState() != "55P03" || me != nil && me.Number != 1205 {
			t.Errorf("a locked table: %v; want the database's own lock timeout (55P03, or MySQL's 1205)", err)
		}
	})
}

// TestLibraryStoreCutConnectionIsAnOutage: a database cut off by the
// fault proxy is an outage for every kind of store, on the first use (no
// table is taken for missing) and later; once the proxy lets traffic
// through again the same store creates its table and serves, and a table
// that does not exist is still told apart through the proxy.
func TestLibraryStoreCutConnectionIsAnOutage(t *testing.T) {
	forEach(t, func(t *testing.T, b backend, dsn string) {
		proxy := faultproxy.New(t, hostOf(t, b, dsn))
		db := openDB(t, b, viaProxy(t, b, dsn, proxy.Addr()))
		ctx := context.Background()
		leaf, _ := newSegments(t, b, db)
		tiny, _ := newTinyid(t, b, db)
		set := newSetStore(t, b, db, "solo")
		nodes := newStore(t, b, db)
		claim := nodeid.ClaimRequest{AnyNode: true, Pool: 4, Layout: nodeidtest.Layout, TTL: time.Minute}

		cut := func(when string) {
			t.Helper()
			proxy.Cut()
			defer proxy.Restore()
			for name, s := range map[string]segment.Store{"leaf": leaf, "tinyid": tiny, "set": set} {
				_, err := s.Tags(ctx)
				if got := sqlstore.Classify(err); err == nil || got != sqlstore.Outage {
					t.Errorf("%s, %s: Tags with the database cut off: %v, classified %v; want an error classified %v", name, when, err, got, sqlstore.Outage)
				}
				notInputNorPrivilege(t, name+", "+when, err)
			}
			_, err := nodes.Claim(ctx, claim)
			if got := sqlstore.Classify(err); err == nil || got != sqlstore.Outage {
				t.Errorf("nodes, %s: Claim with the database cut off: %v, classified %v; want an error classified %v", when, err, got, sqlstore.Outage)
			}
			notInputNorPrivilege(t, "nodes, "+when, err)
		}
		cut("first use")

		// database/sql drops the connections the cut broke; a use may meet
		// one before the pool has, and then the next succeeds.
		serves := func(f func() error) error {
			err := f()
			if err != nil {
				err = f()
			}
			return err
		}
		if err := serves(func() error { return leaf.CreateTag(ctx, "order", 1, 100, "") }); err != nil {
			t.Fatalf("leaf after the database is back: %v", err)
		}
		for name, s := range map[string]segment.Store{"tinyid": tiny, "set": set} {
			if err := serves(func() error { _, err := s.Tags(ctx); return err }); err != nil {
				t.Fatalf("%s after the database is back: %v", name, err)
			}
		}
		if err := serves(func() error { _, err := nodes.Claim(ctx, claim); return err }); err != nil {
			t.Fatalf("nodes after the database is back: %v", err)
		}
		cut("after the tables exist")

		absent, err := sqlstore.NewSegments(db, b.dialect, sqlstore.SegmentOptions{Table: randomName("absent_"), NoCreate: true})
		if err != nil {
			t.Fatal(err)
		}
		_, err = absent.Tags(ctx)
		if sqlstore.Classify(err) == sqlstore.Outage { // a connection the cut broke, met before the pool dropped it
			_, err = absent.Tags(ctx)
		}
		if got := sqlstore.Classify(err); got != sqlstore.MissingTable {
			t.Errorf("through the proxy, a table that does not exist: %v, classified %v; want %v", err, got, sqlstore.MissingTable)
		}
	})
}
