package server_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/firn-id/firn/firnpb"
	"github.com/firn-id/firn/internal/idtest"
	"github.com/firn-id/firn/segment"
	"github.com/firn-id/firn/segment/segmenttest"
	"github.com/firn-id/firn/server"
	"github.com/firn-id/firn/snowflake"
)

func grpcClient(t *testing.T, tokens []server.Token) firnpb.FirnClient {
	t.Helper()
	g, err := snowflake.New(snowflake.Config{Reservation: snowflake.Unreserved()})
	if err != nil {
		t.Fatal(err)
	}
	s := segmenttest.NewMemStore()
	s.CreateTag(context.Background(), "order", 1, 100, "")
	a, _ := segment.NewAllocator(s, segment.Config{})
	t.Cleanup(func() { a.Close(context.Background()) })
	auth, err := server.NewAuth(tokens, server.Anonymous{})
	if err != nil {
		t.Fatal(err)
	}
	return firnpb.NewFirnClient(serveGRPC(t, &server.Config{Snowflake: g, Segments: a, SegmentStore: s, Auth: auth, MaxBatch: 1000}))
}

// serveGRPC serves svc over gRPC on loopback and returns a connection.
func serveGRPC(t *testing.T, svc *server.Config) *grpc.ClientConn {
	t.Helper()
	return dialGRPC(t, newServer(t, svc))
}

// dialGRPC serves s's gRPC API on loopback and returns a connection, for
// tests that also use s's HTTP handler.
func dialGRPC(t *testing.T, s *server.Server) *grpc.ClientConn {
	t.Helper()
	srv := s.GRPC()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(srv.Stop)
	conn, err := grpc.Dial(ln.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

func code(err error) codes.Code { return status.Code(err) }

func TestGRPC(t *testing.T) {
	c := grpcClient(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rec := idtest.NewRecorder(t)
	one, err := c.Next(ctx, &firnpb.NextRequest{})
	if err != nil {
		t.Fatal(err)
	}
	rec.Add("snowflake", one.Id)
	batch, err := c.Batch(ctx, &firnpb.BatchRequest{Count: 500})
	if err != nil || len(batch.Ids) != 500 {
		t.Fatalf("Batch: %v", err)
	}
	rec.Add("snowflake", batch.Ids...)
	d, err := c.Decode(ctx, &firnpb.DecodeRequest{Id: uint64(one.Id)})
	if err != nil || d.UnixMs == 0 {
		t.Fatalf("Decode: %+v, %v", d, err)
	}
	seg, err := c.SegmentBatch(ctx, &firnpb.SegmentBatchRequest{Tag: "order", Count: 3})
	if err != nil || len(seg.Ids) != 3 || seg.Ids[0] != 1 {
		t.Fatalf("SegmentBatch: %v, %v", seg, err)
	}
	stream, err := c.Stream(ctx, &firnpb.StreamRequest{Batch: 100})
	if err != nil {
		t.Fatal(err)
	}
	for range 5 {
		msg, err := stream.Recv()
		if err != nil || len(msg.Ids) != 100 {
			t.Fatalf("Stream: %v", err)
		}
		rec.Add("snowflake", msg.Ids...)
	}
	for _, tc := range []struct {
		name string
		err  error
		want codes.Code
	}{
		{"count 0", func() error { _, err := c.Batch(ctx, &firnpb.BatchRequest{}); return err }(), codes.InvalidArgument},
		{"count over", func() error { _, err := c.Batch(ctx, &firnpb.BatchRequest{Count: 1001}); return err }(), codes.InvalidArgument},
		{"unknown tag", func() error { _, err := c.SegmentNext(ctx, &firnpb.SegmentRequest{Tag: "nope"}); return err }(), codes.NotFound},
		{"outside layout", func() error { _, err := c.Decode(ctx, &firnpb.DecodeRequest{Id: 1 << 63}); return err }(), codes.InvalidArgument},
	} {
		if code(tc.err) != tc.want {
			t.Errorf("%s: %v, want %s", tc.name, tc.err, tc.want)
		}
	}
	_, err = c.SegmentNext(ctx, &firnpb.SegmentRequest{Tag: "nope"})
	if msg := status.Convert(err).Message(); !strings.HasPrefix(msg, "unknown_tag: ") || !strings.Contains(msg, "firn tag create") {
		t.Errorf("unknown tag: message %q, want unknown_tag and how to create one", msg)
	}
}

func TestGRPCAuth(t *testing.T) {
	c := grpcClient(t, []server.Token{{Name: "orders", Secret: "orders-secret-012", Scopes: []string{"tag:order"}}})
	ctx := context.Background()
	if _, err := c.Next(ctx, &firnpb.NextRequest{}); code(err) != codes.Unauthenticated {
		t.Fatalf("no token: %v", err)
	}
	authed := metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer orders-secret-012")
	if _, err := c.Next(authed, &firnpb.NextRequest{}); code(err) != codes.PermissionDenied {
		t.Fatalf("no snowflake scope: %v", err)
	}
	if _, err := c.SegmentNext(authed, &firnpb.SegmentRequest{Tag: "order"}); err != nil {
		t.Fatalf("tag scope: %v", err)
	}
	stream, err := c.Stream(authed, &firnpb.StreamRequest{Batch: 10})
	if err == nil {
		_, err = stream.Recv()
	}
	if code(err) != codes.PermissionDenied {
		t.Fatalf("snowflake stream with a tag token: %v", err)
	}
}

// TestGRPCHealth: the standard health service answers SERVING without a
// token while the service is ready, NOT_SERVING once it is not.
func TestGRPCHealth(t *testing.T) {
	g, err := snowflake.New(snowflake.Config{Reservation: snowflake.Unreserved()})
	if err != nil {
		t.Fatal(err)
	}
	var notReady atomic.Bool
	auth, err := server.NewAuth([]server.Token{{Name: "a", Secret: "a-secret-0123456", Scopes: []string{"snowflake"}}}, server.Anonymous{})
	if err != nil {
		t.Fatal(err)
	}
	conn := serveGRPC(t, &server.Config{Snowflake: g, Auth: auth, Ready: func() error {
		if notReady.Load() {
			return errors.New("lease lost")
		}
		return nil
	}})
	h := healthpb.NewHealthClient(conn)
	ctx := context.Background()
	for _, tc := range []struct {
		name     string
		notReady bool
		service  string
		want     healthpb.HealthCheckResponse_ServingStatus
		code     codes.Code
	}{
		{name: "ready", service: "firn.v1.Firn", want: healthpb.HealthCheckResponse_SERVING},
		{name: "ready, whole server", service: "", want: healthpb.HealthCheckResponse_SERVING},
		{name: "not ready", notReady: true, service: "firn.v1.Firn", want: healthpb.HealthCheckResponse_NOT_SERVING},
		{name: "snowflake ready", service: server.HealthSnowflake, want: healthpb.HealthCheckResponse_SERVING},
		{name: "snowflake not ready", notReady: true, service: server.HealthSnowflake, want: healthpb.HealthCheckResponse_NOT_SERVING},
		{name: "segments off on this server", service: server.HealthSegments, want: healthpb.HealthCheckResponse_NOT_SERVING},
		{name: "unknown service", service: "other.v1.X", code: codes.NotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			notReady.Store(tc.notReady)
			resp, err := h.Check(ctx, &healthpb.HealthCheckRequest{Service: tc.service})
			if code(err) != tc.code {
				t.Fatalf("Check: %v, want code %v", err, tc.code)
			}
			if err == nil && resp.Status != tc.want {
				t.Fatalf("Check: %v, want %v", resp.Status, tc.want)
			}
		})
	}
	if _, err := firnpb.NewFirnClient(conn).Next(ctx, &firnpb.NextRequest{}); code(err) != codes.Unauthenticated {
		t.Fatalf("Next without a token: %v, want Unauthenticated", err)
	}
}
