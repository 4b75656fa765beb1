package wide_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/oklog/ulid/v2"

	"github.com/firn-id/firn/snowflake"
)

// unsaturated is a layout whose 22-bit sequence no single goroutine
// exhausts, so benchmarks measure a call rather than the layout's rate:
// the firn preset's 4,096 IDs per millisecond bound ns/op below by 244.
func unsaturated() snowflake.Layout {
	return snowflake.Layout{Name: "unsaturated", Epoch: time.UnixMilli(1767225600000), Tick: time.Millisecond,
		TimeBits: 41, SequenceBits: 22}
}

var sinkUUID uuid.UUID

// BenchmarkUUIDv7 runs NextUUID and google/uuid's own NewV7 one after the
// other in each run, so that with -count each pair shares the machine's
// state: their ratio, not their absolute figures, is the result. The bar
// is NextUUID within 1.5× of NewV7.
//
//	go test -run '^$' -bench 'UUIDv7|ULID$' -count 6 ./wide/
func BenchmarkUUIDv7(b *testing.B) {
	b.Run("firn", func(b *testing.B) {
		w, _ := newWide(b, unsaturated(), 0)
		ctx := context.Background()
		b.ReportAllocs()
		for b.Loop() {
			u, err := w.NextUUID(ctx)
			if err != nil {
				b.Fatal(err)
			}
			sinkUUID = u
		}
	})
	b.Run("google", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			u, err := uuid.NewV7()
			if err != nil {
				b.Fatal(err)
			}
			sinkUUID = u
		}
	})
}

// BenchmarkNextUUIDs is the cost per UUID of a batch of 1,000.
func BenchmarkNextUUIDs(b *testing.B) {
	w, _ := newWide(b, unsaturated(), 0)
	ctx := context.Background()
	dst := make([]uuid.UUID, 1000)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := w.NextUUIDs(ctx, dst); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(dst)), "ns/uuid")
}

// BenchmarkULID runs NextULID and oklog/ulid's own Make one after the
// other, as BenchmarkUUIDv7 does.
func BenchmarkULID(b *testing.B) {
	b.Run("firn", func(b *testing.B) {
		w, _ := newWide(b, unsaturated(), 0)
		ctx := context.Background()
		var last ulid.ULID
		b.ReportAllocs()
		for b.Loop() {
			u, err := w.NextULID(ctx)
			if err != nil {
				b.Fatal(err)
			}
			last = u
		}
		sinkUUID = uuid.UUID(last)
	})
	b.Run("oklog", func(b *testing.B) {
		var last ulid.ULID
		b.ReportAllocs()
		for b.Loop() {
			last = ulid.Make()
		}
		sinkUUID = uuid.UUID(last)
	})
}
