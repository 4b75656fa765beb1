package segment_test

import (
	"context"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/firn-id/firn/segment"
)

var sink atomic.Int64

// BenchmarkBaseline is one map lookup plus one atomic add: the least a
// per-tag counter can cost.
func BenchmarkBaseline(b *testing.B) {
	var n atomic.Int64
	m := map[string]*atomic.Int64{"order": &n, "user": new(atomic.Int64)}
	tag := "order"
	var last int64
	for b.Loop() {
		last = m[tag].Add(1)
	}
	sink.Store(last)
}

// wideAllocator serves a tag from ranges of segment.StepLimit (2^31−1)
// IDs, the widest a step may be: a benchmark crosses few ranges, each
// prefetched long before it is needed.
func wideAllocator(b *testing.B) *segment.Allocator {
	s := storeWithTag(b, "order", segment.StepLimit)
	return newAllocator(b, s, segment.Config{MaxStep: segment.StepLimit})
}

func BenchmarkNext(b *testing.B) {
	a := wideAllocator(b)
	ctx := context.Background()
	if _, err := a.Next(ctx, "order"); err != nil {
		b.Fatal(err)
	}
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

func BenchmarkNextParallel(b *testing.B) {
	a := wideAllocator(b)
	if _, err := a.Next(context.Background(), "order"); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		ctx := context.Background()
		var last int64
		for pb.Next() {
			id, err := a.Next(ctx, "order")
			if err != nil {
				b.Error(err)
				return
			}
			last = id
		}
		sink.Store(last)
	})
}

// BenchmarkNextN fills batches of 1,000 and reports the cost per ID.
func BenchmarkNextN(b *testing.B) {
	a := wideAllocator(b)
	ctx := context.Background()
	h, err := a.Tag(ctx, "order")
	if err != nil {
		b.Fatal(err)
	}
	dst := make([]int64, 1000)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := h.NextN(ctx, dst); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(dst)), "ns/id")
}

// BenchmarkSlowStore draws 100,000 IDs/s from a cold tag (step 1,000) on a
// store that answers in 50 ms, for a 2 s warm-up and 3 s measured, and
// reports the 99.9th percentile of Next's latency (an error counts as a
// miss: as slow as the worst) and store round trips per million IDs.
func BenchmarkSlowStore(b *testing.B) {
	for range b.N {
		s := storeWithTag(b, "order", 1000)
		s.SetDelay(50 * time.Millisecond)
		a := newAllocator(b, s, segment.Config{})
		ctx := context.Background()
		var lat []time.Duration
		misses, ids := 0, 0
		start := time.Now()
		for tick := 0; time.Since(start) < 5*time.Second; tick++ {
			warm := time.Since(start) >= 2*time.Second
			for range 100 { // 100 IDs per ms
				t0 := time.Now()
				_, err := a.Next(ctx, "order")
				d := time.Since(t0)
				ids++
				if warm {
					if err != nil {
						misses++
						d = time.Hour
					}
					lat = append(lat, d)
				}
			}
			time.Sleep(time.Until(start.Add(time.Duration(tick+1) * time.Millisecond)))
		}
		slices.Sort(lat)
		b.ReportMetric(float64(lat[len(lat)*999/1000].Microseconds()), "p99.9-µs")
		b.ReportMetric(float64(misses), "misses")
		b.ReportMetric(float64(s.Reserves())*1e6/float64(ids), "reserves/1M-ids")
		a.Close(ctx)
	}
}
