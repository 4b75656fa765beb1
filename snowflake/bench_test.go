package snowflake_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/firn-id/firn/snowflake"
)

// wide is a layout whose 22-bit sequence (4M IDs per millisecond) no
// generator saturates: its benchmarks show the cost of one call.
func wide() snowflake.Layout {
	return snowflake.Layout{Name: "wide", Epoch: time.UnixMilli(1767225600000), Tick: time.Millisecond,
		TimeBits: 41, SequenceBits: 22}
}

func newGen(b *testing.B, l snowflake.Layout) *snowflake.Generator {
	b.Helper()
	g, err := snowflake.New(snowflake.Config{Layout: l, Reservation: snowflake.Unreserved()})
	if err != nil {
		b.Fatal(err)
	}
	return g
}

// sink keeps results alive; parallel benchmarks store to it atomically.
var sink atomic.Int64

// BenchmarkTimeSince is the baseline: one monotonic clock read, which the
// generator must make per call to hand out the current tick.
func BenchmarkTimeSince(b *testing.B) {
	start := time.Now()
	var d time.Duration
	for b.Loop() {
		d += time.Since(start)
	}
	sink.Store(int64(d))
}

// BenchmarkNext measures one call. On twitter (4,096 IDs per ms) a single
// goroutine saturates the layout, so ns/op is bounded below by 244 ns.
func BenchmarkNext(b *testing.B) {
	for _, l := range []snowflake.Layout{wide(), preset(b, "twitter")} {
		b.Run(l.Name, func(b *testing.B) {
			g := newGen(b, l)
			ctx := context.Background()
			b.ReportAllocs()
			var last int64
			for b.Loop() {
				id, err := g.Next(ctx)
				if err != nil {
					b.Fatal(err)
				}
				last = id
			}
			sink.Store(last) // once: an atomic store per call would be measured too
		})
	}
}

func BenchmarkNextParallel(b *testing.B) {
	for _, l := range []snowflake.Layout{wide(), preset(b, "twitter")} {
		b.Run(l.Name, func(b *testing.B) {
			g := newGen(b, l)
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				ctx := context.Background()
				var last int64
				for pb.Next() {
					id, err := g.Next(ctx)
					if err != nil {
						b.Error(err)
						return
					}
					last = id
				}
				sink.Store(last)
			})
		})
	}
}

// BenchmarkNextN fills batches of 1,000 and reports the cost per ID.
func BenchmarkNextN(b *testing.B) {
	g := newGen(b, wide())
	ctx := context.Background()
	dst := make([]int64, 1000)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := g.NextN(ctx, dst); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(dst)), "ns/id")
}

// BenchmarkSustained draws IDs from the twitter layout for one second per
// iteration, from 1 and from 8 goroutines, and reports IDs per second and
// the share of the layout's cap (4,096,000 IDs/s) reached.
func BenchmarkSustained(b *testing.B) {
	l := preset(b, "twitter")
	limit := l.Capacity().PerSecond
	for _, workers := range []int{1, 8} {
		b.Run(map[int]string{1: "1goroutine", 8: "8goroutines"}[workers], func(b *testing.B) {
			var total atomic.Int64
			var elapsed time.Duration
			for range b.N {
				g := newGen(b, l)
				start := time.Now()
				var wg sync.WaitGroup
				for range workers {
					wg.Go(func() {
						ctx := context.Background()
						n := int64(0)
						for time.Since(start) < time.Second {
							for range 256 {
								if _, err := g.Next(ctx); err != nil {
									b.Error(err)
									return
								}
							}
							n += 256
						}
						total.Add(n)
					})
				}
				wg.Wait()
				elapsed += time.Since(start)
			}
			rate := float64(total.Load()) / elapsed.Seconds()
			b.ReportMetric(rate, "ids/s")
			b.ReportMetric(100*rate/limit, "%cap")
		})
	}
}

// BenchmarkFloorParallel is the core of the generator's fast path alone —
// one clock read and one atomic add on a shared counter per ID — from
// parallel goroutines. It shows what moving that counter between cores
// costs on the machine at hand.
func BenchmarkFloorParallel(b *testing.B) {
	var counter struct {
		_ [128]byte
		n atomic.Uint64
		_ [120]byte
	}
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		var d time.Duration
		for pb.Next() {
			d += time.Since(start)
			counter.n.Add(1)
		}
		sink.Store(int64(d))
	})
}

// BenchmarkGuess reads one ID with every preset and ranks them: the cost
// of one firn parse --guess or /v1/snowflake/guess answer before output,
// beside one Decompose.
func BenchmarkGuess(b *testing.B) {
	now := time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)
	b.Run("Guess", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			sink.Store(int64(len(snowflake.Plausible(snowflake.Guess(103270115826048975, now)))))
		}
	})
	b.Run("Decompose", func(b *testing.B) {
		l, _ := snowflake.Preset("mastodon")
		b.ReportAllocs()
		for b.Loop() {
			p, _ := l.Decompose(103270115826048975)
			sink.Store(int64(p.Sequence))
		}
	})
}
