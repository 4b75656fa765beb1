package server_test

import (
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/firn-id/firn/server"
)

// TestRevokedSiteIssuesNothing: once a site's process stopped issuing
// for good (its value released or taken), neither a snowflake ID nor a
// segment ID leaves it, though its generator and allocator still could:
// 503 not_serving naming why; decoding still answers.
func TestRevokedSiteIssuesNothing(t *testing.T) {
	var revoked atomic.Pointer[error]
	cfg := anonymousService(t, nil, server.Anonymous{})
	cfg.Site = "eu"
	cfg.Revoked = func() error {
		if err := revoked.Load(); err != nil {
			return *err
		}
		return nil
	}
	h := handlerOf(t, cfg)
	routes := []string{"/v1/snowflake/next", "/v1/segments/order/next", "/v1/segments/order/batch?count=3"}
	for _, route := range routes {
		if w := from(h, "127.0.0.1:1", "GET", route); w.Code != http.StatusOK {
			t.Fatalf("%s before the revocation: %d %s", route, w.Code, w.Body)
		}
	}
	why := errors.New("the site released its value")
	revoked.Store(&why)
	for _, route := range routes {
		w := from(h, "127.0.0.1:1", "GET", route)
		if w.Code != http.StatusServiceUnavailable || !strings.Contains(w.Body.String(), "not_serving") || !strings.Contains(w.Body.String(), "released its value") {
			t.Fatalf("%s after the revocation: %d %s; want 503 not_serving naming the release", route, w.Code, w.Body)
		}
	}
	if w := from(h, "127.0.0.1:1", "GET", "/v1/snowflake/decode/1"); w.Code != http.StatusOK {
		t.Fatalf("decode after the revocation: %d %s; want it answered", w.Code, w.Body)
	}
}
