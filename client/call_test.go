package client_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/firn-id/firn/api"
	"github.com/firn-id/firn/client"
	"github.com/firn-id/firn/opaque"
	"github.com/firn-id/firn/segment"
	"github.com/firn-id/firn/segment/segmenttest"
	"github.com/firn-id/firn/server"
	"github.com/firn-id/firn/snowflake"
)

// httpServer serves the HTTP API of a server in process, as firn serve
// does: snowflake IDs of the default layout, the tag "order" counting
// from 1, and in opaque mode (perm set) revealing for the token "ops".
func httpServer(t *testing.T, perm *opaque.Permutation) (string, snowflake.Layout) {
	t.Helper()
	g, err := snowflake.New(snowflake.Config{Reservation: snowflake.Unreserved()})
	if err != nil {
		t.Fatal(err)
	}
	store := segmenttest.NewMemStore()
	if err := store.CreateTag(context.Background(), "order", 1, 100, ""); err != nil {
		t.Fatal(err)
	}
	alloc, err := segment.NewAllocator(store, segment.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = alloc.Close(context.Background()) })
	cfg := server.Config{Snowflake: g, Segments: alloc, SegmentStore: store, Opaque: perm}
	if perm != nil {
		cfg.Auth, err = server.NewAuth([]server.Token{{Name: "ops", Secret: "ops-secret-01234", Scopes: []string{"reveal", "snowflake"}}}, server.Anonymous{})
		if err != nil {
			t.Fatal(err)
		}
	}
	s, err := server.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s.Handler())
	t.Cleanup(hs.Close)
	return hs.URL, g.Layout()
}

func newHTTPClient(t *testing.T, cfg client.Config) *client.Client {
	t.Helper()
	cfg.HTTP = true
	c, err := client.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close(context.Background()) })
	return c
}

// TestTagAdmin: create, list, change a step and advance a tag through a
// real server's admin API; its errors are the client's sentinels.
func TestTagAdmin(t *testing.T) {
	base, _ := httpServer(t, nil)
	c := newHTTPClient(t, client.Config{Endpoints: []string{base}})
	ctx := context.Background()
	created, err := c.CreateTag(ctx, "user", 7, 10, "users")
	if err != nil || created != (api.Tag{Tag: "user", Next: 7, Step: 10, Delta: 1, Description: "users"}) {
		t.Fatalf("CreateTag: %+v, %v", created, err)
	}
	if _, err := c.CreateTag(ctx, "user", 1, 10, ""); !errors.Is(err, client.ErrTagExists) {
		t.Fatalf("CreateTag of a tag that exists: %v, want ErrTagExists", err)
	}
	if err := c.SetStep(ctx, "user", 20); err != nil {
		t.Fatalf("SetStep: %v", err)
	}
	if err := c.SetStep(ctx, "user", 0); !errors.Is(err, client.ErrInvalid) {
		t.Fatalf("SetStep 0: %v, want ErrInvalid", err)
	}
	next, err := c.Advance(ctx, "user", 100)
	if err != nil || next != 100 {
		t.Fatalf("Advance to 100: %d, %v", next, err)
	}
	if _, err := c.Advance(ctx, "nope", 100); !errors.Is(err, client.ErrUnknownTag) {
		t.Fatalf("Advance of an unknown tag: %v, want ErrUnknownTag", err)
	}
	tags, err := c.Tags(ctx)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(tags, func(t api.Tag) bool { return t.Tag == "user" })
	if len(tags) != 2 || i < 0 || tags[i].Step != 20 || tags[i].Next != 100 || tags[i].Description != "users" {
		t.Fatalf("Tags: %+v; want order and user (step 20, next 100)", tags)
	}
	ids := make([]int64, 3)
	if n, err := c.Tag("user").Fetch(ctx, ids); n != 3 || err != nil || !slices.Equal(ids, []int64{100, 101, 102}) {
		t.Fatalf("Tag.Fetch: %v (%d), %v; want 100 to 102", ids, n, err)
	}
}

// TestFetchInfoDecodeGuess: IDs asked for the call come in the order the
// server issued them, in batches of at most MaxBatch; the server's info
// and its decoding are its own, as the api package writes them.
func TestFetchInfoDecodeGuess(t *testing.T) {
	base, l := httpServer(t, nil)
	c := newHTTPClient(t, client.Config{Endpoints: []string{base}, MaxBatch: 4})
	ctx := context.Background()
	info, err := c.Info(ctx)
	if err != nil || info != (api.Info{Layout: l.String(), Fingerprint: l.Fingerprint(), Bits: l.BitsFingerprint(), Node: 0, MaxBatch: server.DefaultMaxBatch}) {
		t.Fatalf("Info: %+v, %v", info, err)
	}
	ids := make([]int64, 10)
	if n, err := c.Fetch(ctx, ids); n != 10 || err != nil || !slices.IsSorted(ids) || slices.Compact(slices.Clone(ids))[9] != ids[9] {
		t.Fatalf("Fetch: %v (%d), %v; want 10 increasing IDs", ids, n, err)
	}
	d, err := c.Decode(ctx, uint64(ids[0]))
	p, _ := l.Decompose(uint64(ids[0]))
	if want := api.NewDecoded(uint64(ids[0]), p); err != nil || d.ID != want.ID || d.UnixMS != want.UnixMS || d.Sequence != want.Sequence || !slices.Equal(d.Node, want.Node) {
		t.Fatalf("Decode: %+v, %v; want %+v", d, err, want)
	}
	g, err := c.Guess(ctx, 175928847299117063)
	if err != nil || g.ID != "175928847299117063" || !g.Ambiguous {
		t.Fatalf("Guess: %+v, %v", g, err)
	}
	if i := slices.IndexFunc(g.Candidates, func(c api.Candidate) bool { return c.Layout == "discord" }); i < 0 || !g.Candidates[i].Plausible {
		t.Fatalf("Guess: %+v; want discord plausible", g.Candidates)
	}
	// Reveal is never open, even on a server that has nothing to reveal.
	if _, err := c.Reveal(ctx, uint64(ids[0])); !errors.Is(err, client.ErrUnauthorized) {
		t.Fatalf("Reveal on a server with no tokens: %v, want ErrUnauthorized", err)
	}
}

// TestReveal: a server in opaque mode reveals the plain ID behind one it
// issued, to a token with the reveal scope.
func TestReveal(t *testing.T) {
	l := snowflake.DefaultLayout()
	perm, err := opaque.New([]byte("0123456789abcdef"), []byte("orders"), l.Bits())
	if err != nil {
		t.Fatal(err)
	}
	base, _ := httpServer(t, perm)
	c := newHTTPClient(t, client.Config{Endpoints: []string{base}, Token: "ops-secret-01234"})
	ctx := context.Background()
	ids := make([]int64, 1)
	if _, err := c.Fetch(ctx, ids); err != nil {
		t.Fatal(err)
	}
	d, err := c.Reveal(ctx, uint64(ids[0]))
	plain, _ := perm.Decode(uint64(ids[0]))
	if err != nil || d.ID != api.NewDecoded(plain, snowflake.Parts{}).ID || d.OpaqueID != api.NewDecoded(uint64(ids[0]), snowflake.Parts{}).ID {
		t.Fatalf("Reveal(%d): %+v, %v; want the plain ID %d", ids[0], d, err, plain)
	}
	anon := newHTTPClient(t, client.Config{Endpoints: []string{base}})
	if _, err := anon.Reveal(ctx, uint64(ids[0])); !errors.Is(err, client.ErrUnauthorized) {
		t.Fatalf("Reveal without a token: %v, want ErrUnauthorized", err)
	}
}

// TestAPICallsNeedHTTP: over gRPC the calls of the HTTP API are refused
// without a request.
func TestAPICallsNeedHTTP(t *testing.T) {
	c, err := client.New(client.Config{Endpoints: []string{"127.0.0.1:1"}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	var e *client.Error
	if _, err := c.Tags(context.Background()); !errors.Is(err, client.ErrInvalid) || !errors.As(err, &e) || e.Code != "http_only" {
		t.Fatalf("Tags over gRPC: %v, want ErrInvalid http_only", err)
	}
}

// TestAnswersCutShort: an answer cut short is an error naming the server
// and the route, and nothing of it is returned: IDs (the last one cut
// mid-ID) and JSON alike.
func TestAnswersCutShort(t *testing.T) {
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/batch") {
			_, _ = w.Write([]byte("7205759403792793600\n72057"))
			return
		}
		_, _ = w.Write([]byte(`{"layout":"firn","fingerprint":"f","node":0,"max_b`))
	}))
	defer hs.Close()
	c := newHTTPClient(t, client.Config{Endpoints: []string{hs.URL}, Attempts: 1})
	ctx := context.Background()
	for name, fetch := range map[string]func(context.Context, []int64) (int, error){"Fetch": c.Fetch, "Tag.Fetch": c.Tag("order").Fetch} {
		ids := make([]int64, 2)
		n, err := fetch(ctx, ids)
		var e *client.Error
		if n != 0 || ids[0] != 0 || ids[1] != 0 || !errors.As(err, &e) || e.Code != "bad_answer" || e.Endpoint != hs.URL {
			t.Errorf("%s of a body cut mid-ID: %v (%d), %v; want nothing and a bad_answer error naming %s", name, ids, n, err, hs.URL)
		}
	}
	info, err := c.Info(ctx)
	var e *client.Error
	if info != (api.Info{}) || !errors.As(err, &e) || e.Code != "bad_answer" || !strings.Contains(err.Error(), "/v1/snowflake/info") {
		t.Errorf("Info of a body cut short: %+v, %v; want a bad_answer error naming the route", info, err)
	}
}

// TestWritesAskOneServer: a write whose answer did not come may have been
// done, so it is not sent again to another server; a read is.
func TestWritesAskOneServer(t *testing.T) {
	var down atomic.Int32
	first := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		down.Add(1)
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer first.Close()
	base, _ := httpServer(t, nil)
	c := newHTTPClient(t, client.Config{Endpoints: []string{first.URL, base}})
	ctx := context.Background()
	if _, err := c.CreateTag(ctx, "user", 1, 10, ""); !errors.Is(err, client.ErrUnavailable) {
		t.Fatalf("CreateTag with the first server down: %v, want ErrUnavailable", err)
	}
	if tags, err := c.Tags(ctx); err != nil || len(tags) != 1 || tags[0].Tag != "order" || down.Load() != 2 {
		t.Fatalf("Tags: %+v, %v (first server asked %d times); want the second server's order only, the first asked twice", tags, err, down.Load())
	}
}
