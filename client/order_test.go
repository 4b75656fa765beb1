package client_test

import (
	"context"
	"errors"
	"net"
	"net/http/httptest"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/firn-id/firn/api"
	"github.com/firn-id/firn/client"
	"github.com/firn-id/firn/firnpb"
	"github.com/firn-id/firn/internal/idtest"
	"github.com/firn-id/firn/opaque"
	"github.com/firn-id/firn/server"
	"github.com/firn-id/firn/snowflake"
)

// orderServer serves snowflake IDs of l in process, over HTTP and gRPC,
// permuted by perm when it is set (opaque mode).
func orderServer(t *testing.T, l snowflake.Layout, perm *opaque.Permutation) (base, addr string) {
	t.Helper()
	g, err := snowflake.New(snowflake.Config{Layout: l, Node: 3, Reservation: snowflake.Unreserved()})
	if err != nil {
		t.Fatal(err)
	}
	s, err := server.New(server.Config{Snowflake: g, Opaque: perm})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s.Handler())
	t.Cleanup(hs.Close)
	gs := s.GRPC()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = gs.Serve(ln) }()
	t.Cleanup(gs.Stop)
	return hs.URL, ln.Addr().String()
}

// TestBatchesOfEveryOrderAreServed: a server whose layout puts the
// sequence above time issues batches that drop at every tick, and a
// server in opaque mode batches in no order; each says so (Firn-Order),
// so Next, NextN and Fetch over HTTP and gRPC serve every ID, none twice,
// with no failure counted, where the client refused every batch crossing
// a tick as a bad answer and marked the server down.
func TestBatchesOfEveryOrderAreServed(t *testing.T) {
	const (
		tm  = snowflake.PartTime
		nd  = snowflake.PartNode
		seq = snowflake.PartSequence
	)
	epoch := time.UnixMilli(time.Now().Add(-time.Hour).UnixMilli())
	layout := func(order ...snowflake.Part) snowflake.Layout {
		// 256 IDs a tick of 1 ms: a batch of 500 crosses a tick.
		return snowflake.Layout{Name: "ordered", Epoch: epoch, Tick: time.Millisecond, TimeBits: 41,
			Node: []snowflake.Field{{Name: "worker", Bits: 10}}, SequenceBits: 8, Order: order}
	}
	perm, err := opaque.New([]byte("0123456789abcdef"), []byte("orders"), layout(tm, nd, seq).Bits())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		layout snowflake.Layout
		perm   *opaque.Permutation
	}{
		{name: "sequence, time, node", layout: layout(seq, tm, nd)},
		{name: "sequence, node, time", layout: layout(seq, nd, tm)},
		{name: "node, sequence, time", layout: layout(nd, seq, tm)},
		{name: "node, time, sequence", layout: layout(nd, tm, seq)},
		{name: "opaque mode", layout: layout(tm, nd, seq), perm: perm},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base, addr := orderServer(t, tc.layout, tc.perm)
			for _, cfg := range []client.Config{
				{Endpoints: []string{base}, HTTP: true},
				{Endpoints: []string{addr}},
			} {
				c, err := client.New(cfg)
				if err != nil {
					t.Fatal(err)
				}
				rec := idtest.NewRecorder(t)
				ctx := context.Background()
				dst := make([]int64, 500)
				for range 4 {
					n, err := c.Fetch(ctx, dst)
					if err != nil {
						t.Fatalf("Fetch of %s: %d, %v", cfg.Endpoints[0], n, err)
					}
					rec.AddUnordered(dst...)
				}
				for range 4 {
					n, err := c.NextN(ctx, dst)
					if err != nil {
						t.Fatalf("NextN of %s: %d, %v", cfg.Endpoints[0], n, err)
					}
					rec.AddUnordered(dst...)
				}
				for range 2000 {
					id, err := c.Next(ctx)
					if err != nil {
						t.Fatalf("Next of %s: %v", cfg.Endpoints[0], err)
					}
					rec.AddUnordered(id)
				}
				if f := c.Stats().Endpoints[0].Failures; f != 0 {
					t.Errorf("%s: %d failures counted", cfg.Endpoints[0], f)
				}
				_ = c.Close(ctx)
			}
		})
	}
}

// disorderedServer answers every gRPC Batch with the same IDs out of
// order, and the response header order unless it is empty.
type disorderedServer struct {
	firnpb.UnimplementedFirnServer
	order string
}

func (s *disorderedServer) Batch(ctx context.Context, req *firnpb.BatchRequest) (*firnpb.BatchResponse, error) {
	if s.order != "" {
		if err := grpc.SetHeader(ctx, metadata.Pairs(api.Order, s.order)); err != nil {
			return nil, err
		}
	}
	ids := make([]int64, req.Count)
	for i := range ids {
		ids[i] = int64(len(ids) - i)
	}
	return &firnpb.BatchResponse{Ids: ids}, nil
}

// TestGRPCBatchOutOfOrderNeedsItsHeader: over gRPC, a snowflake batch out
// of order is served when its response header says unordered, and refused
// as a bad answer when the header says nothing or increasing.
func TestGRPCBatchOutOfOrderNeedsItsHeader(t *testing.T) {
	for _, tc := range []struct {
		order string
		ok    bool
	}{{"", false}, {api.OrderIncreasing, false}, {"Unordered", false}, {api.OrderUnordered, true}} {
		gs := grpc.NewServer()
		firnpb.RegisterFirnServer(gs, &disorderedServer{order: tc.order})
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		go func() { _ = gs.Serve(ln) }()
		c, err := client.New(client.Config{Endpoints: []string{ln.Addr().String()}, Attempts: 1})
		if err != nil {
			t.Fatal(err)
		}
		dst := make([]int64, 3)
		n, err := c.Fetch(context.Background(), dst)
		var e *client.Error
		switch {
		case tc.ok && (err != nil || n != 3):
			t.Errorf("order %q: %v, %v; want the batch", tc.order, dst[:n], err)
		case !tc.ok && (n != 0 || !errors.As(err, &e) || e.Code != "bad_answer"):
			t.Errorf("order %q: %v, %v; want nothing and a bad_answer error", tc.order, dst[:n], err)
		}
		_ = c.Close(context.Background())
		gs.Stop()
	}
}
