package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"google.golang.org/grpc/codes"

	"github.com/firn-id/firn/firnpb"
	"github.com/firn-id/firn/segment"
	"github.com/firn-id/firn/segment/segmenttest"
	"github.com/firn-id/firn/server"
)

func send(h http.Handler, method, target, body string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, target, strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// TestAdminCreateRunsTheTagRule runs the shared new-tag table through
// POST /v1/segments: a valid tag is created (201), an invalid one is 400.
// Cases that are not UTF-8 cannot travel in JSON (the decoder turns them
// into U+FFFD) and are left to the serving test below.
func TestAdminCreateRunsTheTagRule(t *testing.T) {
	a, err := segment.NewAllocator(segmenttest.NewMemStore(), segment.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close(context.Background()) })
	h := handlerOf(t, &server.Config{Snowflake: unreservedGenerator(t), Segments: a, SegmentStore: segmenttest.NewMemStore(), MaxBatch: 1000})
	for _, tc := range segmenttest.NewTagCases(segment.DefaultLimits) {
		if !utf8.ValidString(tc.Tag) {
			continue
		}
		body, _ := json.Marshal(map[string]any{"tag": tc.Tag, "step": 10})
		w := send(h, "POST", "/v1/segments", string(body))
		want := http.StatusCreated
		if !tc.Valid {
			want = http.StatusBadRequest
		}
		if w.Code != want {
			t.Errorf("%s: POST %s = %d %s; want %d", tc.Name, body, w.Code, w.Body, want)
		}
	}
}

// TestStepPastStepLimitIsBadRequest: PATCH accepted a step of 2^62 (200)
// on the old code, and the allocator's next doubling made it negative.
func TestStepPastStepLimitIsBadRequest(t *testing.T) {
	h := newHandler(t, nil)
	for _, step := range []int64{1 << 62, 3_000_000_000, segment.StepLimit + 1} {
		if w := send(h, "PATCH", "/v1/segments/order", fmt.Sprintf(`{"step":%d}`, step)); w.Code != http.StatusBadRequest {
			t.Errorf("PATCH step %d = %d %s; want 400", step, w.Code, w.Body)
		}
		if w := send(h, "POST", "/v1/segments", fmt.Sprintf(`{"tag":"big","step":%d}`, step)); w.Code != http.StatusBadRequest {
			t.Errorf("POST step %d = %d %s; want 400", step, w.Code, w.Body)
		}
	}
	if w := send(h, "PATCH", "/v1/segments/order", fmt.Sprintf(`{"step":%d}`, segment.StepLimit)); w.Code != http.StatusOK {
		t.Errorf("PATCH step StepLimit = %d %s; want 200", w.Code, w.Body)
	}
}

// TestServingRoutesRefuseATagNoRowCanBe: a tag that is not UTF-8 or longer
// than the store holds is a 400 naming the rule on the ID routes, Leaf's
// and Tinyid's included, never a 5xx.
func TestServingRoutesRefuseATagNoRowCanBe(t *testing.T) {
	h := newHandler(t, nil)
	for _, tag := range []string{"\xff", "order\xc3", strings.Repeat("x", 129)} {
		esc := url.PathEscape(tag)
		for _, target := range []string{
			"/v1/segments/" + esc + "/next",
			"/api/segment/get/" + esc,
			"/tinyid/id/nextId?bizType=" + url.QueryEscape(tag),
			"/tinyid/id/nextSegmentId?bizType=" + url.QueryEscape(tag),
		} {
			w := get(h, "GET", target)
			if w.Code != http.StatusBadRequest || !bytes.Contains(w.Body.Bytes(), []byte("printable")) {
				t.Errorf("GET %s = %d %s; want 400 naming the rule", target, w.Code, w.Body)
			}
		}
	}
}

// TestGRPCRefusesATagNoRowCanBe: the same over gRPC is InvalidArgument.
func TestGRPCRefusesATagNoRowCanBe(t *testing.T) {
	c := grpcClient(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := c.SegmentNext(ctx, &firnpb.SegmentRequest{Tag: strings.Repeat("x", 129)})
	if code(err) != codes.InvalidArgument {
		t.Fatalf("SegmentNext with a 129-character tag = %v; want InvalidArgument", err)
	}
}

// TestTinyidSegmentOfAHugeStepRow: a row whose step is 2^62 (written before
// the bound) gave an outside Tinyid client a loadingId that had wrapped
// negative (step·20 overflowed). It now gets a range of at most StepLimit,
// its loadingId inside it.
func TestTinyidSegmentOfAHugeStepRow(t *testing.T) {
	s := segmenttest.NewMemStore()
	s.PutRow(segment.TagInfo{Tag: "huge", Next: 1, Step: 1 << 62})
	a, err := segment.NewAllocator(s, segment.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close(context.Background()) })
	h := handlerOf(t, &server.Config{Snowflake: unreservedGenerator(t), Segments: a, SegmentStore: s})
	w := get(h, "GET", "/tinyid/id/nextSegmentId?bizType=huge")
	var resp struct {
		Data struct{ CurrentID, LoadingID, MaxID int64 }
	}
	if err := json.Unmarshal(w.Body.Bytes(), &resp); w.Code != http.StatusOK || err != nil {
		t.Fatalf("nextSegmentId = %d %s, %v", w.Code, w.Body, err)
	}
	d := resp.Data
	if d.LoadingID <= d.CurrentID || d.LoadingID > d.MaxID || d.MaxID-d.CurrentID > segment.StepLimit {
		t.Fatalf("segment %+v: want currentId < loadingId <= maxId, at most StepLimit wide", d)
	}
}
