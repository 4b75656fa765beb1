package segment_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/firn-id/firn/segment"
	"github.com/firn-id/firn/segment/segmenttest"
)

// nearTop returns a handle on a tag whose counter is a few ranges below
// MaxEnd, its IDs delta apart.
func nearTop(t testing.TB, delta, step, ranges int64) (*segmenttest.MemStore, *segment.Handle) {
	t.Helper()
	s := segmenttest.NewMemStore()
	first := segment.MaxEnd - ranges*step - delta
	if err := s.CreateTagResidue(context.Background(), "top", first, step, delta, 0, ""); err != nil {
		t.Fatal(err)
	}
	// The first range may take a while on a busy machine (-race, packages
	// in parallel); every later wait is the 1 ms under test.
	a := newAllocator(t, s, segment.Config{MaxWait: time.Millisecond, FirstWait: 5 * time.Second, MaxStep: step})
	h, err := a.Tag(context.Background(), "top")
	if err != nil {
		t.Fatal(err)
	}
	return s, h
}

// TestFailedCallsNeverWrapTheHandlePosition: on the old code every failed
// NextN added len(dst)·delta to a used-up range's position, so a few
// thousand failed batches near MaxEnd wrapped it negative and the next
// batch panicked with an index out of range (or handed out negative IDs).
// Now a used-up range's position never moves.
func TestFailedCallsNeverWrapTheHandlePosition(t *testing.T) {
	_, h := nearTop(t, segment.MaxDelta, 2*segment.MaxDelta, 1)
	live := context.Background()
	dst := make([]int64, 1<<20)
	n, err := h.NextN(live, dst[:2])
	if err != nil || n != 2 || dst[0] < 0 || dst[1] <= dst[0] {
		t.Fatalf("NextN(2) = %d %v, %v; want the range's two IDs", n, dst[:2], err)
	}
	gone, cancel := context.WithCancel(live)
	cancel()
	// 2^48 / (2^20 · 2^16) = 4096 failed batches wrapped the old position.
	for i := range 5000 {
		if n, err := h.NextN(gone, dst); err == nil || n != 0 {
			t.Fatalf("call %d: NextN on a used-up, exhausted tag = %d, %v; want 0 and an error", i, n, err)
		}
	}
	if p := segment.Position(h); p < 0 || p > segment.MaxEnd+segment.MaxDelta {
		t.Fatalf("position %d after failed calls: want it where the range ended, at most MaxEnd+MaxDelta", p)
	}
	// The store's answer may take longer than the 1 ms wait on a busy
	// machine; until it comes, Next says unavailable, never an ID.
	deadline := time.Now().Add(10 * time.Second)
	for {
		id, err := h.Next(live)
		if errors.Is(err, segment.ErrExhausted) {
			break
		}
		if !errors.Is(err, segment.ErrUnavailable) || time.Now().After(deadline) {
			t.Fatalf("Next = %d, %v; want ErrExhausted", id, err)
		}
		time.Sleep(time.Millisecond)
	}
}

// checkPattern runs ops, a pattern of calls, against a tag near MaxEnd and
// fails on any ID that is negative, at or past MaxEnd, not above every
// earlier one, or on a position that could wrap.
func checkPattern(t *testing.T, delta, step, ranges int64, ops []byte) {
	s, h := nearTop(t, delta, step, ranges)
	live := context.Background()
	gone, cancel := context.WithCancel(live)
	cancel()
	sizes := []int{1, 2, 3, 17, 1000, 1 << 16, 1 << 20}
	dst := make([]int64, sizes[len(sizes)-1])
	last := int64(-1)
	seen := func(ids ...int64) {
		for _, id := range ids {
			if id < 0 || id >= segment.MaxEnd || id <= last || id%delta != 0 {
				t.Fatalf("ID %d after %d: want increasing IDs of the class, in 0..MaxEnd", id, last)
			}
			last = id
		}
	}
	for i, op := range ops {
		ctx := live
		if op&1 == 1 {
			ctx = gone
		}
		switch op >> 1 % 4 {
		case 0:
			if id, err := h.Next(ctx); err == nil {
				seen(id)
			}
		case 1, 2:
			n, _ := h.NextN(ctx, dst[:sizes[int(op>>3)%len(sizes)]])
			seen(dst[:n]...)
		case 3:
			if op&8 == 0 {
				s.Fail(errors.New("outage"))
			} else {
				s.Fail(nil)
			}
		}
		if p := segment.Position(h); p < 0 || p > segment.MaxEnd+segment.MaxDelta {
			t.Fatalf("op %d (%#x): position %d could wrap", i, op, p)
		}
	}
}

// TestHandleArithmeticProperty runs random call patterns — Next and NextN
// of every size, with live and cancelled contexts, through outages — on
// tags a few ranges below MaxEnd, with deltas from 1 to MaxDelta.
func TestHandleArithmeticProperty(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 40 {
		delta := []int64{1, 2, 3, 1000, segment.MaxDelta}[r.IntN(5)]
		step := delta * (1 + r.Int64N(50))
		ops := make([]byte, 1+r.IntN(60))
		for i := range ops {
			ops[i] = byte(r.UintN(256))
		}
		checkPattern(t, delta, step, 1+r.Int64N(4), ops)
	}
}

// FuzzHandleArithmetic: any pattern of calls near MaxEnd (see
// checkPattern).
func FuzzHandleArithmetic(f *testing.F) {
	f.Add(uint16(0xFFFF), uint16(2), uint8(1), []byte{2, 3, 0x33, 0x35, 0x3b, 0x3b, 0x3b, 6, 0x0e})
	f.Add(uint16(0), uint16(9), uint8(3), []byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, d, k uint16, ranges uint8, ops []byte) {
		if len(ops) > 64 {
			ops = ops[:64]
		}
		delta := int64(d)%segment.MaxDelta + 1
		checkPattern(t, delta, delta*(int64(k)%64+1), int64(ranges)%5+1, ops)
	})
}

// hugeStep is a store whose row's step became 2^62 after the allocator
// loaded the tag, as PATCH /v1/segments/{tag} and `firn tag step` allowed
// before the bound.
type hugeStep struct{ *segmenttest.MemStore }

func (s hugeStep) Reserve(ctx context.Context, tag string, step int64) (segment.Range, error) {
	r, err := s.MemStore.Reserve(ctx, tag, step)
	r.Step = 1 << 62
	return r, err
}

// TestAStepPastStepLimitNeverReachesTheHandle: a row's step changed to
// 2^62 became the handle's step on the old code, whose next doubling went
// negative and stopped the tag until a restart. The handle now takes at
// most StepLimit.
func TestAStepPastStepLimitNeverReachesTheHandle(t *testing.T) {
	s := hugeStep{storeWithTag(t, "t", 10)}
	a := newAllocator(t, s, segment.Config{})
	h, err := a.Tag(context.Background(), "t")
	if err != nil {
		t.Fatal(err)
	}
	dst := make([]int64, 25)
	for range 3 {
		if n, err := h.NextN(context.Background(), dst); err != nil || n != len(dst) {
			t.Fatalf("NextN = %d, %v", n, err)
		}
	}
	if st := h.Stats(); st.Step < 1 || st.Step > segment.StepLimit {
		t.Fatalf("the handle's step is %d: want 1 to StepLimit", st.Step)
	}
}
