package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

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
	h := server.NewStarting(server.StartingConfig{Why: func() error { return errors.New("no free node") }})
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
	server.NewStarting(server.StartingConfig{Why: func() error { return nil }}).ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/readyz", nil))
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
	srv := server.NewStarting(server.StartingConfig{Why: func() error { return errors.New("no free node") }}).GRPC()
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

// TestStartingStatusPage: while a process waits for its store, / serves
// the status page and /v1/status (scope status, as on a Server) says why
// it waits — the message, where the open /readyz has Brief's words — for
// which store and how long, with no password in it.
func TestStartingStatusPage(t *testing.T) {
	refused := errors.New("etcd http://firn:hunter2@127.0.0.1:2379: unreachable: dial tcp 127.0.0.1:2379: connect: connection refused")
	auth, err := server.NewAuth([]server.Token{{Name: "ops", Secret: "ops-status-token-0123", Scopes: []string{"status"}}}, server.Anonymous{})
	if err != nil {
		t.Fatal(err)
	}
	brief := func(error) string { return `etcd namespace "/firn/default/": refused` }
	h := server.NewStarting(server.StartingConfig{Why: func() error { return refused }, Brief: brief, Store: `etcd namespace "/firn/default/"`, Auth: auth})
	for path, ct := range map[string]string{"/": "text/html", "/status.js": "text/javascript", "/status.css": "text/css", "/favicon.svg": "image/svg+xml"} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, path, nil))
		if w.Code != http.StatusOK || !strings.HasPrefix(w.Header().Get("Content-Type"), ct) || w.Header().Get("Content-Security-Policy") != server.PageCSP {
			t.Errorf("%s while starting: %d %q, CSP %q; want 200 %s with the page's CSP", path, w.Code, w.Header().Get("Content-Type"), w.Header().Get("Content-Security-Policy"), ct)
		}
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/v1/status", nil))
	if w.Code != http.StatusUnauthorized {
		t.Errorf("/v1/status without a token while starting: %d %s, want 401 as on a Server", w.Code, w.Body)
	}
	time.Sleep(20 * time.Millisecond)
	r := httptest.NewRequest(http.MethodGet, "/v1/status", nil)
	r.Header.Set("Authorization", "Bearer ops-status-token-0123")
	w = httptest.NewRecorder()
	h.ServeHTTP(w, r)
	var doc struct {
		Ready    bool
		NotReady string `json:"not_ready"`
		Version  string
		Starting *struct {
			Store     string
			WaitingMS int64 `json:"waiting_ms"`
		}
		Tags   []any
		Errors []any
	}
	if err := json.Unmarshal(w.Body.Bytes(), &doc); w.Code != http.StatusOK || err != nil {
		t.Fatalf("/v1/status while starting: %d %s (%v)", w.Code, w.Body, err)
	}
	if doc.Ready || !strings.Contains(doc.NotReady, "connection refused") || doc.Starting == nil ||
		doc.Starting.Store != `etcd namespace "/firn/default/"` || doc.Starting.WaitingMS < 20 || doc.Version == "" || doc.Tags == nil || doc.Errors == nil {
		t.Errorf("/v1/status while starting: %s", w.Body)
	}
	if strings.Contains(w.Body.String(), "hunter2") {
		t.Errorf("/v1/status while starting shows the password: %s", w.Body)
	}
	w = httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/readyz", nil))
	if body := w.Body.String(); !strings.Contains(body, `starting: etcd namespace \"/firn/default/\": refused`) || strings.Contains(body, "dial tcp") {
		t.Errorf("/readyz while starting: %s; want Brief's words alone", body)
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
		{"starting, brief", server.NewStarting(server.StartingConfig{Why: func() error { return raw }, Brief: brief}), "starting: mysql tcp db:3306: other"},
		{"starting, message", server.NewStarting(server.StartingConfig{Why: func() error { return own }, Brief: brief}), "starting: node 3: lease lost: dial postgres://REDACTED@db/ids"},
		{"starting, no brief", server.NewStarting(server.StartingConfig{Why: func() error { return raw }}), "password=REDACTED"},
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
