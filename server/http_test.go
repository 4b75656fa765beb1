package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/firn-id/firn/firnpb"
	"github.com/firn-id/firn/segment"
	"github.com/firn-id/firn/segment/segmenttest"
	"github.com/firn-id/firn/server"
	"github.com/firn-id/firn/snowflake"
)

func newHandler(t testing.TB, ready func() error) http.Handler {
	t.Helper()
	return handlerOf(t, newConfig(t, ready))
}

// newConfig is newHandler's service: a snowflake generator on node 7 and
// the tag "order" of a memory segment store.
func newConfig(t testing.TB, ready func() error) *server.Config {
	t.Helper()
	g, err := snowflake.New(snowflake.Config{Layout: snowflake.DefaultLayout(), Node: 7, Reservation: snowflake.Unreserved()})
	if err != nil {
		t.Fatal(err)
	}
	s := segmenttest.NewMemStore()
	if err := s.CreateTag(context.Background(), "order", 1, 100, ""); err != nil {
		t.Fatal(err)
	}
	a, err := segment.NewAllocator(s, segment.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close(context.Background()) })
	return &server.Config{Snowflake: g, Segments: a, SegmentStore: s, Ready: ready, MaxBatch: 1000}
}

func get(h http.Handler, method, target string, header ...string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, target, nil)
	for i := 0; i+1 < len(header); i += 2 {
		r.Header.Set(header[i], header[i+1])
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func TestRoutes(t *testing.T) {
	h := newHandler(t, nil)
	tests := []struct {
		name, method, target string
		header               []string
		status               int
		body                 string // a substring
	}{
		{"snowflake next as a string", "GET", "/v1/snowflake/next", nil, 200, `{"id":"`},
		{"snowflake next as a number", "GET", "/v1/snowflake/next?format=number", nil, 200, `{"id":1`},
		{"snowflake next as text", "GET", "/v1/snowflake/next", []string{"Accept", "text/plain"}, 200, "\n"},
		{"snowflake batch", "GET", "/v1/snowflake/batch?count=3", nil, 200, `{"ids":["`},
		{"batch without count", "GET", "/v1/snowflake/batch", nil, 400, `"code":"bad_request"`},
		{"batch of 0", "GET", "/v1/snowflake/batch?count=0", nil, 400, "from 1 to 1000"},
		{"batch over the limit", "GET", "/v1/snowflake/batch?count=1001", nil, 400, "from 1 to 1000"},
		{"batch of words", "GET", "/v1/snowflake/batch?count=lots", nil, 400, `count \"lots\"`},
		{"bad format", "GET", "/v1/snowflake/next?format=xml", nil, 400, "format"},
		{"decode", "GET", "/v1/snowflake/decode/117986093458018304", nil, 200, `"node":{"node":5}`},
		{"decode junk", "GET", "/v1/snowflake/decode/12ab", nil, 400, "not a non-negative decimal"},
		{"decode negative", "GET", "/v1/snowflake/decode/-1", nil, 400, "not a non-negative decimal"},
		{"decode outside the layout", "GET", "/v1/snowflake/decode/18446744073709551615", nil, 400, "does not fit"},
		{"guess", "GET", "/v1/snowflake/guess/103270115826048975", nil, 200, `"ambiguous":true,"candidates":[{"layout":"mastodon","plausible":true`},
		{"guess junk", "GET", "/v1/snowflake/guess/0x5", nil, 400, "not a non-negative decimal"},
		{"guess over 64 bits", "GET", "/v1/snowflake/guess/18446744073709551616", nil, 400, "at most 64 bits"},
		{"segment next", "GET", "/v1/segments/order/next", nil, 200, `{"id":"1"}`},
		{"segment batch", "GET", "/v1/segments/order/batch?count=2&format=number", nil, 200, `{"ids":[`},
		{"unknown tag", "GET", "/v1/segments/nope/next", nil, 404, `"code":"unknown_tag"`},
		{"unknown tag says how to make one", "GET", "/v1/segments/nope/next", nil, 404, `create it with POST /v1/segments (scope admin) or firn tag create`},
		{"wrong method", "POST", "/v1/snowflake/next", nil, 405, `"code":"method_not_allowed"`},
		{"unknown route", "GET", "/v2/everything", nil, 404, `"code":"not_found"`},
		{"health", "GET", "/healthz", nil, 200, "ok"},
		{"ready", "GET", "/readyz", nil, 200, "ready"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := get(h, tt.method, tt.target, tt.header...)
			if w.Code != tt.status || !strings.Contains(w.Body.String(), tt.body) {
				t.Fatalf("%s %s = %d %q; want %d containing %q", tt.method, tt.target, w.Code, w.Body.String(), tt.status, tt.body)
			}
			if w.Code >= 400 {
				var e struct {
					Error struct{ Code, Message string }
				}
				if err := json.Unmarshal(w.Body.Bytes(), &e); err != nil || e.Error.Code == "" || e.Error.Message == "" {
					t.Fatalf("error body %q is not {\"error\":{\"code\",\"message\"}}", w.Body.String())
				}
			}
		})
	}
}

// TestUnknownTagOnLeafsRoute: Leaf's route answers in its plain text,
// saying how to create the tag as firn's own routes do.
func TestUnknownTagOnLeafsRoute(t *testing.T) {
	w := get(newHandler(t, nil), "GET", "/api/segment/get/nope")
	if w.Code != 404 || !strings.HasPrefix(w.Body.String(), `segment: tag "nope": unknown tag; create it with`) {
		t.Fatalf("GET /api/segment/get/nope = %d %q", w.Code, w.Body.String())
	}
}

func TestBatchIDsAreUniqueStrings(t *testing.T) {
	h := newHandler(t, nil)
	w := get(h, "GET", "/v1/snowflake/batch?count=1000")
	var body struct{ IDs []string }
	if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil || len(body.IDs) != 1000 {
		t.Fatalf("batch: %v, %d IDs", err, len(body.IDs))
	}
	seen := map[string]bool{}
	prev := int64(-1)
	for _, s := range body.IDs {
		id, err := strconv.ParseInt(s, 10, 64)
		if err != nil || id <= prev || seen[s] {
			t.Fatalf("ID %q after %d", s, prev)
		}
		seen[s], prev = true, id
	}
}

func TestNotReady(t *testing.T) {
	h := newHandler(t, func() error { return errors.New("lease lost: etcd unreachable") })
	w := get(h, "GET", "/readyz")
	if w.Code != 503 || !strings.Contains(w.Body.String(), "lease lost") {
		t.Fatalf("readyz = %d %q", w.Code, w.Body.String())
	}
}

func FuzzRequests(f *testing.F) {
	for _, s := range []string{"/v1/snowflake/batch?count=5", "/v1/snowflake/decode/123", "/v1/segments/order/batch?count=3&format=text", "/v1/segments/%00/next", "/readyz"} {
		f.Add("GET", s)
	}
	h := newHandler(f, nil)
	f.Fuzz(func(t *testing.T, method, target string) {
		if !strings.HasPrefix(target, "/") || strings.ContainsAny(target, " \r\n\t") || method == "" || strings.ContainsAny(method, " \r\n\t/") {
			return
		}
		r, err := http.NewRequest(method, "http://firn"+target, nil)
		if err != nil {
			return
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code >= 500 && w.Code != http.StatusServiceUnavailable {
			t.Fatalf("%s %s = %d %q", method, target, w.Code, w.Body.String())
		}
	})
}

func TestMetrics(t *testing.T) {
	h := newHandler(t, nil)
	get(h, "GET", "/v1/snowflake/batch?count=7")
	get(h, "GET", "/v1/segments/order/next")
	get(h, "GET", "/v1/snowflake/batch?count=0")
	w := get(h, "GET", "/metrics")
	for _, want := range []string{
		`firn_ids_issued_total{mode="snowflake",tag=""} 7`,
		`firn_ids_issued_total{mode="segment",tag="order"} 1`,
		`firn_request_duration_seconds_count{route="GET /v1/snowflake/batch"} 2`,
		`firn_request_failures_total{route="GET /v1/snowflake/batch",status="400"} 1`,
		`firn_requests_total{class="2xx",route="GET /v1/snowflake/batch"} 1`,
		`firn_requests_total{class="4xx",route="GET /v1/snowflake/batch"} 1`,
		`firn_requests_total{class="5xx",route="GET /v1/snowflake/batch"} 0`,
		`firn_segment_buffered_ids{tag="order"}`,
		`firn_segment_step{tag="order"} 100`,
		"firn_clock_offset_seconds",
		"firn_layout_remaining_seconds",
	} {
		if !strings.Contains(w.Body.String(), want) {
			t.Errorf("metrics lack %q", want)
		}
	}
}

// fakeLease is a held lease with a far HWM.
type fakeLease struct{ node uint64 }

func (l fakeLease) Node() uint64 { return l.node }
func (fakeLease) Limit() int64   { return 1 << 62 }
func (fakeLease) Err() error     { return nil }

// TestReplace: after a re-acquisition the service serves from the new
// generator, readiness and metrics follow it, and the lost lease it
// replaced is among the recent errors.
func TestReplace(t *testing.T) {
	g1, _ := snowflake.New(snowflake.Config{Node: 1, Reservation: snowflake.Unreserved()})
	lost := detailLease{node: 1, limit: 1 << 62, err: errors.New("nodeid: lease lost: no renewal confirmed for 9s")}
	svc := &server.Config{Snowflake: g1, Lease: lost}
	srv := newServer(t, svc)
	h := srv.Handler()
	g2, _ := snowflake.New(snowflake.Config{Node: 2, Reservation: snowflake.Unreserved()})
	srv.Replace(g2, fakeLease{2})
	w := get(h, "GET", "/v1/snowflake/next?format=text")
	id, _ := strconv.ParseUint(strings.TrimSpace(w.Body.String()), 10, 64)
	if p, err := snowflake.DefaultLayout().Decompose(id); err != nil || p.Node != 2 {
		t.Fatalf("after Replace the ID %d has node %d, want 2", id, p.Node)
	}
	if w := get(h, "GET", "/readyz"); w.Code != 200 {
		t.Fatalf("readyz after Replace: %d %s", w.Code, w.Body.String())
	}
	if w := get(h, "GET", "/metrics"); !strings.Contains(w.Body.String(), "firn_node 2") {
		t.Fatal("metrics do not follow the new lease")
	}
	// The loss stays on the status page, though no one read it while
	// the lease was lost.
	found := false
	for _, e := range readStatus(t, h).Errors {
		found = found || e.Source == "lease" && strings.Contains(e.Message, "nodeid: lease lost")
	}
	if !found {
		t.Fatal("the lost lease that Replace ended is not among the recent errors")
	}
}

// TestOneModeOff: a server of segments only answers snowflake requests
// 503 snowflake_off (HTTP and gRPC), and one without segments answers
// segment requests 503 segments_off; nothing panics, and both are ready.
func TestOneModeOff(t *testing.T) {
	s := segmenttest.NewMemStore()
	if err := s.CreateTag(context.Background(), "order", 1, 100, ""); err != nil {
		t.Fatal(err)
	}
	a, err := segment.NewAllocator(s, segment.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close(context.Background()) })
	if _, err := server.New(server.Config{}); !errors.Is(err, server.ErrConfig) {
		t.Fatalf("New with nothing to serve = %v, want ErrConfig", err)
	}
	segsOnly := newServer(t, &server.Config{Segments: a, SegmentStore: s})
	snowOnly := newServer(t, &server.Config{Snowflake: unreservedGenerator(t)})
	for _, tc := range []struct {
		name   string
		srv    *server.Server
		target string
		status int
		code   string
	}{
		{"segments only: snowflake", segsOnly, "/v1/snowflake/next", 503, "snowflake_off"},
		{"segments only: decode", segsOnly, "/v1/snowflake/decode/1", 503, "snowflake_off"},
		{"segments only: guess", segsOnly, "/v1/snowflake/guess/1", 503, "snowflake_off"},
		{"segments only: Leaf's snowflake", segsOnly, "/api/snowflake/get/x", 503, ""},
		{"segments only: a tag", segsOnly, "/v1/segments/order/next", 200, ""},
		{"segments only: ready", segsOnly, "/readyz", 200, ""},
		{"snowflake only: a tag", snowOnly, "/v1/segments/order/next", 503, "segments_off"},
		{"snowflake only: Tinyid", snowOnly, "/tinyid/id/nextIdSimple?bizType=order", 503, ""},
		{"snowflake only: snowflake", snowOnly, "/v1/snowflake/next", 200, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := get(tc.srv.Handler(), "GET", tc.target)
			if w.Code != tc.status || !strings.Contains(w.Body.String(), tc.code) {
				t.Fatalf("%s = %d %s; want %d %s", tc.target, w.Code, w.Body.String(), tc.status, tc.code)
			}
		})
	}
	conn := serveGRPC(t, &server.Config{Segments: a, SegmentStore: s})
	_, err = firnpb.NewFirnClient(conn).Next(context.Background(), &firnpb.NextRequest{})
	if status.Code(err) != codes.Unavailable {
		t.Fatalf("gRPC Next on a server of segments only = %v, want Unavailable", err)
	}
	if _, err := firnpb.NewFirnClient(conn).Decode(context.Background(), &firnpb.DecodeRequest{Id: 1}); status.Code(err) != codes.Unavailable {
		t.Fatalf("gRPC Decode on a server of segments only and no layout = %v, want Unavailable", err)
	}
	// The mode before the request's own checks, as for unary calls: a
	// batch far too large still answers Unavailable.
	st, err := firnpb.NewFirnClient(conn).Stream(context.Background(), &firnpb.StreamRequest{Batch: 1 << 30})
	if err == nil {
		_, err = st.Recv()
	}
	if status.Code(err) != codes.Unavailable {
		t.Fatalf("gRPC Stream of snowflake IDs on a server of segments only = %v, want Unavailable", err)
	}
	snowConn := serveGRPC(t, &server.Config{Snowflake: unreservedGenerator(t)})
	_, err = firnpb.NewFirnClient(snowConn).SegmentNext(context.Background(), &firnpb.SegmentRequest{Tag: "order"})
	if status.Code(err) != codes.Unavailable {
		t.Fatalf("gRPC SegmentNext on a server of snowflake only = %v, want Unavailable", err)
	}
}

// TestGRPCDecodeNeedsOnlyALayout: as HTTP's decode routes, gRPC's Decode
// answers on a server of segments only that knows its layout: decoding
// needs no node. Issuing still answers Unavailable.
func TestGRPCDecodeNeedsOnlyALayout(t *testing.T) {
	s := segmenttest.NewMemStore()
	a, err := segment.NewAllocator(s, segment.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close(context.Background()) })
	layout := snowflake.DefaultLayout()
	c := firnpb.NewFirnClient(serveGRPC(t, &server.Config{Layout: &layout, Segments: a, SegmentStore: s}))
	d, err := c.Decode(context.Background(), &firnpb.DecodeRequest{Id: 117986093458018304})
	if err != nil {
		t.Fatalf("gRPC Decode with snowflake off and a layout: %v", err)
	}
	if d.Node["node"] != 5 || d.Sequence != 0 {
		t.Fatalf("gRPC Decode = %+v; want node 5, sequence 0 (as /decodeSnowflakeId)", d)
	}
	if _, err := c.Next(context.Background(), &firnpb.NextRequest{}); status.Code(err) != codes.Unavailable {
		t.Fatalf("gRPC Next with snowflake off = %v, want Unavailable", err)
	}
}
