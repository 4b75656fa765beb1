package server

import (
	"net/http/httptest"
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
			if got := r.PathValue(name); got != want {
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
