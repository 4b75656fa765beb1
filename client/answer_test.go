package client_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/firn-id/firn/client"
)

// TestJSONAnswerNotOfTheShape: a 200 whose body is null, {}, lacks a
// field every server writes, or writes an ID in another form than the
// server's (leading zeros) is refused with bad_answer naming the server
// and the route, never returned as a number the server never gave (firn
// tag advance --server printed "next ID 0").
func TestJSONAnswerNotOfTheShape(t *testing.T) {
	for _, tc := range []struct{ name, body string }{
		{"null", "null"},
		{"empty object", "{}"},
		{"no next", `{"tag":"order"}`},
		{"next null", `{"tag":"order","next":null}`},
		{"leading zeros", `{"tag":"order","next":"0042"}`},
		{"plus sign", `{"tag":"order","next":"+42"}`},
		{"another case", `{"tag":"order","next":"42","NEXT":"7"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = w.Write([]byte(tc.body))
			}))
			defer hs.Close()
			c := newHTTPClient(t, client.Config{Endpoints: []string{hs.URL}, Attempts: 1})
			next, err := c.Advance(context.Background(), "order", 42)
			if err == nil {
				t.Errorf("Advance on %s: next %d, no error", tc.body, next)
			}
			var e *client.Error
			if !errors.As(err, &e) || e.Code != "bad_answer" || e.Endpoint != hs.URL || !strings.Contains(err.Error(), "/v1/segments/order/advance") {
				t.Errorf("Advance on %s: %v; want a bad_answer error naming %s and the route", tc.body, err, hs.URL)
			}
			id, err := c.Tag("order").Reveal(context.Background(), 5)
			if err == nil {
				t.Errorf("Reveal on %s: plain ID %d, no error", tc.body, id)
			}
		})
	}
}

// TestJSONAnswerOfTheShape: what a server writes still decodes, an
// optional field absent or null included.
func TestJSONAnswerOfTheShape(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		next       int64
	}{
		{"advanced", `{"tag":"order","next":"42"}`, 42},
		{"a field the client does not know", `{"tag":"order","next":"43","since":"v2"}`, 43},
		{"negative", `{"tag":"order","next":"-1"}`, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = w.Write([]byte(tc.body))
			}))
			defer hs.Close()
			c := newHTTPClient(t, client.Config{Endpoints: []string{hs.URL}, Attempts: 1})
			if next, err := c.Advance(context.Background(), "order", 42); err != nil || next != tc.next {
				t.Errorf("Advance on %s = %d, %v; want %d", tc.body, next, err, tc.next)
			}
		})
	}
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`{"layout":"firn","fingerprint":"f","node":3,"max_batch":10,"opaque":null}`))
	}))
	defer hs.Close()
	c := newHTTPClient(t, client.Config{Endpoints: []string{hs.URL}, Attempts: 1})
	if info, err := c.Info(context.Background()); err != nil || info.Node != 3 {
		t.Errorf("Info with opaque null: %+v, %v", info, err)
	}
}
