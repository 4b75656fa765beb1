package client

import (
	"context"
	"sync/atomic"
	"testing"
)

// sink keeps the compiler from dropping the benchmarks' work.
var sink int64

// BenchmarkAtomicAdd is the floor BenchmarkNext is held to: a bare
// atomic.Int64.Add loop, measured in the same run.
func BenchmarkAtomicAdd(b *testing.B) {
	b.ReportAllocs()
	var n atomic.Int64
	for b.Loop() {
		sink = n.Add(1)
	}
}

// BenchmarkNext takes IDs from the buffer, refilled in the background
// from an in-memory server. Bar: within 1.5× BenchmarkAtomicAdd of the
// same run, 0 allocs:
//
//	go test ./client/ -run '^$' -bench 'AtomicAdd|Next$' -count 6
func BenchmarkNext(b *testing.B) {
	b.Run("snowflake", func(b *testing.B) {
		b.ReportAllocs()
		c, _ := fakeClient(b, 1, Config{})
		ctx := context.Background()
		if _, err := c.Next(ctx); err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			id, err := c.Next(ctx)
			if err != nil {
				b.Fatal(err)
			}
			sink = id
		}
	})
	b.Run("tag", func(b *testing.B) {
		b.ReportAllocs()
		c, _ := fakeClient(b, 1, Config{})
		tag := c.Tag("order")
		ctx := context.Background()
		if _, err := tag.Next(ctx); err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			id, err := tag.Next(ctx)
			if err != nil {
				b.Fatal(err)
			}
			sink = id
		}
	})
}

// BenchmarkNextN takes batches of 100 from the buffer; ns/op per batch.
func BenchmarkNextN(b *testing.B) {
	c, _ := fakeClient(b, 1, Config{})
	dst := make([]int64, 100)
	ctx := context.Background()
	for b.Loop() {
		if _, err := c.Tag("order").NextN(ctx, dst); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkNextParallel takes IDs of one tag from every core.
func BenchmarkNextParallel(b *testing.B) {
	c, _ := fakeClient(b, 1, Config{})
	tag := c.Tag("order")
	b.RunParallel(func(pb *testing.PB) {
		ctx := context.Background()
		for pb.Next() {
			if _, err := tag.Next(ctx); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// replayServer answers every batch with a window of one array filled
// once, so that a benchmark measures the client taking IDs and not a fake
// server making them. Its IDs repeat: never use it where uniqueness is
// checked.
type replayServer struct {
	ids []int64
	off atomic.Int64
}

func (r *replayServer) batch(_ context.Context, _ string, n int) ([]int64, bool, error) {
	off := int(r.off.Add(int64(n))) % (len(r.ids) - n)
	return r.ids[off : off+n : off+n], false, nil
}

func (*replayServer) check(context.Context) error { return nil }
func (*replayServer) close() error                { return nil }

func (*replayServer) wide(context.Context, string, int) ([]string, error) {
	return nil, &Error{Kind: ErrInvalid, Code: "unsupported", Message: "no 128-bit IDs"}
}

// BenchmarkNextWarm is BenchmarkNext with refills that cost the server
// nothing: the client's own cost of an ID from a warm buffer, for the
// bar of 1.5× BenchmarkAtomicAdd with no allocation:
//
//	go test ./client/ -run '^$' -bench 'AtomicAdd|NextWarm' -count 6
func BenchmarkNextWarm(b *testing.B) {
	for _, mode := range []string{"snowflake", "tag"} {
		b.Run(mode, func(b *testing.B) {
			b.ReportAllocs()
			cfg, err := Config{Endpoints: []string{"replay:1"}}.withDefaults()
			if err != nil {
				b.Fatal(err)
			}
			r := &replayServer{ids: make([]int64, 4*cfg.MaxBuffer)}
			for i := range r.ids {
				r.ids[i] = int64(i)
			}
			c := newClient(cfg, newPool(cfg, []transport{r}))
			defer c.Close(context.Background())
			ctx := context.Background()
			if mode == "snowflake" {
				for b.Loop() {
					id, err := c.Next(ctx)
					if err != nil {
						b.Fatal(err)
					}
					sink = id
				}
				return
			}
			tag := c.Tag("order")
			for b.Loop() {
				id, err := tag.Next(ctx)
				if err != nil {
					b.Fatal(err)
				}
				sink = id
			}
		})
	}
}
