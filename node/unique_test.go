package node_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/firn-id/firn/nodeid"
	"github.com/firn-id/firn/nodeid/nodeidtest"
	"github.com/firn-id/firn/server"
	"github.com/firn-id/firn/snowflake"
)

// TestIDsUniqueWhileTheNodeIsRetaken: a server keeps issuing, request
// after request, while its lease on node 1 is lost, retired and node 1
// taken again with a new claim: the old generator serves up to its frozen
// HWM while the new one starts past it, and no ID is served twice.
func TestIDsUniqueWhileTheNodeIsRetaken(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := nodeidtest.NewMemStore()
		cfg := config(store)
		n := uint64(1)
		cfg.Lease.Node = &n
		h := newHolder(t, cfg)
		g, l, err := h.Acquire(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		svc, err := server.New(server.Config{Snowflake: g, Lease: l, Ready: h.NotReady})
		if err != nil {
			t.Fatal(err)
		}
		replaced := make(chan *nodeid.Lease, 1)
		if err := h.Watch(t.Context(), func(g *snowflake.Generator, l *nodeid.Lease) {
			svc.Replace(g, l)
			replaced <- l
		}); err != nil {
			t.Fatal(err)
		}
		seen := map[int64]bool{}
		issue := func() {
			w := httptest.NewRecorder()
			svc.Handler().ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/v1/snowflake/batch?format=text&count=50", nil))
			if w.Code != http.StatusOK {
				return // past the old lease's HWM, before the new one serves
			}
			for _, s := range strings.Fields(w.Body.String()) {
				id, err := strconv.ParseInt(s, 10, 64)
				if err != nil || seen[id] {
					t.Fatalf("ID %q served twice or not an ID (%v)", s, err)
				}
				seen[id] = true
			}
		}
		store.Cut(l.Token(), errors.New("cut off"))
		var next *nodeid.Lease
		for next == nil {
			issue()
			time.Sleep(time.Millisecond)
			select {
			case next = <-replaced:
			default:
			}
		}
		if next.Node() != n || next.Token() == l.Token() {
			t.Fatalf("the new lease holds node %d with token %q; want node %d with a new token", next.Node(), next.Token(), n)
		}
		for range 500 {
			issue()
			time.Sleep(time.Millisecond)
		}
		if len(seen) < 1000 {
			t.Fatalf("only %d IDs served", len(seen))
		}
	})
}
