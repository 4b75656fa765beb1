// Package segmenttest holds the conformance suite every segment.Store
// passes, and an in-memory store for tests of code that uses one.
package segmenttest

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/firn-id/firn/segment"
)

// Options tunes the suite to a store.
type Options struct {
	// NoDescription: the store keeps no tag description (Tinyid's table).
	NoDescription bool
}

// RunStoreTests runs the conformance suite. newStore returns an empty
// store of its own (a table, a key prefix, a file); the suite calls it once
// per subtest. The cases of an optional interface (segment.Reclasser) are
// skipped, with a message, for a store that does not implement it.
func RunStoreTests(t *testing.T, newStore func(t *testing.T) segment.Store, opts ...Options) {
	var opt Options
	if len(opts) > 0 {
		opt = opts[0]
	}
	tests := []struct {
		name string
		run  func(t *testing.T, s segment.Store)
	}{
		{"create, read and list tags", func(t *testing.T, s segment.Store) {
			create(t, s, "order", 1, 100, "orders")
			create(t, s, "user", 1000, 10, "")
			if err := s.CreateTag(ctx(t), "order", 1, 1, ""); !errors.Is(err, segment.ErrTagExists) {
				t.Fatalf("second CreateTag: %v, want ErrTagExists", err)
			}
			info, err := s.Tag(ctx(t), "order")
			if err != nil || info.Next != 1 || info.Step != 100 || (info.Description != "orders" && !opt.NoDescription) {
				t.Fatalf("Tag(order) = %+v, %v", info, err)
			}
			tags, err := s.Tags(ctx(t))
			if err != nil || len(tags) != 2 || tags[0].Tag != "order" || tags[1].Tag != "user" {
				t.Fatalf("Tags = %+v, %v; want order, user", tags, err)
			}
		}},
		{"a counter near the top is exhausted, never wrapped", func(t *testing.T, s segment.Store) {
			create(t, s, "top", segment.MaxEnd-15, 10, "")
			r, err := s.Reserve(ctx(t), "top", 10)
			if err != nil || r.Check() != nil {
				t.Fatalf("Reserve below the top: %+v, %v", r, err)
			}
			if r, err := s.Reserve(ctx(t), "top", 10); !errors.Is(err, segment.ErrExhausted) {
				t.Fatalf("Reserve past the top: %+v, %v; want ErrExhausted", r, err)
			}
			info, err := s.Tag(ctx(t), "top")
			if err != nil || info.Next < segment.MaxEnd-15 {
				t.Fatalf("after the refusal: %+v, %v; want the counter where it was", info, err)
			}
		}},
		{"unknown tag", func(t *testing.T, s segment.Store) {
			if _, err := s.Tag(ctx(t), "nope"); !errors.Is(err, segment.ErrUnknownTag) {
				t.Fatalf("Tag: %v", err)
			}
			if _, err := s.Reserve(ctx(t), "nope", 10); !errors.Is(err, segment.ErrUnknownTag) {
				t.Fatalf("Reserve: %v", err)
			}
			if err := s.SetStep(ctx(t), "nope", 10); !errors.Is(err, segment.ErrUnknownTag) {
				t.Fatalf("SetStep: %v", err)
			}
			if _, err := s.Advance(ctx(t), "nope", 10); !errors.Is(err, segment.ErrUnknownTag) {
				t.Fatalf("Advance: %v", err)
			}
		}},
		{"ranges follow each other with the step asked", func(t *testing.T, s segment.Store) {
			create(t, s, "t", 1, 100, "")
			a := reserve(t, s, "t", 100)
			b := reserve(t, s, "t", 250)
			if a.Start != 1 || a.Len() != 100 || b.Start != a.End || b.Len() != 250 {
				t.Fatalf("ranges %+v then %+v; want 100 IDs from 1, then 250 after", a, b)
			}
			if info, _ := s.Tag(ctx(t), "t"); info.Next != b.End {
				t.Fatalf("tag's next %d after ranges ending %d", info.Next, b.End)
			}
		}},
		{"step changes are kept", func(t *testing.T, s segment.Store) {
			create(t, s, "t", 1, 100, "")
			if err := s.SetStep(ctx(t), "t", 5000); err != nil {
				t.Fatal(err)
			}
			if info, _ := s.Tag(ctx(t), "t"); info.Step != 5000 {
				t.Fatalf("step %d after SetStep(5000)", info.Step)
			}
		}},
		{"advance never lowers a counter", func(t *testing.T, s segment.Store) {
			create(t, s, "t", 1, 100, "")
			for _, c := range []struct{ give, want int64 }{{1_000_000, 1_000_000}, {5, 1_000_000}} {
				got, err := s.Advance(ctx(t), "t", c.give)
				if err != nil || got != c.want {
					t.Fatalf("Advance(%d) = %d, %v; want %d", c.give, got, err, c.want)
				}
			}
			if r := reserve(t, s, "t", 10); r.Start < 1_000_000 {
				t.Fatalf("range %+v after advancing to 1,000,000", r)
			}
		}},
		{"concurrent reservations never overlap", func(t *testing.T, s segment.Store) {
			create(t, s, "t", 1, 10, "")
			var mu sync.Mutex
			var got []segment.Range
			var wg sync.WaitGroup
			for range 8 {
				wg.Go(func() {
					for range 25 {
						r, err := s.Reserve(context.Background(), "t", 10)
						if err != nil {
							t.Errorf("Reserve: %v", err)
							return
						}
						mu.Lock()
						got = append(got, r)
						mu.Unlock()
					}
				})
			}
			wg.Wait()
			slices.SortFunc(got, func(a, b segment.Range) int { return int(a.Start - b.Start) })
			for i := 1; i < len(got); i++ {
				if got[i].Start < got[i-1].End {
					t.Fatalf("ranges %+v and %+v overlap", got[i-1], got[i])
				}
			}
			if len(got) != 200 {
				t.Fatalf("%d ranges, want 200", len(got))
			}
		}},
		{"tags compare byte for byte", func(t *testing.T, s segment.Store) {
			create(t, s, "order", 1, 100, "")
			// A case- or space-insensitive table cannot hold both: it says so.
			if err := s.CreateTag(ctx(t), "Order", 500, 100, ""); err != nil && !errors.Is(err, segment.ErrTagExists) {
				t.Fatalf("CreateTag(Order) beside order: %v; want it created or ErrTagExists", err)
			}
			for _, other := range []string{"ORDER", "order ", "Order "} {
				if _, err := s.Tag(ctx(t), other); !errors.Is(err, segment.ErrUnknownTag) {
					t.Errorf("Tag(%q) = %v; want ErrUnknownTag, not the row order", other, err)
				}
				if r, err := s.Reserve(ctx(t), other, 10); !errors.Is(err, segment.ErrUnknownTag) {
					t.Errorf("Reserve(%q) = %+v, %v; want ErrUnknownTag, not a range of order", other, r, err)
				}
				if err := s.SetStep(ctx(t), other, 7); !errors.Is(err, segment.ErrUnknownTag) {
					t.Errorf("SetStep(%q) = %v; want ErrUnknownTag", other, err)
				}
				if _, err := s.Advance(ctx(t), other, 1_000_000); !errors.Is(err, segment.ErrUnknownTag) {
					t.Errorf("Advance(%q) = %v; want ErrUnknownTag", other, err)
				}
			}
			if info, err := s.Tag(ctx(t), "order"); err != nil || info.Next != 1 || info.Step != 100 {
				t.Fatalf("Tag(order) = %+v, %v; want it untouched (next 1, step 100)", info, err)
			}
		}},
		{"values past the store's columns are invalid input, never written", func(t *testing.T, s segment.Store) {
			l := segment.LimitsOf(s)
			long := strings.Repeat("d", l.Description+1)
			for _, c := range []struct {
				name        string
				first, step int64
				desc        string
			}{
				{"a step past StepLimit", 1, segment.StepLimit + 1, ""},
				{"a step of 3,000,000,000", 1, 3_000_000_000, ""},
				{"a step under 1", 1, 0, ""},
				{"a first ID past MaxEnd", segment.MaxEnd + 1, 10, ""},
				{"a negative first ID", -1, 10, ""},
				{"a description past the column", 1, 10, long},
			} {
				if c.desc != "" && l.Description == 0 {
					continue // the store keeps no description: nothing to truncate
				}
				if err := s.CreateTag(ctx(t), "t", c.first, c.step, c.desc); !errors.Is(err, segment.ErrInvalid) {
					t.Errorf("%s: CreateTag = %v; want ErrInvalid", c.name, err)
				}
			}
			if _, err := s.Tag(ctx(t), "t"); !errors.Is(err, segment.ErrUnknownTag) {
				t.Fatalf("after refused creations, Tag(t) = %v; want ErrUnknownTag", err)
			}
			create(t, s, "t", 1, segment.StepLimit, strings.Repeat("d", l.Description))
			for _, step := range []int64{segment.StepLimit + 1, 3_000_000_000, 0} {
				if err := s.SetStep(ctx(t), "t", step); !errors.Is(err, segment.ErrInvalid) {
					t.Errorf("SetStep(%d) = %v; want ErrInvalid", step, err)
				}
			}
			info, err := s.Tag(ctx(t), "t")
			if err != nil || info.Step != segment.StepLimit || (!opt.NoDescription && len(info.Description) != l.Description) {
				t.Fatalf("Tag(t) = step %d, %d-byte description, %v; want StepLimit and %d bytes, as written", info.Step, len(info.Description), err, l.Description)
			}
		}},
		{"serving refuses a tag no store row can be", func(t *testing.T, s segment.Store) {
			l := segment.LimitsOf(s)
			for _, tag := range []string{"\xff", "order\xc3", strings.Repeat("a", l.Tag+1)} {
				if _, err := s.Tag(ctx(t), tag); !errors.Is(err, segment.ErrInvalid) {
					t.Errorf("Tag(%q) = %v; want ErrInvalid", tag, err)
				}
				if _, err := s.Reserve(ctx(t), tag, 10); !errors.Is(err, segment.ErrInvalid) {
					t.Errorf("Reserve(%q) = %v; want ErrInvalid", tag, err)
				}
			}
		}},
		{"a tag records its permutation for life, or the store refuses opaque tags", func(t *testing.T, s segment.Store) {
			p := recordOnly{fp: "ff1:0123456789abcdef:0123456789ab", bits: 63}
			err := segment.CreateTag(ctx(t), s, "secret", 1, 10, "", p)
			if errors.Is(err, segment.ErrOpaqueUnsupported) {
				if _, terr := s.Tag(ctx(t), "secret"); !errors.Is(terr, segment.ErrUnknownTag) {
					t.Fatalf("after a refused opaque tag, Tag = %v; want ErrUnknownTag: nothing created", terr)
				}
				return
			}
			if err != nil {
				t.Fatalf("CreateTag(secret, opaque): %v", err)
			}
			create(t, s, "plain", 1, 10, "")
			rec := segment.Recorded(p)
			if info, err := s.Tag(ctx(t), "secret"); err != nil || info.Opaque != rec {
				t.Fatalf("Tag(secret).Opaque = %q, %v; want %q", info.Opaque, err, rec)
			}
			if r := reserve(t, s, "secret", 10); r.Opaque != rec {
				t.Fatalf("Reserve(secret).Opaque = %q; want %q", r.Opaque, rec)
			}
			if r := reserve(t, s, "plain", 10); r.Opaque != "" {
				t.Fatalf("Reserve(plain).Opaque = %q; want none", r.Opaque)
			}
			tags, err := s.Tags(ctx(t))
			if err != nil || len(tags) != 2 || tags[1].Tag != "secret" || tags[1].Opaque != rec || tags[0].Opaque != "" {
				t.Fatalf("Tags = %+v, %v; want plain, then secret recording %q", tags, err, rec)
			}
			if err := s.SetStep(ctx(t), "secret", 20); err != nil {
				t.Fatalf("SetStep(secret): %v", err)
			}
			if _, err := s.Advance(ctx(t), "secret", 1000); err != nil {
				t.Fatalf("Advance(secret): %v", err)
			}
			if info, err := s.Tag(ctx(t), "secret"); err != nil || info.Opaque != rec {
				t.Fatalf("after SetStep and Advance, Tag(secret).Opaque = %q, %v; want %q unchanged", info.Opaque, err, rec)
			}
			long := recordOnly{fp: strings.Repeat("f", segment.MaxRecorded), bits: 63}
			if err := segment.CreateTag(ctx(t), s, "long", 1, 10, "", long); !errors.Is(err, segment.ErrInvalid) {
				t.Fatalf("CreateTag with a %d-byte record = %v; want ErrInvalid", len(segment.Recorded(long)), err)
			}
		}},
		{"a reclass moves the class, and the next range is of it from next", func(t *testing.T, s segment.Store) {
			rc := reclasser(t, s)
			create(t, s, "t", 1, 10, "")
			reserve(t, s, "t", 10)
			from := tag(t, s, "t")
			// 11 is 3 mod 4: the row keeps its counter and changes class only.
			if err := rc.Reclass(ctx(t), "t", from, 4, 3, from.Next, 40); err != nil {
				t.Fatalf("Reclass(%+v, 3 mod 4 from %d): %v", from, from.Next, err)
			}
			if info := tag(t, s, "t"); info.Delta != 4 || info.Remainder != 3 || info.Next != from.Next || info.Step != 40 {
				t.Fatalf("after the reclass: %+v; want 3 mod 4 from %d, step 40", info, from.Next)
			}
			if r := reserve(t, s, "t", 40); r.Start != from.Next || r.Delta != 4 || r.Check() != nil {
				t.Fatalf("range %+v after the reclass; want 3 mod 4 from %d", r, from.Next)
			}
			from = tag(t, s, "t")
			next := from.Next + 1000 + (5-(from.Next+1000)%8+8)%8
			if err := rc.Reclass(ctx(t), "t", from, 8, 5, next, 80); err != nil {
				t.Fatalf("Reclass(%+v, 5 mod 8 from %d): %v", from, next, err)
			}
			if r := reserve(t, s, "t", 40); r.Start != next || r.Delta != 8 || r.Check() != nil {
				t.Fatalf("range %+v after the second reclass; want 5 mod 8 from %d", r, next)
			}
			if info := tag(t, s, "t"); info.Delta != 8 || info.Remainder != 5 || info.Next < next+40 || info.Next%8 != 5 {
				t.Fatalf("after a range of the new class: %+v; want 5 mod 8, past %d", info, next+40)
			}
		}},
		{"a reclass from a row that changed writes nothing", func(t *testing.T, s segment.Store) {
			rc := reclasser(t, s)
			create(t, s, "t", 1, 10, "")
			stale := tag(t, s, "t")
			reserve(t, s, "t", 10)
			before := tag(t, s, "t")
			if err := rc.Reclass(ctx(t), "t", stale, 4, 3, 103, 40); !errors.Is(err, segment.ErrReclassed) {
				t.Fatalf("Reclass from the row before a Reserve: %v; want ErrReclassed", err)
			}
			other := before
			other.Delta, other.Remainder = 2, 1
			if err := rc.Reclass(ctx(t), "t", other, 4, 3, 103, 40); !errors.Is(err, segment.ErrReclassed) {
				t.Fatalf("Reclass from another class: %v; want ErrReclassed", err)
			}
			if info := tag(t, s, "t"); info.Delta != before.Delta || info.Remainder != before.Remainder || info.Next != before.Next {
				t.Fatalf("after refused reclasses: %+v; want the row as it was, %+v", info, before)
			}
			if err := rc.Reclass(ctx(t), "t", before, 4, 3, before.Next, 40); err != nil {
				t.Fatalf("Reclass from the row as it is: %v", err)
			}
			// The row moved to another class at the same counter: the
			// row read before is stale, though its next ID is the same.
			if err := rc.Reclass(ctx(t), "t", before, 2, 1, 103, 40); !errors.Is(err, segment.ErrReclassed) {
				t.Fatalf("a second Reclass from the same row: %v; want ErrReclassed", err)
			}
			if info := tag(t, s, "t"); info.Delta != 4 || info.Remainder != 3 || info.Next != before.Next {
				t.Fatalf("after the refused second reclass: %+v; want 3 mod 4 from %d", info, before.Next)
			}
		}},
		{"a reclass of an unknown tag", func(t *testing.T, s segment.Store) {
			rc := reclasser(t, s)
			create(t, s, "t", 1, 10, "")
			if err := rc.Reclass(ctx(t), "nope", segment.TagInfo{Tag: "nope", Next: 1, Delta: 1}, 4, 1, 1, 40); !errors.Is(err, segment.ErrUnknownTag) {
				t.Fatalf("Reclass(nope): %v; want ErrUnknownTag", err)
			}
			if _, err := s.Tag(ctx(t), "nope"); !errors.Is(err, segment.ErrUnknownTag) {
				t.Fatalf("after Reclass(nope), Tag(nope) = %v; want ErrUnknownTag: nothing created", err)
			}
		}},
		{"a reclass refuses what is no class, or would go back, and writes nothing", func(t *testing.T, s segment.Store) {
			rc := reclasser(t, s)
			create(t, s, "t", 1, 10, "")
			reserve(t, s, "t", 100) // next ID 101
			from := tag(t, s, "t")
			for _, c := range []struct {
				name                         string
				delta, remainder, next, step int64
			}{
				{"delta 0", 0, 0, 101, 40},
				{"delta past MaxDelta", segment.MaxDelta + 1, 101, 101, segment.MaxDelta + 1},
				{"a remainder of delta", 4, 4, 104, 40},
				{"a negative remainder", 4, -1, 103, 40},
				{"next outside the class", 4, 1, 102, 40},
				{"next below the row's next ID", 4, 1, 97, 40},
				{"next past MaxEnd", 1, 0, segment.MaxEnd + 1, 40},
				{"a step below the delta", 4, 1, 101, 3},
				{"step 0", 4, 1, 101, 0},
			} {
				if err := rc.Reclass(ctx(t), "t", from, c.delta, c.remainder, c.next, c.step); !errors.Is(err, segment.ErrInvalid) {
					t.Errorf("%s: Reclass(%d mod %d from %d) = %v; want ErrInvalid", c.name, c.remainder, c.delta, c.next, err)
				}
			}
			if err := rc.Reclass(ctx(t), "\xff", from, 4, 1, 101, 40); !errors.Is(err, segment.ErrInvalid) {
				t.Errorf("Reclass of a tag no row can be: %v; want ErrInvalid", err)
			}
			if info := tag(t, s, "t"); info.Delta != from.Delta || info.Remainder != from.Remainder || info.Next != from.Next {
				t.Fatalf("after refused reclasses: %+v; want the row as it was, %+v", info, from)
			}
		}},
		{"reserves racing a reclass never repeat an ID, and those after it are of the new class", func(t *testing.T, s segment.Store) {
			raceReclass(t, reclasser(t, s), s)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.run(t, newStore(t)) })
	}
	t.Run("the new-tag rule", func(t *testing.T) { RunTagRuleTests(t, newStore) })
}

func create(t *testing.T, s segment.Store, tag string, first, step int64, desc string) {
	t.Helper()
	if err := s.CreateTag(ctx(t), tag, first, step, desc); err != nil {
		t.Fatalf("CreateTag(%s): %v", tag, err)
	}
}

func reserve(t *testing.T, s segment.Store, tag string, step int64) segment.Range {
	t.Helper()
	r, err := s.Reserve(ctx(t), tag, step)
	if err != nil {
		t.Fatalf("Reserve(%s, %d): %v", tag, step, err)
	}
	return r
}

func tag(t *testing.T, s segment.Store, tag string) segment.TagInfo {
	t.Helper()
	info, err := s.Tag(ctx(t), tag)
	if err != nil {
		t.Fatalf("Tag(%s): %v", tag, err)
	}
	return info
}

// reclasser returns s as a segment.Reclasser, or skips the test.
func reclasser(t *testing.T, s segment.Store) segment.Reclasser {
	t.Helper()
	rc, ok := s.(segment.Reclasser)
	if !ok {
		t.Skipf("%T is not a segment.Reclasser", s)
	}
	return rc
}

// raceReclass moves a tag from one store's IDs to 3 mod 4 while
// goroutines reserve ranges of it, retrying the reclass on
// ErrReclassed, and checks that no ID is in two ranges, that the ranges
// of the old class end below the reclass's next ID, and that every range
// reserved after the reclass returned is of the new class from next on.
func raceReclass(t *testing.T, rc segment.Reclasser, s segment.Store) {
	create(t, s, "t", 1, 10, "")
	type reserved struct {
		r     segment.Range
		after bool // reserved after the reclass returned
	}
	var (
		mu    sync.Mutex
		got   []reserved
		wg    sync.WaitGroup
		done  = make(chan struct{})
		count atomic.Int64
	)
	c := ctx(t)
	for range 4 {
		wg.Go(func() {
			for more := 10; more > 0 && c.Err() == nil; {
				after := false
				select {
				case <-done:
					after = true
					more--
				default:
				}
				r, err := s.Reserve(c, "t", 10)
				if err != nil {
					t.Errorf("Reserve: %v", err)
					return
				}
				count.Add(1)
				mu.Lock()
				got = append(got, reserved{r, after})
				mu.Unlock()
			}
		})
	}
	for count.Load() < 20 && c.Err() == nil {
		time.Sleep(time.Millisecond)
	}
	var next int64
	for tries := 0; ; tries++ {
		from, err := s.Tag(c, "t")
		if err != nil {
			close(done)
			wg.Wait()
			t.Fatalf("Tag: %v", err)
		}
		next = from.Next + 40 + (3-(from.Next+40)%4+4)%4
		err = rc.Reclass(c, "t", from, 4, 3, next, 40)
		if err == nil {
			break
		}
		if !errors.Is(err, segment.ErrReclassed) || tries == 10_000 {
			close(done)
			wg.Wait()
			t.Fatalf("Reclass after %d tries: %v", tries, err)
		}
	}
	close(done)
	wg.Wait()
	seen := map[int64]segment.Range{}
	newClass := 0
	for _, g := range got {
		r := g.r
		if err := r.Check(); err != nil {
			t.Fatalf("range %+v: %v", r, err)
		}
		switch {
		case r.Delta == 4 && (r.Start < next || r.Start%4 != 3):
			t.Errorf("range %+v of the new class: want 3 mod 4 from %d", r, next)
		case r.Delta == 4:
			newClass++
		case g.after:
			t.Errorf("range %+v reserved after the reclass returned: want 3 mod 4 from %d", r, next)
		case r.End > next:
			t.Errorf("range %+v of the old class reaches the reclass's next ID %d", r, next)
		}
		for id := r.Start; id < r.End; id += r.Delta {
			if o, dup := seen[id]; dup {
				t.Fatalf("ID %d in ranges %+v and %+v", id, o, r)
			}
			seen[id] = r
		}
	}
	if newClass < 4*10 {
		t.Fatalf("%d ranges of the new class; want the 40 reserved after the reclass, at least", newClass)
	}
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return c
}

// recordOnly is a segment.Permutation for the record alone: stores never
// encode.
type recordOnly struct {
	fp   string
	bits int
}

func (p recordOnly) Encode(x uint64) (uint64, error) { return x, nil }
func (p recordOnly) EncodeN([]int64) error           { return nil }
func (p recordOnly) Decode(y uint64) (uint64, error) { return y, nil }
func (p recordOnly) Bits() int                       { return p.bits }
func (p recordOnly) Fingerprint() string             { return p.fp }
