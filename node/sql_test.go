package node_test

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/firn-id/firn/internal/faultproxy"
	"github.com/firn-id/firn/internal/testenv"
	"github.com/firn-id/firn/node"
	"github.com/firn-id/firn/nodeid"
	"github.com/firn-id/firn/server"
	"github.com/firn-id/firn/snowflake"
	"github.com/firn-id/firn/sqlstore"
)

// TestPostgresOutageRetakesTheNode: PostgreSQL cut off by the fault proxy
// while a server issues from node 1: the lease is lost, its release
// fails, the claims after it fail; once the database is back node 1 is
// taken with a new claim that starts at or past the old lease's frozen
// HWM, and no ID is served twice.
func TestPostgresOutageRetakesTheNode(t *testing.T) {
	dsn := testenv.Endpoint(t, "FIRN_TEST_POSTGRES")
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	proxy := faultproxy.New(t, u.Host)
	q := u.Query()
	q.Set("connect_timeout", "1")
	u.Host, u.RawQuery = proxy.Addr(), q.Encode()
	db, err := sql.Open("pgx", u.String())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	suffix := make([]byte, 6)
	rand.Read(suffix)
	table := "firn_holder_" + hex.EncodeToString(suffix)
	t.Cleanup(func() { db.Exec("DROP TABLE IF EXISTS " + table + ", " + table + "_namespaces") })
	store, err := sqlstore.New(db, sqlstore.Postgres, sqlstore.Options{Table: table})
	if err != nil {
		t.Fatal(err)
	}
	cfg := config(store)
	n := uint64(1)
	cfg.Lease.Node, cfg.Lease.TTL, cfg.Attempt = &n, time.Second, time.Second
	h, err := node.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(context.Background())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	g, l, err := h.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	svc, err := server.New(server.Config{Snowflake: g, Lease: l, Ready: h.NotReady})
	if err != nil {
		t.Fatal(err)
	}
	replaced := make(chan *nodeid.Lease, 1)
	if err := h.Watch(ctx, func(g *snowflake.Generator, l *nodeid.Lease) {
		svc.Replace(g, l)
		replaced <- l
	}); err != nil {
		t.Fatal(err)
	}
	seen := map[int64]bool{}
	issue := func() {
		w := httptest.NewRecorder()
		svc.Handler().ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/v1/snowflake/batch?format=text&count=20", nil))
		if w.Code != http.StatusOK {
			return
		}
		for _, s := range strings.Fields(w.Body.String()) {
			id, err := strconv.ParseInt(s, 10, 64)
			if err != nil || seen[id] {
				t.Fatalf("ID %q served twice or not an ID (%v)", s, err)
			}
			seen[id] = true
		}
	}
	proxy.Cut()
	time.AfterFunc(3*time.Second, proxy.Restore)
	var next *nodeid.Lease
	for next == nil {
		issue()
		select {
		case next = <-replaced:
		case <-ctx.Done():
			t.Fatalf("node not taken again: NotReady %v", h.NotReady())
		case <-time.After(time.Millisecond):
		}
	}
	<-l.Done()
	if next.Node() != n || next.Token() == l.Token() || next.Start() < l.Limit() {
		t.Fatalf("new lease: node %d, token %q, start %d; want node %d, a new token, a start at or past the lost HWM %d",
			next.Node(), next.Token(), next.Start(), n, l.Limit())
	}
	for deadline := time.Now().Add(time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		issue()
	}
}
