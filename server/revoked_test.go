package server_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/firn-id/firn/segment"
	"github.com/firn-id/firn/segment/segmenttest"
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

// TestCreateTagAnswersTheStoredRow: the 201 of POST /v1/segments is the
// row as the store holds it, not the request: a site's class starts at
// or above its floor, whatever first the request names.
func TestCreateTagAnswersTheStoredRow(t *testing.T) {
	m, err := segment.NewSiteMulti(segment.Residues{Values: 4, Stores: 1, Value: 2, Floor: 1000}, segmenttest.NewMemStore())
	if err != nil {
		t.Fatal(err)
	}
	a, err := segment.NewAllocator(m, segment.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close(context.Background()) })
	h := handlerOf(t, &server.Config{Snowflake: unreservedGenerator(t), Segments: a, SegmentStore: m})
	w := do(h, "POST", "/v1/segments", "", `{"tag":"orders","first":"7","step":64}`)
	if w.Code != http.StatusCreated || !strings.Contains(w.Body.String(), `"next":"1002"`) || !strings.Contains(w.Body.String(), `"delta":4,"remainder":2`) {
		t.Fatalf("POST /v1/segments in site value 2 of 4, floor 1000: %d %s; want 201 with the stored row, next 1002, 2 mod 4", w.Code, w.Body)
	}
}
