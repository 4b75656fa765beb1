package server_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/firn-id/firn/server"
)

// TestSegmentsOffSaysWhy: a server told why it serves no segments
// (Config.SegmentsOff) answers every segment route — a tag's, Leaf's and
// Tinyid's, the admin routes — 503 with that reason, so a program that
// embeds the server tells its clients what firn serve tells them; with
// the reason set it starts without a generator, and it refuses the
// reason beside an allocator.
func TestSegmentsOffSaysWhy(t *testing.T) {
	const why = "segments are off: name a shared store"
	srv := newServer(t, &server.Config{Snowflake: unreservedGenerator(t), SegmentsOff: why})
	for _, tc := range []struct{ method, target, body string }{
		{"GET", "/v1/segments/order/next", "segments_off"},
		{"GET", "/v1/segments/order/batch?count=2", "segments_off"},
		{"GET", "/api/segment/get/order", why},
		{"GET", "/tinyid/id/nextIdSimple?bizType=order", why},
		{"GET", "/v1/segments", "segments_off"},
		{"POST", "/v1/segments", "segments_off"},
	} {
		w := get(srv.Handler(), tc.method, tc.target)
		if w.Code != 503 || !strings.Contains(w.Body.String(), why) || !strings.Contains(w.Body.String(), tc.body) {
			t.Errorf("%s %s = %d %s; want 503 with %q and %q", tc.method, tc.target, w.Code, w.Body.String(), tc.body, why)
		}
	}
	if w := get(srv.Handler(), "GET", "/v1/snowflake/next"); w.Code != 200 {
		t.Errorf("snowflake beside segments off = %d %s", w.Code, w.Body.String())
	}
	if _, err := server.New(server.Config{SegmentsOff: why}); err != nil {
		t.Errorf("New with segments off and no generator = %v; want a server that says why", err)
	}
	if _, err := server.New(server.Config{}); !errors.Is(err, server.ErrConfig) {
		t.Errorf("New with nothing to serve and no reason = %v; want ErrConfig", err)
	}
}
