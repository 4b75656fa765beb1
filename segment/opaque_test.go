package segment_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/firn-id/firn/opaque"
	"github.com/firn-id/firn/segment"
	"github.com/firn-id/firn/segment/segmenttest"
)

func permutation(t *testing.T, key byte, tweak string, bits int) *opaque.Permutation {
	t.Helper()
	k := make([]byte, 32)
	k[0] = key
	p, err := opaque.New(k, []byte(tweak), bits)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// opaqueAllocator returns an allocator on s whose tags in perms are opaque.
func opaqueAllocator(t *testing.T, s segment.Store, perms map[string]segment.Permutation, maxID int64) *segment.Allocator {
	t.Helper()
	cfg := segment.Config{MaxWait: time.Second, Opaque: func(tag string) segment.Permutation {
		if p, ok := perms[tag]; ok {
			return p
		}
		return nil
	}}
	if maxID > 0 {
		cfg.MaxID = func(string) int64 { return maxID }
	}
	a, err := segment.NewAllocator(s, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close(context.Background()) })
	return a
}

func TestOpaqueTagIssuesUniqueImagesItReveals(t *testing.T) {
	s := segmenttest.NewMemStore()
	p := permutation(t, 1, "order", 63)
	a := opaqueAllocator(t, s, map[string]segment.Permutation{"order": p}, 0)
	if err := a.CreateTag(t.Context(), "order", 1, 100, ""); err != nil {
		t.Fatal(err)
	}
	seen := map[int64]bool{}
	var plain []int64
	take := func(id int64) {
		if id < 0 {
			t.Fatalf("opaque ID %d is negative", id)
		}
		if seen[id] {
			t.Fatalf("opaque ID %d issued twice", id)
		}
		seen[id] = true
		x, err := a.Reveal(t.Context(), "order", uint64(id))
		if err != nil {
			t.Fatal(err)
		}
		plain = append(plain, x)
	}
	for range 250 {
		id, err := a.Next(t.Context(), "order")
		if err != nil {
			t.Fatal(err)
		}
		take(id)
	}
	dst := make([]int64, 333)
	for range 3 {
		n, err := a.NextN(t.Context(), "order", dst)
		if err != nil || n != len(dst) {
			t.Fatalf("NextN = %d, %v", n, err)
		}
		for _, id := range dst {
			take(id)
		}
	}
	// Behind the permutation, the tag's plain IDs: 1, 2, 3… in order.
	for i, x := range plain {
		if x != int64(i)+1 {
			t.Fatalf("revealed ID %d is %d; want %d", i, x, i+1)
		}
	}
	// The images are not the plain IDs, nor ordered like them.
	rising := 0
	for i := 1; i < 250; i++ {
		id, _ := p.Encode(uint64(i + 1))
		prev, _ := p.Encode(uint64(i))
		if id > prev {
			rising++
		}
	}
	if rising < 75 || rising > 175 {
		t.Errorf("%d of 249 consecutive images rise; want about half", rising)
	}
	if info, err := s.Tag(t.Context(), "order"); err != nil || info.Opaque != segment.Recorded(p) {
		t.Fatalf("the store records %q, %v; want %q", info.Opaque, err, segment.Recorded(p))
	}
}

func TestOpaqueTagIsServedOnlyAsCreated(t *testing.T) {
	p := permutation(t, 1, "order", 63)
	tests := []struct {
		name    string
		created segment.Permutation // nil: plain
		served  segment.Permutation
	}{
		{"a plain server on an opaque tag", p, nil},
		{"an opaque server on a plain tag", nil, p},
		{"another key", p, permutation(t, 2, "order", 63)},
		{"another tweak", p, permutation(t, 1, "other", 63)},
		{"another width", permutation(t, 1, "order", 53), p},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := segmenttest.NewMemStore()
			if err := segment.CreateTag(t.Context(), s, "order", 1, 10, "", tt.created); err != nil {
				t.Fatal(err)
			}
			perms := map[string]segment.Permutation{}
			if tt.served != nil {
				perms["order"] = tt.served
			}
			a := opaqueAllocator(t, s, perms, 0)
			_, err := a.Next(t.Context(), "order")
			var pe *segment.PermutationError
			if !errors.As(err, &pe) || !errors.Is(err, segment.ErrPermutation) ||
				pe.Recorded != segment.Recorded(tt.created) || pe.Want != segment.Recorded(tt.served) {
				t.Fatalf("Next = %v; want a *PermutationError naming %q and %q", err, segment.Recorded(tt.created), segment.Recorded(tt.served))
			}
			if n := s.Reserves(); n != 0 {
				t.Fatalf("%d ranges reserved for a tag that cannot be served", n)
			}
		})
	}
}

// A record changed under a running allocator (a row edited by hand) stops
// the tag once its buffers run dry: no range recording another
// permutation is served.
func TestOpaqueRecordChangedMidLifeStopsTheTag(t *testing.T) {
	s := segmenttest.NewMemStore()
	p := permutation(t, 1, "order", 63)
	a := opaqueAllocator(t, s, map[string]segment.Permutation{"order": p}, 0)
	if err := a.CreateTag(t.Context(), "order", 1, 10, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Next(t.Context(), "order"); err != nil {
		t.Fatal(err)
	}
	s.EditOpaque("order", "")
	var err error
	for i := 0; i < 100 && err == nil; i++ {
		_, err = a.Next(t.Context(), "order")
	}
	if !errors.Is(err, segment.ErrPermutation) {
		t.Fatalf("after the record changed, Next = %v; want ErrPermutation once the buffers are used", err)
	}
}

func TestOpaqueTagNeedsAStoreThatRecordsIt(t *testing.T) {
	s := struct{ segment.Store }{segmenttest.NewMemStore()} // hides CreateTagOpaque
	err := segment.CreateTag(t.Context(), s, "order", 1, 10, "", permutation(t, 1, "order", 63))
	if !errors.Is(err, segment.ErrOpaqueUnsupported) {
		t.Fatalf("CreateTag = %v; want ErrOpaqueUnsupported", err)
	}
	if _, err := s.Tag(t.Context(), "order"); !errors.Is(err, segment.ErrUnknownTag) {
		t.Fatalf("Tag = %v; want the tag not created", err)
	}
}

func TestOpaqueNarrowSpaceNeedsABound(t *testing.T) {
	p := permutation(t, 1, "order", 53)
	s := segmenttest.NewMemStore()
	unbounded := opaqueAllocator(t, s, map[string]segment.Permutation{"order": p}, 0)
	if err := unbounded.CreateTag(t.Context(), "order", 1, 10, ""); !errors.Is(err, segment.ErrInvalid) {
		t.Fatalf("a 53-bit permutation with no bound: CreateTag = %v; want ErrInvalid", err)
	}
	wide := opaqueAllocator(t, s, map[string]segment.Permutation{"order": p}, 1<<53)
	if err := wide.CreateTag(t.Context(), "order", 1, 10, ""); !errors.Is(err, segment.ErrInvalid) {
		t.Fatalf("a 53-bit permutation bounded at 2^53: CreateTag = %v; want ErrInvalid", err)
	}
	a := opaqueAllocator(t, s, map[string]segment.Permutation{"order": p}, segment.JavaScriptSafe)
	if err := a.CreateTag(t.Context(), "order", segment.JavaScriptSafe-50, 10, ""); err != nil {
		t.Fatal(err)
	}
	seen := map[int64]bool{}
	for {
		id, err := a.Next(t.Context(), "order")
		if errors.Is(err, segment.ErrExhausted) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if id < 0 || id > segment.JavaScriptSafe || seen[id] {
			t.Fatalf("ID %d: outside [0, 2^53) or repeated", id)
		}
		seen[id] = true
	}
	if len(seen) != 51 {
		t.Fatalf("%d IDs up to the bound; want 51", len(seen))
	}
	// A plain tag beside it is not bound by the opaque one's space; a
	// tag the store does not have is unknown.
	if err := a.CreateTag(t.Context(), "other", 1, 10, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Reveal(t.Context(), "other", 1); !errors.Is(err, segment.ErrInvalid) {
		t.Fatalf("Reveal on a plain tag = %v; want ErrInvalid", err)
	}
	if _, err := a.Reveal(t.Context(), "nosuchtag", 1); !errors.Is(err, segment.ErrUnknownTag) {
		t.Fatalf("Reveal on a tag the store does not have = %v; want ErrUnknownTag", err)
	}
}

func TestOpaqueTagOnASet(t *testing.T) {
	stores := []*segmenttest.MemStore{segmenttest.NewMemStore(), segmenttest.NewMemStore()}
	m, err := segment.NewMulti(stores[0], stores[1])
	if err != nil {
		t.Fatal(err)
	}
	p := permutation(t, 1, "order", 63)
	a := opaqueAllocator(t, m, map[string]segment.Permutation{"order": p}, 0)
	if err := a.CreateTag(t.Context(), "order", 1, 10, ""); err != nil {
		t.Fatal(err)
	}
	for i, s := range stores {
		if info, err := s.Tag(t.Context(), "order"); err != nil || info.Opaque != segment.Recorded(p) || info.Remainder != int64(i) {
			t.Fatalf("store %d: %+v, %v; want remainder %d recording %q", i, info, err, i, segment.Recorded(p))
		}
	}
	seen := map[int64]bool{}
	for range 100 {
		id, err := a.Next(t.Context(), "order")
		if err != nil {
			t.Fatal(err)
		}
		if seen[id] {
			t.Fatalf("ID %d twice", id)
		}
		seen[id] = true
	}
	// A store of the set that has the tag plain: the set refuses to
	// complete it as opaque.
	lone := segmenttest.NewMemStore()
	if err := lone.CreateTagResidue(t.Context(), "user", 1, 10, 2, 0, ""); err != nil {
		t.Fatal(err)
	}
	m2, _ := segment.NewMulti(lone, segmenttest.NewMemStore())
	if err := segment.CreateTag(t.Context(), m2, "user", 1, 10, "", p); !errors.Is(err, segment.ErrPermutation) {
		t.Fatalf("completing a plain tag as opaque = %v; want ErrPermutation", err)
	}
}

// BenchmarkNextOpaque is BenchmarkNext on an opaque tag: one FF1
// permutation of 63 bits per ID on top of the plain path. Compare with
// BenchmarkNext and opaque's BenchmarkAESBlock in the same run:
// go test -run '^$' -bench 'Next$|NextOpaque|NextNOpaque' -count 6 ./segment/
func BenchmarkNextOpaque(b *testing.B) {
	a, ctx := opaqueBenchAllocator(b)
	b.ReportAllocs()
	var last int64
	for b.Loop() {
		id, err := a.Next(ctx, "order")
		if err != nil {
			b.Fatal(err)
		}
		last = id
	}
	sink.Store(last)
}

// BenchmarkNextNOpaque: batches of 100 from an opaque tag, per ID.
func BenchmarkNextNOpaque(b *testing.B) {
	a, ctx := opaqueBenchAllocator(b)
	dst := make([]int64, 100)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := a.NextN(ctx, "order", dst); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(dst)), "ns/id")
	sink.Store(dst[0])
}

func opaqueBenchAllocator(b *testing.B) (*segment.Allocator, context.Context) {
	k := make([]byte, 32)
	p, err := opaque.New(k, []byte("order"), 63)
	if err != nil {
		b.Fatal(err)
	}
	s := segmenttest.NewMemStore()
	a := newAllocator(b, s, segment.Config{MaxStep: segment.StepLimit, Opaque: func(string) segment.Permutation { return p }})
	ctx := context.Background()
	if err := a.CreateTag(ctx, "order", 1, segment.StepLimit, ""); err != nil {
		b.Fatal(err)
	}
	if _, err := a.Next(ctx, "order"); err != nil {
		b.Fatal(err)
	}
	return a, ctx
}

// BenchmarkOpaqueEncode is the permutation alone, in the same run as
// BenchmarkNextOpaque: what the tag's path adds is their difference.
func BenchmarkOpaqueEncode(b *testing.B) {
	p, err := opaque.New(make([]byte, 32), []byte("order"), 63)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	var x uint64
	for b.Loop() {
		y, err := p.Encode(x & (1<<63 - 1))
		if err != nil {
			b.Fatal(err)
		}
		x = y + 1
	}
	sink.Store(int64(x))
}

// TestCheckTagsRefusesAnotherPermutation: before serving, CheckTags
// refuses every tag whose row records another permutation than the
// allocator's configuration gives it — opaque there and plain here, plain
// there and opaque here, another key — naming each, and passes a store
// whose tags all agree. firn serve refuses to start on it; a program
// that embeds the allocator gets the same check.
func TestCheckTagsRefusesAnotherPermutation(t *testing.T) {
	s := segmenttest.NewMemStore()
	k1, k2 := permutation(t, 1, "order", 63), permutation(t, 2, "order", 63)
	creator := opaqueAllocator(t, s, map[string]segment.Permutation{"order": k1, "user": k1}, 0)
	for _, tag := range []string{"order", "user", "plain"} {
		if err := creator.CreateTag(t.Context(), tag, 1, 100, ""); err != nil {
			t.Fatal(err)
		}
	}
	if err := creator.CheckTags(t.Context()); err != nil {
		t.Fatalf("CheckTags of the configuration that created the tags = %v", err)
	}
	other := opaqueAllocator(t, s, map[string]segment.Permutation{"order": k2, "plain": k1}, 0)
	err := other.CheckTags(t.Context())
	if !errors.Is(err, segment.ErrPermutation) {
		t.Fatalf("CheckTags with other permutations = %v; want ErrPermutation", err)
	}
	for _, tag := range []string{`"order"`, `"user"`, `"plain"`} {
		if !strings.Contains(err.Error(), tag) {
			t.Errorf("CheckTags does not name %s: %v", tag, err)
		}
	}
}

// slowTags is a store that lists its tags only when ctx ends.
type slowTags struct{ segment.Store }

func (slowTags) Tags(ctx context.Context) ([]segment.TagInfo, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

// TestStartCheckTags: the background check brings CheckTags's answer,
// and a store that does not list its tags within the bound ends it with
// the deadline's error (its tags are checked on first use instead).
func TestStartCheckTags(t *testing.T) {
	s := segmenttest.NewMemStore()
	k1, k2 := permutation(t, 1, "order", 63), permutation(t, 2, "order", 63)
	creator := opaqueAllocator(t, s, map[string]segment.Permutation{"order": k1}, 0)
	if err := creator.CreateTag(t.Context(), "order", 1, 100, ""); err != nil {
		t.Fatal(err)
	}
	if err := <-creator.StartCheckTags(t.Context(), time.Minute); err != nil {
		t.Errorf("StartCheckTags of the creating configuration = %v", err)
	}
	other := opaqueAllocator(t, s, map[string]segment.Permutation{"order": k2}, 0)
	if err := <-other.StartCheckTags(t.Context(), time.Minute); !errors.Is(err, segment.ErrPermutation) {
		t.Errorf("StartCheckTags with another permutation = %v; want ErrPermutation", err)
	}
	slow := opaqueAllocator(t, slowTags{s}, nil, 0)
	if err := <-slow.StartCheckTags(t.Context(), 10*time.Millisecond); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("StartCheckTags of a slow store = %v; want DeadlineExceeded", err)
	}
}
