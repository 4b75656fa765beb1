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

// TestHolderDrivesAServer wires a Holder to a server.Server as firn serve
// does: while the lost lease is replaced /readyz says why, and afterwards
// the server issues from the new generator, past every ID it issued
// before.
func TestHolderDrivesAServer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := nodeidtest.NewMemStore()
		h := newHolder(t, config(store))
		g, l, err := h.Acquire(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		svc, err := server.New(server.Config{Snowflake: g, Lease: l, Ready: h.NotReady})
		if err != nil {
			t.Fatal(err)
		}
		get := func(path string) (int, string) {
			w := httptest.NewRecorder()
			svc.Handler().ServeHTTP(w, httptest.NewRequest(http.MethodGet, path, nil))
			return w.Code, strings.TrimSpace(w.Body.String())
		}
		next := func() int64 {
			t.Helper()
			code, body := get("/v1/snowflake/next?format=text")
			if code != http.StatusOK {
				t.Fatalf("next: %d %s", code, body)
			}
			id, err := strconv.ParseInt(body, 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return id
		}
		before := next()
		replaced := make(chan struct{}, 1)
		if err := h.Watch(t.Context(), func(g *snowflake.Generator, l *nodeid.Lease) {
			svc.Replace(g, l)
			replaced <- struct{}{}
		}); err != nil {
			t.Fatal(err)
		}
		store.Cut(l.Token(), errors.New("cut off"))
		store.Fail(errors.New("store down")) // no new node until it answers
		<-l.Done()
		time.Sleep(time.Second)
		if code, body := get("/readyz"); code != http.StatusServiceUnavailable || (!strings.Contains(body, "acquiring a node again") && !strings.Contains(body, "store down")) {
			t.Fatalf("/readyz while replacing the lost lease: %d %s", code, body)
		}
		store.Fail(nil)
		store.Cut(l.Token(), nil)
		<-replaced
		if code, body := get("/readyz"); code != http.StatusOK {
			t.Fatalf("/readyz once replaced: %d %s", code, body)
		}
		if after := next(); after <= before {
			t.Fatalf("the server's ID after the new lease, %d, is not past %d", after, before)
		}
	})
}
