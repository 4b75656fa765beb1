package segment_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/firn-id/firn/internal/idtest"
	"github.com/firn-id/firn/segment"
	"github.com/firn-id/firn/segment/segmenttest"
)

func oddEven(t *testing.T) (*segmenttest.MemStore, *segmenttest.MemStore) {
	t.Helper()
	even, odd := segmenttest.NewMemStore(), segmenttest.NewMemStore()
	ctx := context.Background()
	if err := even.CreateTagResidue(ctx, "t", 1, 100, 2, 0, ""); err != nil {
		t.Fatal(err)
	}
	if err := odd.CreateTagResidue(ctx, "t", 1, 100, 2, 1, ""); err != nil {
		t.Fatal(err)
	}
	return even, odd
}

// TestMultiOneStoreDown: with one of two stores down the allocator keeps
// serving from the other; the union never repeats.
func TestMultiOneStoreDown(t *testing.T) {
	even, odd := oddEven(t)
	m, err := segment.NewMulti(even, odd) // position i issues remainder i
	if err != nil {
		t.Fatal(err)
	}
	a := newAllocator(t, m, segment.Config{MaxWait: time.Second})
	rec := idtest.NewRecorder(t)
	ctx := context.Background()
	// Unique, but not increasing: a failover to the other store may step
	// back.
	draw := func(src string, n int) {
		for range n {
			id, err := a.Next(ctx, "t")
			if err != nil {
				t.Fatalf("%s: %v", src, err)
			}
			rec.AddUnordered(id)
		}
	}
	draw("both up", 1000)
	odd.Fail(errors.New("odd store down"))
	draw("odd down", 1000)
	odd.Fail(nil)
	even.Fail(errors.New("even store down"))
	draw("even down", 1000)
}

func TestMultiRefusesABadSet(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name  string
		setup func() []segment.Store
	}{
		{"overlapping classes", func() []segment.Store {
			a, b := segmenttest.NewMemStore(), segmenttest.NewMemStore()
			a.CreateTagResidue(ctx, "t", 1, 100, 2, 0, "")
			b.CreateTagResidue(ctx, "t", 1, 100, 2, 0, "")
			return []segment.Store{a, b}
		}},
		{"incomplete classes", func() []segment.Store {
			a, b := segmenttest.NewMemStore(), segmenttest.NewMemStore()
			a.CreateTagResidue(ctx, "t", 1, 100, 3, 0, "")
			b.CreateTagResidue(ctx, "t", 1, 100, 3, 1, "")
			return []segment.Store{a, b}
		}},
		{"a store of Leaf's kind, delta 1", func() []segment.Store {
			a, b := segmenttest.NewMemStore(), segmenttest.NewMemStore()
			a.CreateTag(ctx, "t", 1, 100, "")
			b.CreateTagResidue(ctx, "t", 1, 100, 2, 1, "")
			return []segment.Store{a, b}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := segment.NewMulti(tt.setup()...)
			if err != nil {
				t.Fatal(err)
			}
			a := newAllocator(t, m, segment.Config{})
			_, err = a.Next(ctx, "t")
			var re *segment.ResidueError
			if !errors.Is(err, segment.ErrResidues) || !errors.As(err, &re) {
				t.Fatalf("Next on a bad set: %v, want a *ResidueError", err)
			}
		})
	}
}

// TestMultiCatchesAnEditedRow: a row edited after start to overlap another
// store's class is refused on its next fetch; the other store serves.
func TestMultiCatchesAnEditedRow(t *testing.T) {
	even, odd := oddEven(t)
	m, _ := segment.NewMulti(even, odd)
	ctx := context.Background()
	if _, err := m.Tag(ctx, "t"); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Reserve(ctx, "t", 10); err != nil { // from even, the primary
		t.Fatal(err)
	}
	odd.EditResidue("t", 2, 0)
	even.Fail(errors.New("even down"))
	_, err := m.Reserve(ctx, "t", 10)
	if !errors.Is(err, segment.ErrResidues) {
		t.Fatalf("reserve from the edited store: %v, want ErrResidues", err)
	}
	even.Fail(nil)
	r, err := m.Reserve(ctx, "t", 10)
	if err != nil || r.Start%2 != 0 {
		t.Fatalf("reserve with the even store back: %+v, %v", r, err)
	}
}

func TestMultiCreatesClasses(t *testing.T) {
	stores := []*segmenttest.MemStore{segmenttest.NewMemStore(), segmenttest.NewMemStore(), segmenttest.NewMemStore()}
	m, _ := segment.NewMulti(stores[0], stores[1], stores[2])
	ctx := context.Background()
	if err := m.CreateTag(ctx, "t", 10, 30, ""); err != nil {
		t.Fatal(err)
	}
	for i, s := range stores {
		info, _ := s.Tag(ctx, "t")
		if info.Delta != 3 || info.Remainder != int64(i) || info.Next%3 != int64(i) {
			t.Fatalf("store %d: %+v, want delta 3 remainder %d", i, info, i)
		}
	}
	if _, err := segment.NewMulti(stores[0]); err == nil {
		t.Fatal("a set of one store accepted")
	}
}

// TestMultiPositionIsTheClass: a store listed at a position other than
// its row's remainder is refused, whether or not the other store answers —
// two processes listing the stores in different orders never serve one
// class twice.
func TestMultiPositionIsTheClass(t *testing.T) {
	even, odd := oddEven(t)
	ctx := context.Background()
	odd.Fail(errors.New("odd down")) // the store that could reveal the overlap is unseen
	m, _ := segment.NewMulti(odd, even)
	a := newAllocator(t, m, segment.Config{MaxWait: 200 * time.Millisecond})
	if _, err := a.Next(ctx, "t"); !errors.Is(err, segment.ErrResidues) {
		t.Fatalf("stores listed out of order: %v, want ErrResidues", err)
	}
}

// TestMultiCreatesOnAllOrNone: with a store down nothing is created; a
// creation cut short is completed by a retry, in the same classes; a tag on
// every store is ErrTagExists; one created in another class is refused.
func TestMultiCreatesOnAllOrNone(t *testing.T) {
	a, b := segmenttest.NewMemStore(), segmenttest.NewMemStore()
	ctx := context.Background()
	m, _ := segment.NewMulti(a, b)
	b.Fail(errors.New("b down"))
	if err := m.CreateTag(ctx, "t", 1, 100, ""); err == nil {
		t.Fatal("CreateTag with a store down succeeded")
	}
	if _, err := a.Tag(ctx, "t"); !errors.Is(err, segment.ErrUnknownTag) {
		t.Fatalf("store a after a refused creation: %v, want no tag", err)
	}
	b.Fail(nil)
	if err := a.CreateTagResidue(ctx, "t", 1, 100, 2, 0, ""); err != nil { // a creation cut short
		t.Fatal(err)
	}
	if err := m.CreateTag(ctx, "t", 1, 100, ""); err != nil {
		t.Fatalf("retry: %v", err)
	}
	if info, err := b.Tag(ctx, "t"); err != nil || info.Delta != 2 || info.Remainder != 1 {
		t.Fatalf("store b after the retry: %+v, %v", info, err)
	}
	// A store that replaced one whose rows were lost starts past the
	// counters the others reached, not at first.
	x, y := segmenttest.NewMemStore(), segmenttest.NewMemStore()
	x.CreateTagResidue(ctx, "v", 1, 100, 2, 0, "")
	if _, err := x.Advance(ctx, "v", 5000); err != nil {
		t.Fatal(err)
	}
	m3, _ := segment.NewMulti(x, y)
	if err := m3.CreateTag(ctx, "v", 1, 100, ""); err != nil {
		t.Fatal(err)
	}
	if info, err := y.Tag(ctx, "v"); err != nil || info.Next < 5000 || info.Next%2 != 1 {
		t.Fatalf("the new store: %+v, %v; want its counter past 5000, odd", info, err)
	}
	if err := m.CreateTag(ctx, "t", 1, 100, ""); !errors.Is(err, segment.ErrTagExists) {
		t.Fatalf("again: %v, want ErrTagExists", err)
	}
	c, d := segmenttest.NewMemStore(), segmenttest.NewMemStore()
	d.CreateTagResidue(ctx, "u", 1, 100, 2, 0, "")
	m2, _ := segment.NewMulti(c, d)
	if err := m2.CreateTag(ctx, "u", 1, 100, ""); !errors.Is(err, segment.ErrResidues) {
		t.Fatalf("a tag in another class: %v, want ErrResidues", err)
	}
	if _, err := c.Tag(ctx, "u"); !errors.Is(err, segment.ErrUnknownTag) {
		t.Fatalf("store c: %v, want nothing created", err)
	}
}

// TestMultiRefusesAStepBelowItsStores: a range of each store holds one
// ID of its class per delta, so a step below the number of stores gave
// every other range empty.
func TestMultiRefusesAStepBelowItsStores(t *testing.T) {
	m, err := segment.NewMulti(segmenttest.NewMemStore(), segmenttest.NewMemStore(), segmenttest.NewMemStore())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := m.CreateTag(ctx, "s", 1, 2, ""); !errors.Is(err, segment.ErrInvalid) {
		t.Fatalf("CreateTag with step 2 on 3 stores = %v, want ErrInvalid", err)
	}
	if err := m.CreateTag(ctx, "s", 1, 3, ""); err != nil {
		t.Fatal(err)
	}
	if err := m.SetStep(ctx, "s", 1); !errors.Is(err, segment.ErrInvalid) {
		t.Fatalf("SetStep 1 on 3 stores = %v, want ErrInvalid", err)
	}
}

// ctxStore refuses a call whose context has ended, as a SQL driver does.
type ctxStore struct{ *segmenttest.MemStore }

func (c ctxStore) Reserve(ctx context.Context, tag string, step int64) (segment.Range, error) {
	if err := ctx.Err(); err != nil {
		return segment.Range{}, err
	}
	return c.MemStore.Reserve(ctx, tag, step)
}

func (c ctxStore) Tag(ctx context.Context, tag string) (segment.TagInfo, error) {
	if err := ctx.Err(); err != nil {
		return segment.TagInfo{}, err
	}
	return c.MemStore.Tag(ctx, tag)
}

// TestMultiOneStoreSilent: a store that does not answer (a black-holed
// connection) takes its share of a fetch's time, not all of it: the other
// store still answers, and the set keeps serving. Before, the silent first
// store used the whole deadline and every batch failed.
func TestMultiOneStoreSilent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		s0, s1 := segmenttest.NewMemStore(), segmenttest.NewMemStore()
		m, err := segment.NewMulti(s0, ctxStore{s1})
		if err != nil {
			t.Fatal(err)
		}
		if err := m.CreateTag(ctx, "t", 1, 100, ""); err != nil {
			t.Fatal(err)
		}
		a := newAllocator(t, m, segment.Config{})
		h, err := a.Tag(ctx, "t")
		if err != nil {
			t.Fatal(err)
		}
		dst := make([]int64, 100)
		if _, err := h.NextN(ctx, dst); err != nil {
			t.Fatal(err)
		}
		s0.SetDelay(time.Hour) // store 0 silent; store 1 healthy
		fails := 0
		for range 60 {
			if _, err := h.NextN(ctx, dst); err != nil {
				fails++
			}
			time.Sleep(time.Second)
		}
		if fails > 10 {
			t.Fatalf("store 1 healthy, store 0 silent: %d of 60 batches failed", fails)
		}
	})
}

func TestCheckReclass(t *testing.T) {
	row := segment.TagInfo{Tag: "t", Next: 101, Delta: 1}
	tests := []struct {
		name                         string
		from                         segment.TagInfo
		delta, remainder, next, step int64
		ok                           bool
	}{
		{"a class, next of it at from.Next", row, 4, 1, 101, 40, true},
		{"a class, next of it above from.Next", row, 4, 3, 203, 40, true},
		{"delta 0", row, 0, 0, 101, 40, false},
		{"delta past MaxDelta", row, segment.MaxDelta + 1, 1, 101, 40, false},
		{"remainder at delta", row, 4, 4, 104, 40, false},
		{"negative remainder", row, 4, -1, 103, 40, false},
		{"next outside the class", row, 4, 1, 102, 40, false},
		{"next below from.Next", row, 4, 1, 97, 40, false},
		{"next past MaxEnd", row, 1, 0, segment.MaxEnd + 1, 40, false},
		{"a row read outside every class", segment.TagInfo{Tag: "t", Next: 101}, 4, 1, 101, 40, false},
		{"a row read with a negative next ID", segment.TagInfo{Tag: "t", Next: -3, Delta: 1}, 4, 1, 101, 40, false},
		{"a row read with its next ID outside its class", segment.TagInfo{Tag: "t", Next: 101, Delta: 2}, 4, 1, 101, 40, false},
		{"a step of the delta", row, 4, 1, 101, 4, true},
		{"a step below the delta", row, 4, 1, 101, 3, false},
		{"step past StepLimit", row, 4, 1, 101, segment.StepLimit + 1, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := segment.CheckReclass(tt.from, tt.delta, tt.remainder, tt.next, tt.step)
			if tt.ok != (err == nil) || (err != nil && !errors.Is(err, segment.ErrInvalid)) {
				t.Fatalf("CheckReclass(%+v, delta %d, remainder %d, next %d, step %d) = %v; want ok %v, else ErrInvalid", tt.from, tt.delta, tt.remainder, tt.next, tt.step, err, tt.ok)
			}
		})
	}
}
