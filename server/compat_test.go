package server_test

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
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
