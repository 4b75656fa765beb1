package server_test

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/firn-id/firn/opaque"
	"github.com/firn-id/firn/segment"
	"github.com/firn-id/firn/segment/segmenttest"
	"github.com/firn-id/firn/server"
)

// opaqueTagServer serves tag "secret" opaque and "order" plain, with a
// token for tags and admin and one for reveal.
func opaqueTagServer(t *testing.T) (http.Handler, *segmenttest.MemStore, *opaque.Permutation) {
	t.Helper()
	p, err := opaque.New([]byte("0123456789abcdef"), []byte("secret"), 63)
	if err != nil {
		t.Fatal(err)
	}
	s := segmenttest.NewMemStore()
	a, err := segment.NewAllocator(s, segment.Config{Opaque: func(tag string) segment.Permutation {
		if tag == "secret" {
			return p
		}
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close(t.Context()) })
	auth, err := server.NewAuth([]server.Token{
		{Name: "app", Secret: "app-secret-01234", Scopes: []string{"tag:*", "range:*", "admin", "status"}},
		{Name: "ops", Secret: "reveal-secret-01", Scopes: []string{"reveal"}},
	}, server.Anonymous{})
	if err != nil {
		t.Fatal(err)
	}
	return handlerOf(t, &server.Config{Segments: a, SegmentStore: s, Auth: auth}), s, p
}

func TestOpaqueTagRoutes(t *testing.T) {
	h, s, p := opaqueTagServer(t)
	for _, tag := range []string{"secret", "order"} {
		w := do(h, http.MethodPost, "/v1/segments", "app-secret-01234", `{"tag":"`+tag+`","step":50}`)
		if w.Code != http.StatusCreated {
			t.Fatalf("create %s: %d %s", tag, w.Code, w.Body)
		}
	}
	if info, _ := s.Tag(t.Context(), "secret"); info.Opaque != segment.Recorded(p) {
		t.Fatalf("secret records %q; want %q", info.Opaque, segment.Recorded(p))
	}
	if info, _ := s.Tag(t.Context(), "order"); info.Opaque != "" {
		t.Fatalf("order records %q; want plain", info.Opaque)
	}
	w := getAs(h, "/v1/segments/secret/batch?count=120", "app-secret-01234")
	var batch struct{ IDs []string }
	if err := json.Unmarshal(w.Body.Bytes(), &batch); err != nil || len(batch.IDs) != 120 {
		t.Fatalf("batch: %d %s", w.Code, w.Body)
	}
	for _, target := range []string{"/v1/segments/secret/next", "/api/segment/get/secret"} {
		w := getAs(h, target, "app-secret-01234")
		id := strings.Trim(strings.TrimSpace(w.Body.String()), `"`)
		if strings.HasPrefix(id, "{") {
			var one struct{ ID string }
			_ = json.Unmarshal(w.Body.Bytes(), &one)
			id = one.ID
		}
		batch.IDs = append(batch.IDs, id)
	}
	for i, id := range batch.IDs {
		w := getAs(h, "/v1/segments/secret/reveal/"+id, "reveal-secret-01")
		var r struct{ Tag, ID, OpaqueID string }
		if err := json.Unmarshal(w.Body.Bytes(), &r); err != nil || w.Code != 200 {
			t.Fatalf("reveal %s: %d %s", id, w.Code, w.Body)
		}
		if r.ID != strconv.Itoa(i+1) {
			t.Fatalf("ID %d (%s) reveals %s; want %d: the tag's plain IDs in order", i, id, r.ID, i+1)
		}
		if id == r.ID {
			t.Fatalf("ID %s left plain", id)
		}
	}
	// The plain tag beside it stays plain.
	if w := getAs(h, "/v1/segments/order/next", "app-secret-01234"); !strings.Contains(w.Body.String(), `"1"`) {
		t.Fatalf("plain tag: %d %s; want its first ID, 1", w.Code, w.Body)
	}
	for _, c := range []struct {
		name, target, secret string
		code                 int
		errCode              string
	}{
		{"reveal needs scope reveal", "/v1/segments/secret/reveal/1", "app-secret-01234", 403, ""},
		{"reveal needs a token", "/v1/segments/secret/reveal/1", "", 401, ""},
		{"a plain tag reveals nothing", "/v1/segments/order/reveal/1", "reveal-secret-01", 400, "invalid"},
		{"no range of an opaque tag", "/tinyid/id/nextSegmentId?bizType=secret", "app-secret-01234", 400, "are opaque"},
		{"metrics need a scope", "/metrics", "", 401, ""},
	} {
		w := getAs(h, c.target, c.secret)
		if w.Code != c.code || !strings.Contains(w.Body.String(), c.errCode) {
			t.Errorf("%s: %d %s; want %d %s", c.name, w.Code, w.Body, c.code, c.errCode)
		}
	}
	// The status page leaves the opaque tag's ranges, plain IDs, out.
	w = getAs(h, "/v1/status", "app-secret-01234")
	var st struct {
		Tags []struct {
			Tag     string
			Opaque  bool
			Current struct{ Start, End int64 }
		}
		Rate struct{ PerSecond map[string][]uint64 } `json:"rate"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &st); err != nil {
		t.Fatal(err)
	}
	for _, tg := range st.Tags {
		if tg.Tag == "secret" && (!tg.Opaque || tg.Current.End != 0) {
			t.Errorf("status shows secret as %+v; want opaque with no range", tg)
		}
		if tg.Tag == "order" && (tg.Opaque || tg.Current.End == 0) {
			t.Errorf("status shows order as %+v; want its plain range", tg)
		}
	}
	if _, ok := st.Rate.PerSecond["segment"]; ok {
		t.Errorf("status shows the segment rate beside an opaque tag")
	}
}

// A tag recorded opaque is refused by a server that would serve it plain:
// 503 opaque_mismatch, on the allocator's routes and Tinyid's range route.
func TestPlainServerRefusesAnOpaqueTag(t *testing.T) {
	s := segmenttest.NewMemStore()
	if err := s.CreateTagOpaque(t.Context(), "secret", 1, 10, 1, 0, "", "ff1:0123456789abcdef:0123456789ab/63"); err != nil {
		t.Fatal(err)
	}
	a, err := segment.NewAllocator(s, segment.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close(t.Context()) })
	h := handlerOf(t, &server.Config{Segments: a, SegmentStore: s})
	for _, target := range []string{"/v1/segments/secret/next", "/api/segment/get/secret", "/tinyid/id/nextSegmentId?bizType=secret&token=t"} {
		w := get(h, http.MethodGet, target)
		if w.Code != http.StatusServiceUnavailable || !strings.Contains(w.Body.String(), "opaque") {
			t.Errorf("%s: %d %s; want 503 naming the permutation", target, w.Code, w.Body)
		}
	}
	if n := s.Reserves(); n != 0 {
		t.Fatalf("%d ranges reserved of a tag this server must not serve", n)
	}
}
