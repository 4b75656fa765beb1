package server_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/firn-id/firn/api"
	"github.com/firn-id/firn/firnpb"
	"github.com/firn-id/firn/opaque"
	"github.com/firn-id/firn/segment"
	"github.com/firn-id/firn/segment/segmenttest"
	"github.com/firn-id/firn/server"
	"github.com/firn-id/firn/snowflake"
)

// TestBatchAnswersSayTheirOrder: every batch answer of snowflake or
// segment IDs, over HTTP (Firn-Order) and gRPC (response header
// firn-order, Batch, SegmentBatch and Stream), says how its IDs are
// ordered: increasing for a layout with time above the sequence, unordered
// for one with the sequence above time (whose batches drop at every tick,
// as the IDs answered show) or in opaque mode, and unordered for every
// segment batch. Without it a client cannot tell those servers' good
// batches from a broken one's.
func TestBatchAnswersSayTheirOrder(t *testing.T) {
	const (
		tm  = snowflake.PartTime
		nd  = snowflake.PartNode
		seq = snowflake.PartSequence
	)
	epoch := time.UnixMilli(time.Now().Add(-time.Hour).UnixMilli())
	layout := func(order ...snowflake.Part) snowflake.Layout {
		return snowflake.Layout{Name: "ordered", Epoch: epoch, Tick: time.Millisecond, TimeBits: 41,
			Node: []snowflake.Field{{Name: "worker", Bits: 10}}, SequenceBits: 8, Order: order}
	}
	perm, err := opaque.New([]byte("0123456789abcdef"), []byte("orders"), layout().Bits())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		layout snowflake.Layout
		perm   *opaque.Permutation
		want   string
	}{
		{"the default order", layout(), nil, api.OrderIncreasing},
		{"time, sequence, node", layout(tm, seq, nd), nil, api.OrderIncreasing},
		{"node, time, sequence", layout(nd, tm, seq), nil, api.OrderIncreasing},
		{"sequence, time, node", layout(seq, tm, nd), nil, api.OrderUnordered},
		{"sequence, node, time", layout(seq, nd, tm), nil, api.OrderUnordered},
		{"node, sequence, time", layout(nd, seq, tm), nil, api.OrderUnordered},
		{"opaque mode", layout(), perm, api.OrderUnordered},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, err := snowflake.New(snowflake.Config{Layout: tc.layout, Node: 1, Reservation: snowflake.Unreserved()})
			if err != nil {
				t.Fatal(err)
			}
			store := segmenttest.NewMemStore()
			if err := store.CreateTag(context.Background(), "order", 1, 100, ""); err != nil {
				t.Fatal(err)
			}
			alloc, err := segment.NewAllocator(store, segment.Config{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = alloc.Close(context.Background()) })
			s := newServer(t, &server.Config{Snowflake: g, Opaque: tc.perm, Segments: alloc, SegmentStore: store})
			h := s.Handler()
			// 600 IDs of at most 256 a tick cross two ticks.
			w := get(h, "GET", "/v1/snowflake/batch?count=600&format=text")
			if got := w.Header().Values(api.Order); w.Code != 200 || len(got) != 1 || got[0] != tc.want {
				t.Errorf("HTTP snowflake batch: %d, %s %q; want %q", w.Code, api.Order, got, tc.want)
			}
			if increasing := textIncreasing(t, w.Body.String()); increasing != (tc.want == api.OrderIncreasing) {
				t.Errorf("HTTP snowflake batch increasing: %v, said %s", increasing, tc.want)
			}
			w = get(h, "GET", "/v1/segments/order/batch?count=3&format=text")
			if got := w.Header().Values(api.Order); w.Code != 200 || len(got) != 1 || got[0] != api.OrderUnordered {
				t.Errorf("HTTP segment batch: %d, %s %q; want %q", w.Code, api.Order, got, api.OrderUnordered)
			}
			if got := get(h, "GET", "/v1/snowflake/batch?count=0").Header().Get(api.Order); got != "" {
				t.Errorf("a refused batch says %s %q", api.Order, got)
			}

			c := firnpb.NewFirnClient(dialGRPC(t, s))
			ctx := context.Background()
			var md metadata.MD
			if _, err := c.Batch(ctx, &firnpb.BatchRequest{Count: 600}, grpc.Header(&md)); err != nil || !said(md, tc.want) {
				t.Errorf("gRPC Batch: %v, header %v; want %s", err, md, tc.want)
			}
			md = nil
			if _, err := c.SegmentBatch(ctx, &firnpb.SegmentBatchRequest{Tag: "order", Count: 3}, grpc.Header(&md)); err != nil || !said(md, api.OrderUnordered) {
				t.Errorf("gRPC SegmentBatch: %v, header %v; want %s", err, md, api.OrderUnordered)
			}
			for tag, want := range map[string]string{"": tc.want, "order": api.OrderUnordered} {
				sctx, cancel := context.WithCancel(ctx)
				st, err := c.Stream(sctx, &firnpb.StreamRequest{Tag: tag, Batch: 3})
				if err == nil {
					md, err = st.Header()
				}
				if err != nil || !said(md, want) {
					t.Errorf("gRPC Stream of %q: %v, header %v; want %s", tag, err, md, want)
				}
				cancel()
			}
		})
	}
}

// said reports whether md's order header is exactly want.
func said(md metadata.MD, want string) bool {
	got := md.Get(api.Order)
	return len(got) == 1 && got[0] == want
}

// textIncreasing reports whether a text answer's IDs strictly increase.
func textIncreasing(t *testing.T, body string) bool {
	t.Helper()
	prev := int64(-1)
	for line := range strings.Lines(body) {
		id, err := strconv.ParseInt(strings.TrimSuffix(line, "\n"), 10, 64)
		if err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		if id <= prev {
			return false
		}
		prev = id
	}
	return true
}
