package config_test

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/firn-id/firn/cmd/firn/internal/config"
	"github.com/firn-id/firn/segment"
)

const testKeyA = "000102030405060708090a0b0c0d0e0f"

// TestTagPermutations: each listed tag has its own permutation, the same
// on every call and in every process with the same settings, 53 bits wide
// for a JavaScript-safe tag; another tweak gives every tag another one.
func TestTagPermutations(t *testing.T) {
	key, js := filepath.Join(t.TempDir(), "key"), config.Segments{JavaScriptSafe: []string{"js"}}
	if err := os.WriteFile(key, []byte(testKeyA+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	perms, err := config.Opaque{Tags: []string{"a", "b", "js"}, KeyFile: key, Tweak: "t"}.TagPermutations(js.MaxID())
	if err != nil {
		t.Fatal(err)
	}
	again, _ := config.Opaque{Tags: []string{"a", "b", "js"}, KeyFile: key, Tweak: "t"}.TagPermutations(js.MaxID())
	other, _ := config.Opaque{Tags: []string{"a"}, KeyFile: key, Tweak: "u"}.TagPermutations(nil)
	if perms("c") != nil {
		t.Fatal("an unlisted tag is opaque")
	}
	seen := map[string]string{}
	for _, tag := range []string{"a", "b", "js"} {
		rec := segment.Recorded(perms(tag))
		if prev, ok := seen[rec]; ok {
			t.Fatalf("tags %s and %s share the permutation %s", prev, tag, rec)
		}
		seen[rec] = tag
		if segment.Recorded(again(tag)) != rec {
			t.Fatalf("tag %s: %s in one process, %s in another", tag, rec, segment.Recorded(again(tag)))
		}
		if want := map[bool]int{true: 53, false: 63}[tag == "js"]; perms(tag).Bits() != want {
			t.Fatalf("tag %s: %d bits, want %d", tag, perms(tag).Bits(), want)
		}
	}
	if segment.Recorded(other("a")) == segment.Recorded(perms("a")) {
		t.Fatal("another tweak gave tag a the same permutation")
	}
	x, _ := perms("a").Encode(12345)
	y, _ := perms("b").Encode(12345)
	if x == y {
		t.Fatal("tags a and b map ID 12345 alike")
	}
}

// TestTagPermutationsStayWithinTheirBound: with every tag opaque ("*"),
// permutations of 100,000 distinct names leave the heap within a few MB,
// and a tag's permutation is the same before and after the cache fills.
func TestTagPermutationsStayWithinTheirBound(t *testing.T) {
	key := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(key, []byte(testKeyA+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	perms, err := config.Opaque{Tags: []string{"*"}, KeyFile: key, Tweak: "t"}.TagPermutations(nil)
	if err != nil {
		t.Fatal(err)
	}
	first, _ := perms("order").Encode(12345)
	heap := heapInUse()
	for i := range 100_000 {
		if perms(fmt.Sprintf("made-up-%d", i)) == nil {
			t.Fatal("a tag is plain under \"*\"")
		}
	}
	if grown := heapInUse() - heap; grown > 8<<20 {
		t.Errorf("100,000 tags' permutations: the heap grew by %d bytes; want at most 8 MiB", grown)
	}
	for _, tag := range []string{"order", "made-up-99999", "after"} {
		a, _ := perms(tag).Encode(12345)
		b, _ := perms(tag).Encode(12345)
		if a != b {
			t.Fatalf("tag %s: two permutations", tag)
		}
	}
	if again, _ := perms("order").Encode(12345); again != first {
		t.Fatalf("tag order maps 12345 to %d, and to %d once the cache is full", first, again)
	}
}

// heapInUse is the heap's live bytes after a collection.
func heapInUse() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}
