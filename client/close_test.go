package client_test

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/firn-id/firn/client"
	"github.com/firn-id/firn/firnpb"
)

// gatedServer answers gRPC Batch with increasing IDs, each request once
// gate lets it through; asked says a request arrived.
type gatedServer struct {
	firnpb.UnimplementedFirnServer
	asked chan struct{}
	gate  chan struct{}
	next  int64
}

func (s *gatedServer) Batch(ctx context.Context, req *firnpb.BatchRequest) (*firnpb.BatchResponse, error) {
	s.asked <- struct{}{}
	<-s.gate
	ids := make([]int64, req.Count)
	for i := range ids {
		s.next++
		ids[i] = s.next
	}
	return &firnpb.BatchResponse{Ids: ids}, nil
}

// TestCloseLetsACallOnItsOwnContextFinishItsRequest: as Close says, a
// Fetch running when the client is closed is not ended by it: its gRPC
// request in flight is answered on its connection, and its next request
// fails with ErrClosed.
func TestCloseLetsACallOnItsOwnContextFinishItsRequest(t *testing.T) {
	s := &gatedServer{asked: make(chan struct{}, 2), gate: make(chan struct{})}
	gs := grpc.NewServer()
	firnpb.RegisterFirnServer(gs, s)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = gs.Serve(ln) }()
	defer gs.Stop()
	c, err := client.New(client.Config{Endpoints: []string{ln.Addr().String()}, MaxBatch: 3, Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	type result struct {
		n   int
		err error
	}
	done := make(chan result, 1)
	dst := make([]int64, 6)
	go func() {
		n, err := c.Fetch(context.Background(), dst)
		done <- result{n, err}
	}()
	<-s.asked
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	close(s.gate)
	r := <-done
	if r.n != 3 || !errors.Is(r.err, client.ErrClosed) {
		t.Fatalf("Fetch across Close: %d (%v), %v; want its first batch of 3, then ErrClosed", r.n, dst[:r.n], r.err)
	}
}
