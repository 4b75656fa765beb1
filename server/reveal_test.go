package server_test

import (
	"context"
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/firn-id/firn/opaque"
	"github.com/firn-id/firn/segment"
	"github.com/firn-id/firn/segment/segmenttest"
	"github.com/firn-id/firn/server"
)

// countingStore counts the store's answers about single tags.
type countingStore struct {
	*segmenttest.MemStore
	tagCalls atomic.Int64
}

func (s *countingStore) Tag(ctx context.Context, tag string) (segment.TagInfo, error) {
	s.tagCalls.Add(1)
	return s.MemStore.Tag(ctx, tag)
}

// TestRevealOfUnknownTagsIsBounded: with every tag opaque (opaque.tags:
// ["*"]), a reveal of a tag the store does not have answers 404, of a
// plain one 400, of an opaque one its plain ID; 100,000 reveals of
// distinct made-up names from one client ask the store at most
// RevealLookupRate times (the clock stands still in the bubble) and
// leave the heap within a few MB.
func TestRevealOfUnknownTagsIsBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		key := []byte("0123456789abcdef")
		perm := func(tag string) segment.Permutation {
			if tag == "plain" {
				return nil
			}
			p, err := opaque.New(key, []byte(tag), 63)
			if err != nil {
				panic(err)
			}
			return p
		}
		s := &countingStore{MemStore: segmenttest.NewMemStore()}
		a, err := segment.NewAllocator(s, segment.Config{Opaque: perm})
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close(context.Background())
		for _, tag := range []string{"secret", "plain"} {
			if err := a.CreateTag(t.Context(), tag, 1, 10, ""); err != nil {
				t.Fatal(err)
			}
		}
		auth, err := server.NewAuth([]server.Token{{Name: "ops", Secret: "reveal-secret-01", Scopes: []string{"reveal"}}}, server.Anonymous{})
		if err != nil {
			t.Fatal(err)
		}
		h := handlerOf(t, &server.Config{Segments: a, SegmentStore: s, Auth: auth})
		id, err := a.Next(t.Context(), "secret")
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			target string
			code   int
			want   string
		}{
			{fmt.Sprintf("/v1/segments/secret/reveal/%d", id), 200, `"id":"1"`},
			{"/v1/segments/plain/reveal/5", 400, "not opaque"},
			{"/v1/segments/nosuchtag/reveal/5", 404, "unknown_tag"},
		} {
			if w := getAs(h, c.target, "reveal-secret-01"); w.Code != c.code || !strings.Contains(w.Body.String(), c.want) {
				t.Fatalf("%s: %d %s; want %d with %q", c.target, w.Code, w.Body, c.code, c.want)
			}
		}

		before, heap := s.tagCalls.Load(), heapInUse()
		codes := map[int]int{}
		for i := range 100_000 {
			w := getAs(h, fmt.Sprintf("/v1/segments/made-up-%d/reveal/5", i), "reveal-secret-01")
			codes[w.Code]++
		}
		asked, grown := s.tagCalls.Load()-before, heapInUse()-heap
		if asked > server.RevealLookupRate || codes[http.StatusOK] > 0 || codes[http.StatusNotFound]+codes[http.StatusTooManyRequests] != 100_000 {
			t.Errorf("100,000 made-up tags: the store was asked %d times (want at most %d), answers %v (want only 404 and 429)",
				asked, server.RevealLookupRate, codes)
		}
		if grown > 8<<20 {
			t.Errorf("100,000 made-up tags: the heap grew by %d bytes; want at most 8 MiB", grown)
		}
	})
}

// heapInUse is the heap's live bytes after a collection.
func heapInUse() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}
