package client

import (
	"context"
	"testing"
)

// BenchmarkNext takes IDs from the buffer, refilled in the background
// from an in-memory server. Bar: ≤ 20 ns single goroutine.
func BenchmarkNext(b *testing.B) {
	for _, mode := range []string{"snowflake", "tag"} {
		b.Run(mode, func(b *testing.B) {
			c, _ := fakeClient(b, 1, Config{})
			next := c.Next
			if mode == "tag" {
				next = c.Tag("order").Next
			}
			ctx := context.Background()
			if _, err := next(ctx); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for b.Loop() {
				if _, err := next(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
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
