package server_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/firn-id/firn/firnpb"
	"github.com/firn-id/firn/server"
)

// TestGRPCPanicIsInternalAndLogged: a panicking handler, unary or
// streaming, answers Internal — it used to end the process, as grpc-go
// does not recover — and logs the panic with its stack; the server keeps
// serving.
func TestGRPCPanicIsInternalAndLogged(t *testing.T) {
	svc, _, logs := edgeService(t, false)
	c := firnpb.NewFirnClient(serveGRPC(t, svc))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := c.SegmentNext(ctx, &firnpb.SegmentRequest{Tag: "boom"}); code(err) != codes.Internal {
		t.Errorf("unary: %v, want Internal", err)
	}
	stream, err := c.Stream(ctx, &firnpb.StreamRequest{Tag: "boom", Batch: 10})
	if err == nil {
		_, err = stream.Recv()
	}
	if code(err) != codes.Internal {
		t.Errorf("stream: %v, want Internal", err)
	}
	log := logs.String()
	if strings.Count(log, "panic serving a request") != 2 || !strings.Contains(log, "store bug: boom") || !strings.Contains(log, "goroutine ") {
		t.Fatalf("the panics are not logged with their stacks:\n%s", log)
	}
	if _, err := c.SegmentNext(ctx, &firnpb.SegmentRequest{Tag: "order"}); err != nil {
		t.Fatalf("after the panics: %v", err)
	}
}

// TestGRPCOverlongTagNeverReachesTheStore: as over HTTP, a tag past
// MaxTagBytes is InvalidArgument before any lookup.
func TestGRPCOverlongTagNeverReachesTheStore(t *testing.T) {
	svc, store, _ := edgeService(t, false)
	c := firnpb.NewFirnClient(serveGRPC(t, svc))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	long := strings.Repeat("t", server.MaxTagBytes+1)
	_, err1 := c.SegmentNext(ctx, &firnpb.SegmentRequest{Tag: long})
	_, err2 := c.SegmentBatch(ctx, &firnpb.SegmentBatchRequest{Tag: long, Count: 1})
	stream, err3 := c.Stream(ctx, &firnpb.StreamRequest{Tag: long, Batch: 1})
	if err3 == nil {
		_, err3 = stream.Recv()
	}
	for i, err := range []error{err1, err2, err3} {
		if code(err) != codes.InvalidArgument {
			t.Errorf("call %d: %v, want InvalidArgument", i, err)
		}
	}
	if n := store.tag.Load(); n != 0 {
		t.Fatalf("the store was asked for a tag %d times; want none", n)
	}
}

// TestGRPCMessageIsCapped: a message past MaxBody is refused with
// ResourceExhausted.
func TestGRPCMessageIsCapped(t *testing.T) {
	svc, _, _ := edgeService(t, false)
	c := firnpb.NewFirnClient(serveGRPC(t, svc))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := c.SegmentNext(ctx, &firnpb.SegmentRequest{Tag: strings.Repeat("t", server.DefaultMaxBody)})
	if code(err) != codes.ResourceExhausted {
		t.Fatalf("a %d-byte message: %v, want ResourceExhausted", server.DefaultMaxBody, err)
	}
}

// TestGRPCHealthDoesNoStoreIO: the health check, like /readyz, answers
// from memory.
func TestGRPCHealthDoesNoStoreIO(t *testing.T) {
	svc, store, _ := edgeService(t, false)
	conn := serveGRPC(t, svc)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := firnpb.NewFirnClient(conn).SegmentNext(ctx, &firnpb.SegmentRequest{Tag: "order"}); err != nil {
		t.Fatal(err)
	}
	tag, tags := store.tag.Load(), store.tags.Load()
	resp, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{})
	if err != nil || resp.Status != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("Check: %v, %v", resp, err)
	}
	if store.tag.Load() != tag || store.tags.Load() != tags {
		t.Fatal("the health check called the store")
	}
}
