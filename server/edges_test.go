package server_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/firn-id/firn/segment"
	"github.com/firn-id/firn/segment/segmenttest"
	"github.com/firn-id/firn/server"
	"github.com/firn-id/firn/snowflake"
)

// The edges of issue 11 the server holds: nothing an unauthenticated
// request sends can stop the process, make it read or keep much, or pass
// a bug off as an outage.

// probeStore is an in-memory segment store that counts the calls that
// read tags and panics when asked for the tag "boom" (a buggy driver).
type probeStore struct {
	*segmenttest.MemStore
	tag, tags atomic.Int64
}

func (s *probeStore) Tag(ctx context.Context, tag string) (segment.TagInfo, error) {
	s.tag.Add(1)
	if tag == "boom" {
		panic("store bug: boom")
	}
	return s.MemStore.Tag(ctx, tag)
}

func (s *probeStore) Tags(ctx context.Context) ([]segment.TagInfo, error) {
	s.tags.Add(1)
	return s.MemStore.Tags(ctx)
}

// logBuffer is a logger whose output a test reads.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// edgeService is a ready service on a probeStore holding the tag
// "order", with one token "edges-secret-0123" of every scope when tokens is set.
func edgeService(t testing.TB, tokens bool, tags ...string) (*server.Config, *probeStore, *logBuffer) {
	t.Helper()
	g, err := snowflake.New(snowflake.Config{Layout: snowflake.DefaultLayout(), Node: 7, Reservation: snowflake.Unreserved()})
	if err != nil {
		t.Fatal(err)
	}
	s := &probeStore{MemStore: segmenttest.NewMemStore()}
	if err := s.CreateTag(context.Background(), "order", 1, 100, ""); err != nil {
		t.Fatal(err)
	}
	// Rows a store may hold whatever the rule for new tags says (an etcd
	// key that is not UTF-8, say).
	for _, tag := range tags {
		s.PutRow(segment.TagInfo{Tag: tag, Next: 1, Step: 100, Delta: 1})
	}
	// A long MaxWait: a scheduling pause under -race on a busy machine
	// must not pass for an unavailable store.
	a, err := segment.NewAllocator(s, segment.Config{MaxWait: 4 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close(context.Background()) })
	var auth *server.Auth
	if tokens {
		if auth, err = server.NewAuth([]server.Token{{Name: "all", Secret: "edges-secret-0123", Scopes: []string{"snowflake", "tag:*", "admin"}}}, server.Anonymous{}); err != nil {
			t.Fatal(err)
		}
	}
	logs := &logBuffer{}
	svc := &server.Config{Snowflake: g, Segments: a, SegmentStore: s, Auth: auth, MaxBatch: 1000,
		Log: slog.New(slog.NewTextHandler(logs, nil))}
	return svc, s, logs
}

// countingReader yields n bytes of 'a' and counts what was read of them.
type countingReader struct {
	n, read int64
}

func (r *countingReader) Read(p []byte) (int, error) {
	if r.read >= r.n {
		return 0, io.EOF
	}
	k := int(min(int64(len(p)), r.n-r.read))
	for i := range k {
		p[i] = 'a'
	}
	r.read += int64(k)
	return k, nil
}

// TestTinyidReadsAtMost64KiBBeforeTheToken: a Tinyid form body past
// 64 KiB gets 413 without its token being taken — here a valid token at
// its start, which the old code accepted after reading the whole body —
// and the server reads little more than the limit of a 300 MB body, with
// or without a declared length.
func TestTinyidReadsAtMost64KiBBeforeTheToken(t *testing.T) {
	svc, store, _ := edgeService(t, true)
	h := handlerOf(t, svc)
	for _, tc := range []struct {
		name     string
		declared bool
	}{
		{name: "declared length", declared: true},
		{name: "no declared length"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := &countingReader{n: 300 << 20}
			r := httptest.NewRequest("POST", "/tinyid/id/nextId", io.MultiReader(strings.NewReader("bizType=order&token=s&pad="), body))
			r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			r.ContentLength = -1
			if tc.declared {
				r.ContentLength = 300 << 20
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if w.Code != http.StatusRequestEntityTooLarge || !strings.Contains(w.Body.String(), "body_too_large") {
				t.Fatalf("POST of 300 MB: %d %q; want 413 body_too_large", w.Code, w.Body.String())
			}
			if body.read > server.DefaultMaxBody+32<<10 {
				t.Fatalf("read %d bytes of the body before answering; want at most about %d", body.read, server.DefaultMaxBody)
			}
		})
	}
	if n := store.tag.Load(); n != 0 {
		t.Fatalf("the store was asked for a tag %d times; want none", n)
	}
}

// TestTinyidMultipartRefused: a multipart body, which r.FormValue spools
// to disk before the token is checked, is refused with 415 unread — even
// with a valid token in it.
func TestTinyidMultipartRefused(t *testing.T) {
	svc, _, _ := edgeService(t, true)
	h := handlerOf(t, svc)
	var form bytes.Buffer
	mw := multipart.NewWriter(&form)
	_ = mw.WriteField("bizType", "order")
	_ = mw.WriteField("token", "edges-secret-0123")
	_ = mw.Close()
	for _, route := range []string{"/tinyid/id/nextId", "/tinyid/id/nextIdSimple", "/tinyid/id/nextSegmentId", "/tinyid/id/nextSegmentIdSimple"} {
		body := &countingReader{n: 1 << 20}
		r := httptest.NewRequest("POST", route, io.MultiReader(bytes.NewReader(form.Bytes()), body))
		r.Header.Set("Content-Type", mw.FormDataContentType())
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != http.StatusUnsupportedMediaType || body.read != 0 {
			t.Errorf("multipart POST %s: %d %q, %d bytes read; want 415 and nothing read", route, w.Code, w.Body.String(), body.read)
		}
	}
}

// TestTinyidFormStillWorks: the parameters in the query or in a small
// urlencoded body serve as before, the token among them.
func TestTinyidFormStillWorks(t *testing.T) {
	svc, _, _ := edgeService(t, true)
	h := handlerOf(t, svc)
	tests := []struct {
		name, method, target, body string
		status                     int
	}{
		{"query", "GET", "/tinyid/id/nextIdSimple?bizType=order", "", 200},
		{"form body", "POST", "/tinyid/id/nextIdSimple", "bizType=order&batchSize=2", 200},
		{"query and body", "POST", "/tinyid/id/nextIdSimple?batchSize=2", "bizType=order", 200},
		{"no token", "POST", "/tinyid/id/nextIdSimple", "bizType=order", 401},
		{"bad escape", "GET", "/tinyid/id/nextIdSimple?bizType=%zz", "", 400},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(tt.method, tt.target, strings.NewReader(tt.body))
			if tt.body != "" {
				r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			}
			if tt.name != "no token" {
				r.Header.Set("Authorization", "Bearer edges-secret-0123")
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if w.Code != tt.status {
				t.Fatalf("%s %s %q: %d %q; want %d", tt.method, tt.target, tt.body, w.Code, w.Body.String(), tt.status)
			}
		})
	}
}

// TestEveryBodyIsCapped: a body past MaxBody gets 413 on every route,
// read or not, declared or not.
func TestEveryBodyIsCapped(t *testing.T) {
	svc, _, _ := edgeService(t, false)
	svc.MaxBody = 1 << 10
	h := handlerOf(t, svc)
	big := `{"tag":"x","step":1,"description":"` + strings.Repeat("a", 2<<10) + `"}`
	tests := []struct {
		name, method, target string
		declared             bool
	}{
		{"admin JSON, declared", "POST", "/v1/segments", true},
		{"admin JSON, streamed", "POST", "/v1/segments", false},
		{"advance, streamed", "POST", "/v1/segments/order/advance", false},
		{"a route that reads no body", "GET", "/v1/snowflake/next", true},
		{"an open route", "GET", "/healthz", true},
		{"no route", "PUT", "/nowhere", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(tt.method, tt.target, strings.NewReader(big))
			r.Header.Set("Content-Type", "application/json")
			if !tt.declared {
				r.ContentLength = -1
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if w.Code != http.StatusRequestEntityTooLarge {
				t.Fatalf("%s %s with %d bytes: %d %q; want 413", tt.method, tt.target, len(big), w.Code, w.Body.String())
			}
		})
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("POST", "/v1/segments", strings.NewReader(`{"tag":"small","step":10}`)))
	if w.Code != http.StatusCreated {
		t.Fatalf("a body under the limit: %d %q; want 201", w.Code, w.Body.String())
	}
}

// TestOverlongTagNeverReachesTheStore: a tag past MaxTagBytes is refused
// with 400 on every entry before the allocator sees it, so unknown tags
// of any length cannot fill the allocator's memory of missing tags.
func TestOverlongTagNeverReachesTheStore(t *testing.T) {
	svc, store, _ := edgeService(t, false)
	h := handlerOf(t, svc)
	long := strings.Repeat("t", server.MaxTagBytes+1)
	for _, target := range []string{
		"/v1/segments/" + long + "/next",
		"/v1/segments/" + long + "/batch?count=1",
		"/api/segment/get/" + long,
		"/tinyid/id/nextId?bizType=" + long,
		"/tinyid/id/nextSegmentIdSimple?bizType=" + long,
	} {
		if w := get(h, "GET", target); w.Code != http.StatusBadRequest || !strings.Contains(w.Body.String(), "too long") {
			t.Errorf("GET %.40s…: %d %q; want 400 naming the limit", target, w.Code, w.Body.String())
		}
	}
	if w := get(h, "PATCH", "/v1/segments/"+long); w.Code != http.StatusBadRequest {
		t.Errorf("PATCH an over-long tag: %d", w.Code)
	}
	if n := store.tag.Load(); n != 0 {
		t.Fatalf("the store was asked for a tag %d times; want none", n)
	}
	// 128 characters of 4 bytes: within every store's tag rule.
	exact := url.PathEscape(strings.Repeat("\U0001F600", server.MaxTagBytes/4))
	if w := get(h, "GET", "/v1/segments/"+exact+"/next"); w.Code != http.StatusNotFound {
		t.Fatalf("a tag of exactly MaxTagBytes: %d %s, want 404 (looked up, unknown)", w.Code, w.Body.String())
	}
}

// TestInvalidUTF8TagNeverPanics: a tag that is not valid UTF-8 (which
// some stores accept) neither loses the ID drawn for it (the old code
// panicked in the issued-IDs counter: 503) nor kills the process on the
// next scrape of /metrics (a panic in the Prometheus collector).
func TestInvalidUTF8TagNeverPanics(t *testing.T) {
	svc, _, logs := edgeService(t, false, "bad\xff")
	h := handlerOf(t, svc)
	w := get(h, "GET", "/v1/segments/bad%FF/next")
	if w.Code >= 500 {
		t.Fatalf("next of an invalid UTF-8 tag: %d %q", w.Code, w.Body.String())
	}
	m := get(h, "GET", "/metrics")
	if m.Code != 200 {
		t.Fatalf("/metrics: %d %q", m.Code, m.Body.String())
	}
	if w.Code == 200 { // the tag rule of package segment may refuse it (400) instead
		for _, want := range []string{`firn_ids_issued_total{mode="segment",tag="bad\\xff"} 1`, `firn_segment_step{tag="bad\\xff"} 100`} {
			if !strings.Contains(m.Body.String(), want) {
				t.Errorf("metrics lack %s", want)
			}
		}
	}
	if strings.Contains(m.Body.String(), "firn_panics_total 1") || strings.Contains(logs.String(), "panic") {
		t.Fatalf("a panic was recovered: %s", logs.String())
	}
}

// TestPanicIs500AndLogged: a handler that panics (here a store's bug)
// answers 500 with the error shape, never a 503 that passes for an
// outage, and logs the panic with its stack.
func TestPanicIs500AndLogged(t *testing.T) {
	svc, _, logs := edgeService(t, false)
	h := handlerOf(t, svc)
	for _, target := range []string{"/v1/segments/boom/next", "/api/segment/get/boom", "/tinyid/id/nextId?bizType=boom"} {
		w := get(h, "GET", target)
		if w.Code != http.StatusInternalServerError || !strings.Contains(w.Body.String(), `"code":"internal"`) {
			t.Errorf("GET %s: %d %q; want 500 internal", target, w.Code, w.Body.String())
		}
	}
	log := logs.String()
	if !strings.Contains(log, "panic serving a request") || !strings.Contains(log, "store bug: boom") || !strings.Contains(log, "goroutine ") {
		t.Fatalf("the panic is not logged with its stack:\n%s", log)
	}
	if m := get(h, "GET", "/metrics"); !strings.Contains(m.Body.String(), "firn_panics_total 3") {
		t.Fatal("firn_panics_total does not count the panics")
	}
}

// TestReadyzDoesNoStoreIO: /readyz (open to anyone) and the gRPC health
// check answer from memory: no segment store call, even with tags in use
// and the store down.
func TestReadyzDoesNoStoreIO(t *testing.T) {
	svc, store, _ := edgeService(t, false)
	h := handlerOf(t, svc)
	if w := get(h, "GET", "/v1/segments/order/next"); w.Code != 200 {
		t.Fatalf("next: %d", w.Code)
	}
	store.Fail(errors.New("store down"))
	tag, tags := store.tag.Load(), store.tags.Load()
	for range 100 {
		if w := get(h, "GET", "/readyz"); w.Code != 200 {
			t.Fatalf("/readyz: %d %q; want ready (the node is held, its HWM ahead)", w.Code, w.Body.String())
		}
	}
	if store.tag.Load() != tag || store.tags.Load() != tags {
		t.Fatalf("/readyz called the store: Tag %d→%d, Tags %d→%d times", tag, store.tag.Load(), tags, store.tags.Load())
	}
}
