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
	h := server.NewStarting(func() error { return errors.New("no free node") }, nil)
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
	server.NewStarting(func() error { return nil }, nil).ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/readyz", nil))
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
	srv := server.NewStarting(func() error { return errors.New("no free node") }, nil).GRPC()
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

// TestReadyzIsBrief: the open /readyz, while starting and once serving,
// gives a reason in Brief's words when it has some, and otherwise the
// message with its secrets redacted; /v1/status keeps the message,
// redacted.
func TestReadyzIsBrief(t *testing.T) {
	raw := errors.New("mysql tcp db:3306: Error 1064 (42000): syntax near 'x' in root@tcp(db:3306)/ids?password=hunter2")
	brief := func(err error) string {
		if err == raw {
			return "mysql tcp db:3306: other"
		}
		return ""
	}
	own := errors.New("node 3: lease lost: dial postgres://firn:hunter2@db/ids")
	for _, tc := range []struct {
		name string
		h    http.Handler
		want string
	}{
		{"starting, brief", server.NewStarting(func() error { return raw }, brief), "starting: mysql tcp db:3306: other"},
		{"starting, message", server.NewStarting(func() error { return own }, brief), "starting: node 3: lease lost: dial postgres://REDACTED@db/ids"},
		{"starting, no brief", server.NewStarting(func() error { return raw }, nil), "password=REDACTED"},
		{"serving, brief", handlerOf(t, &server.Config{Snowflake: unreservedGenerator(t), Ready: func() error { return raw }, Brief: brief}), `"mysql tcp db:3306: other"`},
		{"serving, message", handlerOf(t, &server.Config{Snowflake: unreservedGenerator(t), Ready: func() error { return own }, Brief: brief}), "postgres://REDACTED@db/ids"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := httptest.NewRecorder()
			tc.h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/readyz", nil))
			if body := w.Body.String(); w.Code != http.StatusServiceUnavailable || !strings.Contains(body, tc.want) ||
				strings.Contains(body, "hunter2") || strings.Contains(body, "1064") && tc.want != "password=REDACTED" {
				t.Fatalf("/readyz: %d %s; want 503 with %q, no password, no database message", w.Code, body, tc.want)
			}
		})
	}
	h := handlerOf(t, &server.Config{Snowflake: unreservedGenerator(t), Ready: func() error { return raw }, Brief: brief})
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/v1/status", nil))
	if body := w.Body.String(); !strings.Contains(body, "Error 1064") || strings.Contains(body, "hunter2") {
		t.Fatalf("/v1/status: %s; want the message, redacted", body)
	}
}
