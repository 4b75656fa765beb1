package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/oklog/ulid/v2"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/firn-id/firn/firnpb"
	"github.com/firn-id/firn/segment"
	"github.com/firn-id/firn/segment/segmenttest"
	"github.com/firn-id/firn/server"
	"github.com/firn-id/firn/snowflake"
	"github.com/firn-id/firn/wide"
)

// TestWideRoutes: the UUID and ULID routes answer IDs of the node's
// generator (node 7), increasing across single and batch requests, in
// JSON and text; the decoder takes them and other systems' IDs apart.
func TestWideRoutes(t *testing.T) {
	h := newHandler(t, nil)
	l := snowflake.DefaultLayout()
	var got []string
	for _, target := range []string{"/v1/uuid/next", "/v1/uuid/batch?count=50", "/v1/uuid/next?format=text", "/v1/uuid/batch?count=3&format=text"} {
		got = append(got, wideIDs(t, h, target)...)
	}
	if len(got) != 1+50+1+3 || !slices.IsSorted(got) || len(slices.Compact(slices.Clone(got))) != len(got) {
		t.Fatalf("UUIDs not unique and increasing: %v", got)
	}
	for _, s := range got {
		p, err := wide.DecodeUUID(l, uuid.MustParse(s))
		if err != nil || p.Node != 7 {
			t.Fatalf("UUID %s: node %d, %v; want node 7", s, p.Node, err)
		}
	}
	got = got[:0]
	for _, target := range []string{"/v1/ulid/next", "/v1/ulid/batch?count=50", "/v1/ulid/batch?count=2&format=text"} {
		got = append(got, wideIDs(t, h, target)...)
	}
	if len(got) != 53 || !slices.IsSorted(got) {
		t.Fatalf("ULIDs not increasing: %v", got)
	}
	p, err := wide.DecodeULID(l, ulid.MustParse(got[0]))
	if err != nil || p.Node != 7 {
		t.Fatalf("ULID %s: node %d, %v; want node 7", got[0], p.Node, err)
	}

	w := get(h, "GET", "/v1/wide/decode/"+got[0])
	var d struct {
		Form string
		Firn *struct {
			ID   string
			Node map[string]uint64
		}
	}
	if err := json.Unmarshal(w.Body.Bytes(), &d); err != nil || w.Code != 200 || d.Form != "ulid" || d.Firn == nil || d.Firn.Node["node"] != 7 {
		t.Fatalf("decode of the server's ULID: %d %s", w.Code, w.Body.String())
	}
}

// wideIDs requests target and returns its IDs, JSON or text.
func wideIDs(t *testing.T, h http.Handler, target string) []string {
	t.Helper()
	w := get(h, "GET", target)
	if w.Code != 200 {
		t.Fatalf("%s: %d %s", target, w.Code, w.Body.String())
	}
	if strings.Contains(target, "format=text") {
		return strings.Fields(w.Body.String())
	}
	var v struct {
		ID  string
		IDs []string
	}
	if err := json.Unmarshal(w.Body.Bytes(), &v); err != nil {
		t.Fatalf("%s: %v: %s", target, err, w.Body.String())
	}
	if v.ID != "" {
		return []string{v.ID}
	}
	return v.IDs
}

func TestWideRefusals(t *testing.T) {
	h := newHandler(t, nil) // MaxBatch 1000
	for _, tc := range []struct {
		target string
		status int
		code   string
	}{
		{"/v1/uuid/next?format=number", 400, "a UUID or ULID is not a number"},
		{"/v1/ulid/batch?count=2&format=number", 400, "not a number"},
		{"/v1/uuid/batch", 400, "count is required"},
		{"/v1/ulid/batch?count=1001", 400, "1 to 1000"},
		{"/v1/uuid/batch?count=0", 400, "1 to 1000"},
		{"/v1/wide/decode/hello", 400, "bad_request"},
		{"/v1/wide/decode/017F22E2-79B0-7CC3-98C4-DC0C0C07398G", 400, "bad_request"},
	} {
		t.Run(tc.target, func(t *testing.T) {
			w := get(h, "GET", tc.target)
			if w.Code != tc.status || !strings.Contains(w.Body.String(), tc.code) {
				t.Fatalf("%d %s; want %d %s", w.Code, w.Body.String(), tc.status, tc.code)
			}
		})
	}
}

// TestWideDecodeForms: each form's parts over the API; a UUIDv7 of another
// generator on no tick of the layout has no firn part.
func TestWideDecodeForms(t *testing.T) {
	h := newHandler(t, nil)
	for _, tc := range []struct {
		id, form, field, value string
		unixMS                 int64
	}{
		{"017F22E2-79B0-7CC3-98C4-DC0C0C07398F", "uuid", "rand_a", "cc3", 1645557742000},
		{"01ARYZ6S410000000000000000", "ulid", "randomness", "00000000000000000000", 1469918176385},
		{"0ujtsYcgvSTl8PAuAdqWYSMnLOv", "ksuid", "timestamp", "107608047", 1507608047000},
		{"9m4e2mr0ui3e8a215n4g", "xid", "counter", "4271561", 1300816219000},
		{"80000000aabbccddee000001", "objectid", "counter", "1", 2147483648000},
	} {
		t.Run(tc.form, func(t *testing.T) {
			w := get(h, "GET", "/v1/wide/decode/"+tc.id)
			var d struct {
				ID     string
				Form   string
				UnixMS int64 `json:"unix_ms"`
				Fields map[string]string
				Firn   any
			}
			if err := json.Unmarshal(w.Body.Bytes(), &d); err != nil || w.Code != 200 {
				t.Fatalf("%d %s", w.Code, w.Body.String())
			}
			if d.ID != tc.id || d.Form != tc.form || d.Fields[tc.field] != tc.value || d.UnixMS != tc.unixMS {
				t.Fatalf("got %s", w.Body.String())
			}
			if d.Firn != nil && tc.form != "uuid" && tc.form != "ulid" {
				t.Fatalf("a %s has a firn part: %s", tc.form, w.Body.String())
			}
		})
	}
}

func TestWideSnowflakeOff(t *testing.T) {
	s := segmenttest.NewMemStore()
	a, err := segment.NewAllocator(s, segment.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close(context.Background()) })
	h := handlerOf(t, &server.Config{Segments: a, SegmentStore: s})
	for _, target := range []string{"/v1/uuid/next", "/v1/ulid/batch?count=2", "/v1/wide/decode/9m4e2mr0ui3e8a215n4g"} {
		if w := get(h, "GET", target); w.Code != 503 || !strings.Contains(w.Body.String(), "snowflake_off") {
			t.Errorf("%s on a server of segments only: %d %s", target, w.Code, w.Body.String())
		}
	}
	conn := serveGRPC(t, &server.Config{Segments: a, SegmentStore: s})
	_, err = firnpb.NewFirnClient(conn).WideBatch(context.Background(), &firnpb.WideBatchRequest{Form: firnpb.WideForm_WIDE_FORM_UUID, Count: 1})
	if status.Code(err) != codes.Unavailable {
		t.Fatalf("gRPC WideBatch on a server of segments only: %v, want Unavailable", err)
	}
}

// TestWideBatchGRPC: WideBatch answers the node's UUIDs and ULIDs,
// increasing across calls and forms sharing one generator, and refuses a
// request without a form or count.
func TestWideBatchGRPC(t *testing.T) {
	g, err := snowflake.New(snowflake.Config{Node: 7, Reservation: snowflake.Unreserved()})
	if err != nil {
		t.Fatal(err)
	}
	fc := firnpb.NewFirnClient(serveGRPC(t, &server.Config{Snowflake: g, MaxBatch: 100}))
	ctx := context.Background()
	l := snowflake.DefaultLayout()
	var uuids []string
	for range 3 {
		resp, err := fc.WideBatch(ctx, &firnpb.WideBatchRequest{Form: firnpb.WideForm_WIDE_FORM_UUID, Count: 40})
		if err != nil || len(resp.Ids) != 40 {
			t.Fatalf("WideBatch uuid: %v", err)
		}
		uuids = append(uuids, resp.Ids...)
	}
	if !slices.IsSorted(uuids) || len(slices.Compact(slices.Clone(uuids))) != len(uuids) {
		t.Fatalf("UUIDs not unique and increasing: %v", uuids)
	}
	for _, s := range uuids {
		if p, err := wide.DecodeUUID(l, uuid.MustParse(s)); err != nil || p.Node != 7 || len(s) != 36 {
			t.Fatalf("UUID %s: node %d, %v", s, p.Node, err)
		}
	}
	resp, err := fc.WideBatch(ctx, &firnpb.WideBatchRequest{Form: firnpb.WideForm_WIDE_FORM_ULID, Count: 2})
	if err != nil || len(resp.Ids) != 2 {
		t.Fatalf("WideBatch ulid: %v", err)
	}
	if p, err := wide.DecodeULID(l, ulid.MustParse(resp.Ids[0])); err != nil || p.Node != 7 {
		t.Fatalf("ULID %s: node %d, %v", resp.Ids[0], p.Node, err)
	}
	for _, req := range []*firnpb.WideBatchRequest{
		{Count: 2},
		{Form: firnpb.WideForm_WIDE_FORM_UUID},
		{Form: firnpb.WideForm_WIDE_FORM_ULID, Count: 101},
		{Form: 9, Count: 1},
	} {
		if _, err := fc.WideBatch(ctx, req); status.Code(err) != codes.InvalidArgument {
			t.Errorf("WideBatch(%v): %v, want InvalidArgument", req, err)
		}
	}
}
