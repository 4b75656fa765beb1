package migrate_test

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/url"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	_ "github.com/firn-id/firn/sqlstore/mysql" // the MySQL row: Classify reads its errors
	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/firn-id/firn/internal/faultproxy"
	"github.com/firn-id/firn/internal/legacytest"
	"github.com/firn-id/firn/internal/testenv"
	"github.com/firn-id/firn/migrate"
	"github.com/firn-id/firn/snowflake"
	"github.com/firn-id/firn/sqlstore"
)

// database is a database (MySQL) or schema (PostgreSQL) of the test's
// own, dropped when it ends, reached directly and through a fault proxy.
type database struct {
	dialect sqlstore.Dialect
	admin   *sql.DB // direct
	proxied *sql.DB // through proxy
	proxy   *faultproxy.Proxy
}

func newDatabase(t *testing.T, kind string) *database {
	t.Helper()
	env, driver, d := "FIRN_TEST_POSTGRES", "pgx", sqlstore.Postgres
	if kind == "mysql" {
		env, driver, d = "FIRN_TEST_MYSQL", "mysql", sqlstore.MySQL
	}
	root := open(t, driver, testenv.Endpoint(t, env))
	suffix := make([]byte, 6)
	rand.Read(suffix)
	name := "firn_mig_" + hex.EncodeToString(suffix)
	var direct, proxied string
	var proxy *faultproxy.Proxy
	if d == sqlstore.MySQL {
		exec(t, root, "CREATE DATABASE "+name)
		t.Cleanup(func() { root.Exec("DROP DATABASE IF EXISTS " + name) })
		cfg, err := mysql.ParseDSN(testenv.Endpoint(t, env))
		if err != nil {
			t.Fatal(err)
		}
		cfg.DBName = name
		direct = cfg.FormatDSN()
		proxy = faultproxy.New(t, cfg.Addr)
		cfg.Addr, cfg.Timeout, cfg.ReadTimeout, cfg.WriteTimeout = proxy.Addr(), time.Second, time.Second, time.Second
		proxied = cfg.FormatDSN()
	} else {
		exec(t, root, "CREATE SCHEMA "+name)
		t.Cleanup(func() { root.Exec("DROP SCHEMA IF EXISTS " + name + " CASCADE") })
		u, err := url.Parse(testenv.Endpoint(t, env))
		if err != nil {
			t.Fatal(err)
		}
		q := u.Query()
		q.Set("search_path", name)
		u.RawQuery = q.Encode()
		direct = u.String()
		proxy = faultproxy.New(t, u.Host)
		q.Set("connect_timeout", "1")
		u.RawQuery, u.Host = q.Encode(), proxy.Addr()
		proxied = u.String()
	}
	return &database{dialect: d, admin: open(t, driver, direct), proxied: open(t, driver, proxied), proxy: proxy}
}

func open(t *testing.T, driver, dsn string) *sql.DB {
	t.Helper()
	db, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func exec(t *testing.T, db *sql.DB, stmts ...string) {
	t.Helper()
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

// TestCheckTellsAnOutageFromNoSegments: a Leaf that runs in snowflake
// mode only has no leaf_alloc, and its plan serves no segments; a
// database cut off, or a Leaf table that cannot be read, is an error — an
// outage read as "no segments" would plan a switch that drops every tag.
func TestCheckTellsAnOutageFromNoSegments(t *testing.T) {
	for _, kind := range []string{"postgres", "mysql"} {
		t.Run(kind, func(t *testing.T) {
			db := newDatabase(t, kind)
			tw, _ := snowflake.Preset("twitter")
			opt := migrate.Options{From: migrate.Leaf, Dialect: db.dialect, Layout: tw}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()

			p, err := migrate.Check(ctx, db.proxied, opt)
			if err != nil || !p.NoSegments || len(p.Tags) != 0 {
				t.Fatalf("no leaf_alloc: plan %+v, %v; want no segments", p, err)
			}

			exec(t, db.admin, legacytest.LeafTable(kind, "leaf_alloc")...)
			db.proxy.Cut()
			p, err = migrate.Check(ctx, db.proxied, opt)
			if got := sqlstore.Classify(err); err == nil || got != sqlstore.Outage {
				t.Errorf("database cut off: plan %+v, %v (classified %v); want an error classified %v", p, err, got, sqlstore.Outage)
			}
			db.proxy.Restore()

			p, err = migrate.Check(ctx, db.proxied, opt)
			if sqlstore.Classify(err) == sqlstore.Outage && err != nil { // a connection the cut broke, met before the pool dropped it
				p, err = migrate.Check(ctx, db.proxied, opt)
			}
			if err != nil || p.NoSegments || len(p.Tags) != 1 || p.Tags[0].Tag != legacytest.LeafSampleTag {
				t.Fatalf("Leaf's table, the database back: plan %+v, %v; want Leaf's sample row", p, err)
			}
		})
	}
}
