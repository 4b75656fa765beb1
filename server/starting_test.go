package server_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	grpcstatus "google.golang.org/grpc/status"

	"github.com/firn-id/firn/firnpb"
	"github.com/firn-id/firn/server"
)

// TestStartingMetrics: while a process waits for its first node, /metrics
// answers with the build and firn_lease_held 0, /healthz 200, and every
// other route 503 not_ready with the reason, in server's error shape.
func TestStartingMetrics(t *testing.T) {
	h := server.NewStarting(func() error { return errors.New("no free node") })
	for _, tc := range []struct {
		path   string
		status int
		want   string
	}{
		{"/metrics", http.StatusOK, "firn_lease_held 0"},
		{"/metrics", http.StatusOK, "firn_build_info{"},
		{"/healthz", http.StatusOK, "(starting)"},
		{"/readyz", http.StatusServiceUnavailable, "no free node"},
		{"/v1/snowflake/next", http.StatusServiceUnavailable, `{"error":{"code":"not_ready","message":"starting: no free node"}}`},
	} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, tc.path, nil))
		if w.Code != tc.status || !strings.Contains(w.Body.String(), tc.want) {
			t.Errorf("%s: %d %s, want %d with %q", tc.path, w.Code, w.Body, tc.status, tc.want)
		}
	}
	w := httptest.NewRecorder()
	server.NewStarting(func() error { return nil }).ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/readyz", nil))
	if !strings.Contains(w.Body.String(), "starting: waiting for the store to answer and a node to be held") {
		t.Errorf("/readyz with nothing to say: %s", w.Body)
	}
}

// TestStartingGRPC: the starting gRPC port answers health NOT_SERVING and
// every call Unavailable with the same reason as HTTP.
func TestStartingGRPC(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := server.NewStarting(func() error { return errors.New("no free node") }).GRPC()
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(srv.Stop)
	conn, err := grpc.Dial(ln.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	resp, err := healthpb.NewHealthClient(conn).Check(context.Background(), &healthpb.HealthCheckRequest{Service: server.HealthSnowflake})
	if err != nil || resp.Status != healthpb.HealthCheckResponse_NOT_SERVING {
		t.Fatalf("health while starting: %v, %v; want NOT_SERVING", resp, err)
	}
	_, err = firnpb.NewFirnClient(conn).Next(context.Background(), &firnpb.NextRequest{})
	if st := grpcstatus.Convert(err); st.Code() != codes.Unavailable || st.Message() != "not_ready: starting: no free node" {
		t.Fatalf("Next while starting: %v; want Unavailable, not_ready: starting: no free node", err)
	}
}
