package server

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFastRoutesAgreeWithTheMux: for a request to every route, the fast
// table finds the very route the mux finds, or leaves the request to
// it; the ID routes are found by the table; and paths the mux would
// clean, unescape or redirect are left to the mux.
func TestFastRoutesAgreeWithTheMux(t *testing.T) {
	h := scopeServer(t).http
	for _, rt := range h.routes {
		method, path, _ := strings.Cut(rt.pattern, " ")
		target := strings.NewReplacer("{id}", "17", "{tag}", "order", "{key}", "order").Replace(path)
		r := httptest.NewRequest(method, target, nil)
		_, muxPattern := h.mux.Handler(r)
		fast := h.fast.find(r)
		if fast != nil && fast.pattern != muxPattern {
			t.Errorf("%s %s: fast route %s, the mux's %s", method, target, fast.pattern, muxPattern)
		}
		if name := rt.wildName(); fast != nil && name != "" {
			want := map[string]string{"id": "17"}[name]
			if want == "" {
				want = "order"
			}
			if got := pathValue(r, name); got != want {
				t.Errorf("%s %s: path value %s = %q, want %q", method, target, name, got, want)
			}
		}
		if rt.scope.ids && fast == nil {
			t.Errorf("%s: an ID route the fast table does not find", rt.pattern)
		}
	}
	for _, target := range []string{"/api/segment/get/a/../order", "//v1/snowflake/next", "/api/segment/get/a%2Fb",
		"/v1/snowflake/./next", "/v1/segments//next", "/api/segment/get/"} {
		if rt := h.fast.find(httptest.NewRequest("GET", target, nil)); rt != nil {
			t.Errorf("GET %s: fast route %s, want the mux to decide", target, rt.pattern)
		}
	}
	if rt := h.fast.find(httptest.NewRequest("HEAD", "/v1/snowflake/next", nil)); rt != nil {
		t.Errorf("HEAD: fast route %s, want the mux to decide", rt.pattern)
	}
}

// wildName is the name of the route's path wildcard, or "".
func (rt *routed) wildName() string {
	_, path, _ := strings.Cut(rt.pattern, " ")
	if i, j := strings.Index(path, "{"), strings.Index(path, "}"); i >= 0 && j > i {
		return path[i+1 : j]
	}
	return ""
}

// FuzzFastRoutes: for any method and path, a route the fast table finds
// is the mux's, and pathValue reads the value the mux sets.
func FuzzFastRoutes(f *testing.F) {
	h := scopeServer(f).http
	type seen struct{ pattern, value string }
	mux := http.NewServeMux()
	for _, rt := range h.routes {
		name := rt.wildName()
		mux.HandleFunc(rt.pattern, func(w http.ResponseWriter, r *http.Request) {
			w.(*muxRecorder).seen = seen{r.Pattern, r.PathValue(name)}
		})
	}
	for _, s := range []string{"/v1/segments/order/next", "/api/segment/get/a%2Fb", "/v1/snowflake/decode/17", "/api/snowflake/get/x.y",
		"/v1/segments/%6Frder/batch", "/v1/segments/or der/next", "/api/segment/get/..", "/v1/wide/decode/a/b"} {
		f.Add("GET", s)
	}
	f.Fuzz(func(t *testing.T, method, path string) {
		u, err := url.ParseRequestURI(path)
		if err != nil || method == "" || strings.ContainsAny(method, " \t\r\n/") {
			return
		}
		r := &http.Request{Method: method, URL: u, Host: "firn", Header: http.Header{}}
		rt := h.fast.find(r)
		if rt == nil {
			return
		}
		rec := &muxRecorder{ResponseRecorder: httptest.NewRecorder()}
		mr := &http.Request{Method: method, URL: u, Host: "firn", Header: http.Header{}}
		mux.ServeHTTP(rec, mr)
		if rec.seen.pattern != rt.pattern {
			t.Fatalf("%s %s: fast route %q, the mux's %q", method, path, rt.pattern, rec.seen.pattern)
		}
		if name := rt.wildName(); name != "" && pathValue(r, name) != rec.seen.value {
			t.Fatalf("%s %s: pathValue(%s) = %q, the mux's %q", method, path, name, pathValue(r, name), rec.seen.value)
		}
	})
}

// muxRecorder keeps what the mux's handler saw.
type muxRecorder struct {
	*httptest.ResponseRecorder
	seen struct{ pattern, value string }
}

// TestHandlersReadPathValuesThroughPathValue: a request the fast table
// routed has no path value set, so a handler that called
// Request.PathValue would read "" there. Only pathValue may call it.
func TestHandlersReadPathValuesThroughPathValue(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") || f == "fastroute.go" {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), ".PathValue(") {
			t.Errorf("%s calls PathValue: use pathValue(r, name), which also reads a fast-routed request's value", f)
		}
	}
}
