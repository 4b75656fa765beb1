package sqlstore_test

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/firn-id/firn/internal/faultproxy"
	"github.com/firn-id/firn/internal/idtest"
	"github.com/firn-id/firn/internal/testenv"
	"github.com/firn-id/firn/nodeid"
	"github.com/firn-id/firn/nodeid/nodeidtest"
	"github.com/firn-id/firn/snowflake"
	"github.com/firn-id/firn/sqlstore"
)

// backend is one real database the tests run against.
type backend struct {
	name    string
	env     string
	driver  string
	dialect sqlstore.Dialect
}

var backends = []backend{
	{"postgres", "FIRN_TEST_POSTGRES", "pgx", sqlstore.Postgres},
	{"mysql", "FIRN_TEST_MYSQL", "mysql", sqlstore.MySQL},
}

func forEach(t *testing.T, f func(t *testing.T, b backend, dsn string)) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) { f(t, b, testenv.Endpoint(t, b.env)) })
	}
}

func openDB(t testing.TB, b backend, dsn string) *sql.DB {
	t.Helper()
	db, err := sql.Open(b.driver, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// newStore returns a store on a table of its own, dropped when t ends.
func newStore(t testing.TB, b backend, db *sql.DB) *sqlstore.Store {
	t.Helper()
	suffix := make([]byte, 6)
	rand.Read(suffix)
	table := "firn_nodes_" + hex.EncodeToString(suffix)
	s, err := sqlstore.New(db, b.dialect, sqlstore.Options{Table: table})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, tb := range []string{table, table + "_namespaces"} {
			db.Exec("DROP TABLE IF EXISTS " + tb)
		}
	})
	return s
}

func TestConformance(t *testing.T) {
	forEach(t, func(t *testing.T, b backend, dsn string) {
		db := openDB(t, b, dsn)
		nodeidtest.RunStoreTests(t, func(t *testing.T) nodeid.Store { return newStore(t, b, db) },
			nodeidtest.Options{TTL: time.Second})
	})
}

func TestRecorderConformance(t *testing.T) {
	forEach(t, func(t *testing.T, b backend, dsn string) {
		db := openDB(t, b, dsn)
		nodeidtest.RunRecorderTests(t, func(t *testing.T) nodeid.Recorder { return newStore(t, b, db) })
	})
}

// TestClock: the database's clock, which a release of an unreachable
// site's floor is computed from, reads the time.
func TestClock(t *testing.T) {
	forEach(t, func(t *testing.T, b backend, dsn string) {
		st := newStore(t, b, openDB(t, b, dsn))
		now, err := st.Now(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if d := time.Since(now); d > 5*time.Second || d < -5*time.Second {
			t.Fatalf("the database's clock reads %s, %s from this machine's", now, d)
		}
	})
}

func TestNamespacesAreApart(t *testing.T) {
	forEach(t, func(t *testing.T, b backend, dsn string) {
		db := openDB(t, b, dsn)
		s := newStore(t, b, db)
		table := tableOf(t, s, b, db)
		other, err := sqlstore.New(db, b.dialect, sqlstore.Options{Table: table, Namespace: "other"})
		if err != nil {
			t.Fatal(err)
		}
		req := nodeid.ClaimRequest{AnyNode: true, Pool: 4, Layout: nodeidtest.Layout, TTL: time.Minute}
		for _, st := range []*sqlstore.Store{s, other} {
			c, err := st.Claim(context.Background(), req)
			if err != nil || c.Node != 0 {
				t.Fatalf("first claim in a namespace: node %d, %v; want node 0", c.Node, err)
			}
		}
	})
}

// tableOf claims once to learn nothing but that the store works, and
// returns its table name from the database's catalogue.
func tableOf(t *testing.T, s *sqlstore.Store, b backend, db *sql.DB) string {
	t.Helper()
	// A claim of node 0, released, creates the tables and its row.
	c, err := s.Claim(context.Background(), nodeid.ClaimRequest{Pool: 4, Layout: nodeidtest.Layout, TTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Release(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	q := "SELECT table_name FROM information_schema.tables WHERE table_name LIKE 'firn_nodes_%' AND table_name NOT LIKE '%_namespaces' ORDER BY table_name"
	rows, err := db.Query(q)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var names []string
	for rows.Next() {
		var n string
		rows.Scan(&n)
		names = append(names, n)
	}
	for _, n := range names {
		var k int
		if db.QueryRow("SELECT COUNT(*) FROM "+n+" WHERE namespace = 'default' AND node = 0 AND hwm = 0").Scan(&k) == nil && k == 1 {
			if s2, _ := sqlstore.New(db, b.dialect, sqlstore.Options{Table: n}); s2 != nil {
				return n
			}
		}
	}
	t.Fatal("table not found")
	return ""
}

func TestSchema(t *testing.T) {
	for _, d := range []sqlstore.Dialect{sqlstore.Postgres, sqlstore.MySQL} {
		ddl, err := sqlstore.Schema(d, "firn_nodes")
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"CREATE TABLE IF NOT EXISTS firn_nodes (", "firn_nodes_namespaces", "hwm", "lease_expires"} {
			if !strings.Contains(ddl, want) {
				t.Errorf("%s schema lacks %q", d, want)
			}
		}
	}
	if _, err := sqlstore.Schema(sqlstore.Postgres, "Robert'); DROP TABLE students;--"); err == nil {
		t.Fatal("a table name needing quotes was accepted")
	}
	if _, err := sqlstore.ParseDialect("oracle"); err == nil {
		t.Fatal("oracle parsed as a dialect")
	}
}

// TestDatabaseOutage runs a lease and its generator through a proxy that
// cuts the database off: shorter than the TTL the lease survives; longer,
// the generator stops at its HWM and the lease is lost; after recovery a
// new lease takes the node and no ID repeats.
func TestDatabaseOutage(t *testing.T) {
	forEach(t, func(t *testing.T, b backend, dsn string) {
		proxy := faultproxy.New(t, hostOf(t, b, dsn))
		db := openDB(t, b, viaProxy(t, b, dsn, proxy.Addr()))
		s := newStore(t, b, db)
		lay := snowflake.DefaultLayout()
		node := uint64(9)
		cfg := nodeid.Config{Node: &node, NodeBits: lay.NodeBits(), TTL: 2 * time.Second, Window: time.Second,
			Layout: nodeid.LayoutID{Fingerprint: lay.Fingerprint(), Description: lay.String()}}
		ctx := context.Background()
		rec := idtest.NewRecorder(t)

		lease, err := nodeid.Acquire(ctx, s, cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer lease.Close(ctx)
		g, err := snowflake.New(snowflake.Config{Layout: lay, Node: node, Reservation: lease})
		if err != nil {
			t.Fatal(err)
		}
		draw := func(g *snowflake.Generator, src string, d time.Duration) (lastErr error) {
			for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(time.Millisecond) {
				id, err := g.Next(ctx)
				if err != nil {
					lastErr = err
					continue
				}
				rec.Add(src, id)
			}
			return lastErr
		}

		proxy.Cut()
		draw(g, "first", 500*time.Millisecond)
		proxy.Restore()
		if err := draw(g, "first", 1500*time.Millisecond); err != nil {
			t.Fatalf("after a 0.5 s outage: %v", err)
		}
		if lease.Err() != nil {
			t.Fatalf("lease lost after a 0.5 s outage: %v", lease.Err())
		}

		proxy.Cut()
		err = draw(g, "first", 3500*time.Millisecond)
		if !errors.Is(err, snowflake.ErrNotServing) {
			t.Fatalf("after a 3.5 s outage the generator says %v, want ErrNotServing", err)
		}
		<-lease.Done()
		if !errors.Is(lease.Err(), nodeid.ErrLeaseLost) {
			t.Fatalf("lease error %v, want ErrLeaseLost", lease.Err())
		}
		proxy.Restore()

		second, err := nodeid.Acquire(ctx, s, cfg)
		if err != nil {
			t.Fatalf("acquire after recovery: %v", err)
		}
		defer second.Close(ctx)
		if second.Start() < lease.Limit() {
			t.Fatalf("new lease starts at %d, below the old one's confirmed HWM %d", second.Start(), lease.Limit())
		}
		g2, err := snowflake.New(snowflake.Config{Layout: lay, Node: node, Reservation: second})
		if err != nil {
			t.Fatal(err)
		}
		if err := draw(g2, "second", 200*time.Millisecond); err != nil {
			t.Fatal(err)
		}
	})
}

func hostOf(t *testing.T, b backend, dsn string) string {
	t.Helper()
	if b.dialect == sqlstore.MySQL {
		cfg, err := mysql.ParseDSN(dsn)
		if err != nil {
			t.Fatal(err)
		}
		return cfg.Addr
	}
	rest := dsn[strings.Index(dsn, "@")+1:]
	return rest[:strings.IndexAny(rest, "/?")]
}

func viaProxy(t *testing.T, b backend, dsn, addr string) string {
	t.Helper()
	if b.dialect == sqlstore.MySQL {
		cfg, _ := mysql.ParseDSN(dsn)
		cfg.Addr = addr
		cfg.Timeout = time.Second
		cfg.ReadTimeout = time.Second
		cfg.WriteTimeout = time.Second
		return cfg.FormatDSN()
	}
	sep := "?"
	if strings.Contains(dsn, "?") {
		sep = "&"
	}
	return strings.Replace(dsn, hostOf(t, b, dsn), addr, 1) + sep + "connect_timeout=1"
}

func BenchmarkAcquire(b *testing.B) {
	for _, be := range backends {
		b.Run(be.name, func(b *testing.B) {
			db := openDB(b, be, testenv.Endpoint(b, be.env))
			s := newStore(b, be, db)
			lay := snowflake.DefaultLayout()
			// Each acquisition reserves a window past the last: back-to-back
			// acquisitions outrun the clock, which StartAhead accepts here.
			cfg := nodeid.Config{NodeBits: lay.NodeBits(), StartAhead: true,
				Layout: nodeid.LayoutID{Fingerprint: lay.Fingerprint(), Description: lay.String()}}
			ctx := context.Background()
			for b.Loop() {
				l, err := nodeid.Acquire(ctx, s, cfg)
				if err != nil {
					b.Fatal(err)
				}
				l.Close(ctx)
			}
		})
	}
}

// TestStartingTogether: processes that start together on a database
// where the tables do not exist yet all find them missing and all create
// them. Every one of them serves: a CREATE TABLE IF NOT EXISTS that loses
// to another (PostgreSQL's fails on a catalogue index rather than doing
// nothing) finds the table made and uses it.
func TestStartingTogether(t *testing.T) {
	forEach(t, func(t *testing.T, b backend, dsn string) {
		db := openDB(t, b, dsn)
		db.SetMaxOpenConns(8)
		for round := range 5 {
			suffix := make([]byte, 6)
			rand.Read(suffix)
			table := "firn_nodes_" + hex.EncodeToString(suffix)
			t.Cleanup(func() {
				for _, tb := range []string{table, table + "_namespaces"} {
					db.Exec("DROP TABLE IF EXISTS " + tb)
				}
			})
			var stores []*sqlstore.Store
			for range 8 {
				s, err := sqlstore.New(db, b.dialect, sqlstore.Options{Table: table})
				if err != nil {
					t.Fatal(err)
				}
				stores = append(stores, s)
			}
			start := make(chan struct{})
			errs := make([]error, len(stores))
			nodes := make([]uint64, len(stores))
			var wg sync.WaitGroup
			for i, s := range stores {
				wg.Go(func() {
					<-start
					c, err := s.Claim(context.Background(), nodeid.ClaimRequest{AnyNode: true, Pool: 16, Layout: nodeidtest.Layout, TTL: time.Minute})
					errs[i], nodes[i] = err, c.Node
				})
			}
			close(start)
			wg.Wait()
			held := map[uint64]bool{}
			for i, err := range errs {
				if err != nil {
					t.Fatalf("round %d, store %d of %d starting together: %v", round, i, len(stores), err)
				}
				if held[nodes[i]] {
					t.Fatalf("round %d: node %d claimed twice", round, nodes[i])
				}
				held[nodes[i]] = true
			}
		}
	})
}
