package sqlstore_test

// Fault sequences against sites on real SQL servers.

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/firn-id/firn/internal/testenv"
	"github.com/firn-id/firn/nodeid"
	"github.com/firn-id/firn/nodeid/nodeidtest"
	"github.com/firn-id/firn/site"
	"github.com/firn-id/firn/sqlstore"
)

// siteTable returns a fresh table name whose tables are dropped when t ends.
func siteTable(t *testing.T, db *sql.DB) string {
	b := make([]byte, 6)
	rand.Read(b)
	table := "firn_nodes_" + hex.EncodeToString(b)
	t.Cleanup(func() {
		for _, tb := range []string{table, table + "_namespaces"} {
			db.Exec("DROP TABLE IF EXISTS " + tb)
		}
	})
	return table
}

func siteSQL(t *testing.T, db *sql.DB, d sqlstore.Dialect, table, ns string) *sqlstore.Store {
	s, err := sqlstore.New(db, d, sqlstore.Options{Table: table, Namespace: ns})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func siteSQLLedger(t *testing.T, db *sql.DB, d sqlstore.Dialect) *site.Ledger {
	table := siteTable(t, db)
	open := func(ns string) (nodeid.Recorder, error) {
		return sqlstore.New(db, d, sqlstore.Options{Table: table, Namespace: ns})
	}
	l, err := site.OpenLedger(context.Background(), open, "ledger", nodeidtest.Layout, site.Spec{Count: 4}, true)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// TestSiteTwoNamespacesOnePostgres: two namespaces of one PostgreSQL
// server (one table, namespaces "ns1" and "ns2") are each claimed for site
// "eu" (datacenter 1). Identity is the server's system identifier, the
// same for both, so ClaimSite takes the second namespace for the value the
// ledger gives the first one ("same registry", re-run of a claim cut
// short). Processes on each lease node 4 from independent HWMs at once.
func TestSiteTwoNamespacesOnePostgres(t *testing.T) {
	dsn := testenv.Endpoint(t, "FIRN_TEST_POSTGRES")
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	ctx := context.Background()
	l := siteSQLLedger(t, db, sqlstore.Postgres)
	table := siteTable(t, db)
	ns1, ns2 := siteSQL(t, db, sqlstore.Postgres, table, "ns1"), siteSQL(t, db, sqlstore.Postgres, table, "ns2")
	eu := nodeid.Site{Name: "eu", Fields: "datacenter=1", First: 4, Count: 4}
	if _, err := l.ClaimSite(ctx, site.Registry{Store: ns1, Where: "pg/ns1"}, eu, nodeidtest.Layout); err != nil {
		t.Fatal(err)
	}
	cfg := nodeid.Config{NodeBits: 3, Layout: nodeidtest.Layout, TTL: 10 * time.Second, Site: eu}
	a, err := nodeid.Acquire(ctx, ns1, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close(ctx)
	if _, err := l.ClaimSite(ctx, site.Registry{Store: ns2, Where: "pg/ns2"}, eu, nodeidtest.Layout); err != nil {
		t.Logf("second namespace refused: %v", err)
		return
	}
	b, err := nodeid.Acquire(ctx, ns2, cfg)
	if err != nil {
		t.Fatalf("acquire on ns2: %v", err)
	}
	defer b.Close(ctx)
	if a.Node() == b.Node() && a.Err() == nil && b.Start() < a.Limit() {
		t.Errorf("DUPLICATE: site eu leases node %d in two namespaces of one server: ns1's lease may issue up to %d, ns2's starts at %d (now %d)",
			a.Node(), a.Limit(), b.Start(), time.Now().UnixMilli())
	}
}

// siteFailOnce is a registry whose next Rerecord fails without writing.
type siteFailOnce struct {
	nodeid.Recorder
	mu   sync.Mutex
	fail error
}

func (f *siteFailOnce) Rerecord(ctx context.Context, old, new nodeid.LayoutID) error {
	f.mu.Lock()
	err := f.fail
	f.fail = nil
	f.mu.Unlock()
	if err != nil {
		return err
	}
	return f.Recorder.Rerecord(ctx, old, new)
}

// TestSiteCutShortOnMariaDB: MariaDB's Identity is "". A `site
// claim` whose registry write fails after the ledger's claim was written
// (connection lost) can never be finished: the re-run refuses the site's
// own value as "on another registry", and release refuses because the
// registry holds no site record. The value is unusable for ever.
func TestSiteCutShortOnMariaDB(t *testing.T) {
	dsn := testenv.Endpoint(t, "FIRN_TEST_MYSQL")
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	ctx := context.Background()
	reg := siteSQL(t, db, sqlstore.MySQL, siteTable(t, db), "ns")
	if id, err := reg.Identity(ctx); err != nil || id != "" {
		t.Skipf("identity %q, %v: not MariaDB", id, err)
	}
	l := siteSQLLedger(t, db, sqlstore.MySQL)
	eu := nodeid.Site{Name: "eu", Fields: "datacenter=1", First: 4, Count: 4}
	cut := &siteFailOnce{Recorder: reg, fail: errors.New("invalid connection")}
	if _, err := l.ClaimSite(ctx, site.Registry{Store: cut, Where: "maria/ns"}, eu, nodeidtest.Layout); err == nil {
		t.Fatal("the cut-short claim succeeded")
	}
	if _, err := l.ClaimSite(ctx, site.Registry{Store: reg, Where: "maria/ns"}, eu, nodeidtest.Layout); err != nil {
		_, rerr := l.ReleaseSite(ctx, site.Registry{Store: reg, Where: "maria/ns"}, eu, nodeidtest.Layout)
		t.Errorf("STUCK: re-run refused: %v; release: %v", err, rerr)
	}
}
