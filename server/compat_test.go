package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/firn-id/firn/segment"
	"github.com/firn-id/firn/segment/segmenttest"
	"github.com/firn-id/firn/server"
	"github.com/firn-id/firn/snowflake"
)

func TestLeafRoutes(t *testing.T) {
	h := newHandler(t, nil)
	w := get(h, "GET", "/api/segment/get/order")
	if w.Code != 200 || w.Body.String() != "1" {
		t.Fatalf("segment: %d %q, want Leaf's plain ID", w.Code, w.Body.String())
	}
	w = get(h, "GET", "/api/snowflake/get/anything")
	if _, err := strconv.ParseInt(w.Body.String(), 10, 64); w.Code != 200 || err != nil {
		t.Fatalf("snowflake: %d %q", w.Code, w.Body.String())
	}
	w = get(h, "GET", "/decodeSnowflakeId?snowflakeId=117986093458018304")
	var d map[string]string
	if err := json.Unmarshal(w.Body.Bytes(), &d); err != nil || d["workerId"] != "5" || d["sequenceId"] != "0" || !strings.Contains(d["timestamp"], "(2026-") {
		t.Fatalf("decode: %d %q", w.Code, w.Body.String())
	}
	if w := get(h, "GET", "/api/segment/get/nope"); w.Code != 404 {
		t.Fatalf("unknown key: %d %q; want 404 (Leaf answers 200 with an error)", w.Code, w.Body.String())
	}
	if w := get(h, "GET", "/decodeSnowflakeId?snowflakeId=x"); w.Code != 400 {
		t.Fatalf("bad decode: %d", w.Code)
	}
}

func TestTinyidRoutes(t *testing.T) {
	h := newHandler(t, nil)
	w := get(h, "GET", "/tinyid/id/nextId?bizType=order&token=t&batchSize=3")
	var resp struct {
		Data    []int64
		Code    int
		Message string
	}
	if err := json.Unmarshal(w.Body.Bytes(), &resp); err != nil || resp.Code != 200 || len(resp.Data) != 3 || resp.Data[0] != 1 {
		t.Fatalf("nextId: %d %q", w.Code, w.Body.String())
	}
	w = get(h, "GET", "/tinyid/id/nextIdSimple?bizType=order&token=t&batchSize=2")
	if w.Code != 200 || w.Body.String() != "4,5" {
		t.Fatalf("nextIdSimple: %d %q, want 4,5", w.Code, w.Body.String())
	}
	// A segment for an outside client is a fresh range of the store, not
	// a slice of the server's buffer (which holds 6..100).
	w = get(h, "GET", "/tinyid/id/nextSegmentIdSimple?bizType=order&token=t")
	parts := strings.Split(w.Body.String(), ",")
	if w.Code != 200 || len(parts) != 5 {
		t.Fatalf("nextSegmentIdSimple: %d %q", w.Code, w.Body.String())
	}
	cur, _ := strconv.ParseInt(parts[0], 10, 64)
	maxID, _ := strconv.ParseInt(parts[2], 10, 64)
	if cur+1 <= 100 || maxID-cur != 100 || parts[3] != "1" || parts[4] != "0" {
		t.Fatalf("segment %q overlaps the server's range or has the wrong size", w.Body.String())
	}
	w = get(h, "GET", "/tinyid/id/nextSegmentId?bizType=order&token=t")
	var seg struct {
		Data struct{ CurrentID, MaxID int64 }
		Code int
	}
	if err := json.Unmarshal(w.Body.Bytes(), &seg); err != nil || seg.Code != 200 || seg.Data.CurrentID != maxID {
		t.Fatalf("nextSegmentId: %q, want a range right after %d", w.Body.String(), maxID)
	}
	for _, target := range []string{"/tinyid/id/nextId?token=t", "/tinyid/id/nextId?bizType=order&batchSize=0", "/tinyid/id/nextId?bizType=order&batchSize=100001"} {
		w := get(h, "GET", target)
		var e struct{ Code int }
		if w.Code != 400 || json.Unmarshal(w.Body.Bytes(), &e) != nil || e.Code != 6 {
			t.Errorf("%s: %d %q; want 400 with Tinyid's error envelope", target, w.Code, w.Body.String())
		}
	}
	if w := get(h, "GET", "/tinyid/id/nextId?bizType=nope"); w.Code != 404 {
		t.Errorf("unknown bizType: %d", w.Code)
	}
}

// TestTinyidSegmentOfAnExhaustedTag: a tag whose counter is near the
// largest int64 hands an outside client no range (which it would issue
// from, wrapping), but a 503.
func TestTinyidSegmentOfAnExhaustedTag(t *testing.T) {
	g, _ := snowflake.New(snowflake.Config{Reservation: snowflake.Unreserved()})
	s := segmenttest.NewMemStore()
	if err := s.CreateTag(context.Background(), "top", segment.MaxEnd-5, 100, ""); err != nil {
		t.Fatal(err)
	}
	a, _ := segment.NewAllocator(s, segment.Config{})
	t.Cleanup(func() { a.Close(context.Background()) })
	h := handlerOf(t, &server.Config{Snowflake: g, Segments: a, SegmentStore: s})
	for _, route := range []string{"/tinyid/id/nextSegmentId?bizType=top", "/tinyid/id/nextSegmentIdSimple?bizType=top"} {
		if w := get(h, "GET", route); w.Code != 503 || !strings.Contains(w.Body.String(), "exhausted") {
			t.Fatalf("%s: %d %q; want 503 naming the exhausted tag", route, w.Code, w.Body.String())
		}
	}
}

// TestLeafRoutesTakeAnyMethod: Leaf maps its routes with @RequestMapping
// and no method (LeafController, LeafMonitorController), so a client that
// POSTs gets an ID as with GET, not 405.
func TestLeafRoutesTakeAnyMethod(t *testing.T) {
	h := newHandler(t, nil)
	for _, m := range []string{"GET", "POST", "PUT", "PATCH", "DELETE"} {
		if w := get(h, m, "/api/segment/get/order"); w.Code != 200 {
			t.Errorf("%s /api/segment/get/order = %d %s", m, w.Code, w.Body.String())
		}
		if w := get(h, m, "/api/snowflake/get/x"); w.Code != 200 {
			t.Errorf("%s /api/snowflake/get/x = %d %s", m, w.Code, w.Body.String())
		}
		if w := get(h, m, "/decodeSnowflakeId?snowflakeId=1"); w.Code != 200 {
			t.Errorf("%s /decodeSnowflakeId = %d %s", m, w.Code, w.Body.String())
		}
	}
}

// TestCompatRoutesAreCounted: IDs issued through Leaf's and Tinyid's
// routes count in firn_ids_issued_total as firn's own do.
func TestCompatRoutesAreCounted(t *testing.T) {
	h := newHandler(t, nil)
	for _, target := range []string{"/api/snowflake/get/x", "/api/segment/get/order", "/tinyid/id/nextId?bizType=order&batchSize=3"} {
		if w := get(h, "GET", target); w.Code != http.StatusOK {
			t.Fatalf("%s: %d %s", target, w.Code, w.Body)
		}
	}
	m := get(h, "GET", "/metrics").Body.String()
	for _, want := range []string{`firn_ids_issued_total{mode="snowflake",tag=""} 1`, `firn_ids_issued_total{mode="segment",tag="order"} 4`} {
		if !strings.Contains(m, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}

// TestLeafFailuresAreOneTextForm: with snowflake mode off, every failure
// of a Leaf route — the snowflake route's 503, an unknown or oversized
// key, a bad ID to decode, a refused request — is plain text the browser
// must not sniff, as Leaf's two ID routes fail through one method; and
// decoding, which needs no node, answers with the configured layout.
func TestLeafFailuresAreOneTextForm(t *testing.T) {
	s := segmenttest.NewMemStore()
	a, err := segment.NewAllocator(s, segment.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close(context.Background()) })
	auth, err := server.NewAuth([]server.Token{{Name: "t", Secret: "leaf-secret-0123", Scopes: []string{"snowflake", "tag:*"}}}, server.Anonymous{})
	if err != nil {
		t.Fatal(err)
	}
	layout := snowflake.DefaultLayout()
	h := handlerOf(t, &server.Config{Layout: &layout, Segments: a, SegmentStore: s, Auth: auth})
	bearer := []string{"Authorization", "Bearer leaf-secret-0123"}
	w := get(h, "GET", "/decodeSnowflakeId?snowflakeId=117986093458018304", bearer...)
	var d map[string]string
	if err := json.Unmarshal(w.Body.Bytes(), &d); w.Code != 200 || err != nil || d["workerId"] != "5" {
		t.Fatalf("decode with snowflake off: %d %q; want 200 and the parts", w.Code, w.Body.String())
	}
	for _, tt := range []struct {
		target string
		header []string
		status int
	}{
		{"/api/snowflake/get/order", bearer, 503},
		{"/api/segment/get/nope", bearer, 404},
		{"/api/segment/get/" + strings.Repeat("k", 600), bearer, 400},
		{"/decodeSnowflakeId?snowflakeId=%3Cscript%3E", bearer, 400},
		{"/api/snowflake/get/order", nil, 401},
		{"/api/segment/get/order", nil, 401},
		{"/decodeSnowflakeId?snowflakeId=1", nil, 401},
	} {
		w := get(h, "GET", tt.target, tt.header...)
		ct, sniff, body := w.Header().Get("Content-Type"), w.Header().Get("X-Content-Type-Options"), w.Body.String()
		if w.Code != tt.status || !strings.HasPrefix(ct, "text/plain") || sniff != "nosniff" || strings.HasPrefix(body, "{") {
			t.Errorf("%s: %d, Content-Type %q, X-Content-Type-Options %q, %q; want %d, plain text, nosniff",
				tt.target[:min(len(tt.target), 40)], w.Code, ct, sniff, body, tt.status)
		}
	}
}
