package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"
)

// TestAnonymousLiftsOnlyTheTokenRule: auth.anonymous lets HTTP listen off
// loopback without tokens, and nothing else: the node must still come
// from a shared registry or be named, gRPC off loopback still needs
// tokens, and without tokens or anonymous scopes the address is refused.
func TestAnonymousLiftsOnlyTheTokenRule(t *testing.T) {
	dir := t.TempDir()
	anon := dir + "/anon.yaml"
	if err := os.WriteFile(anon, []byte("auth:\n  anonymous: [snowflake, \"tag:order\"]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		args    []string
		wantErr string // empty: accepted
	}{
		{name: "anonymous, static node", args: []string{"--config", anon, "--node", "3", "--grpc", "off"}},
		{name: "anonymous, implicit node", args: []string{"--config", anon, "--grpc", "off"}, wantErr: "name a registry shared by every machine"},
		{name: "anonymous, gRPC off loopback", args: []string{"--config", anon, "--node", "3", "--grpc", "0.0.0.0:9090"},
			wantErr: "auth.anonymous opens HTTP routes only"},
		{name: "neither tokens nor anonymous", args: []string{"--node", "3", "--grpc", "off"}, wantErr: "configure auth.tokens, or auth.anonymous"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"config", "check", "--http", "0.0.0.0:8080", "--data-dir", dir + "/data"}, tc.args...)
			out, errOut, code := runCLI(args...)
			switch {
			case tc.wantErr == "" && code != 0:
				t.Fatalf("exit %d, %q: want accepted", code, errOut)
			case tc.wantErr != "" && (code != 2 || out != "" || !strings.Contains(errOut, tc.wantErr)):
				t.Fatalf("exit %d, stdout %q, stderr %q: want exit 2 with %q", code, out, errOut, tc.wantErr)
			}
		})
	}
}

// outsideAddress is an address of this machine that is not loopback, for
// reaching a server on 0.0.0.0 as another host would; 127.0.0.1 when the
// machine has none (whether firn serve counts as off loopback depends on
// the address it listens on, not on the caller's).
func outsideAddress(t *testing.T) string {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && !n.IP.IsLoopback() {
			return n.IP.String()
		}
	}
	t.Log("no address off loopback on this machine: calling 127.0.0.1")
	return "127.0.0.1"
}

// TestServeAnonymousOffLoopback: firn serve on 0.0.0.0 with anonymous
// grants and no token, called from another interface without
// credentials: the granted ID routes answer, everything else is closed
// (decoding 401, Tinyid's nextSegmentId 401 without range:TAG, admin 403
// with no admin token), segments on the local store stay off (the
// local-segments rule still applies), the start is logged loudly, and
// the metrics count the anonymous requests.
func TestServeAnonymousOffLoopback(t *testing.T) {
	var logs syncBuffer
	old := logOutput
	logOutput = &logs
	t.Cleanup(func() { logOutput = old })
	dir := t.TempDir()
	port := freePort(t)[len("127.0.0.1:"):]
	path := dir + "/firn.yaml"
	doc := "registry:\n  data_dir: " + dir + "/data\nauth:\n  anonymous: [snowflake, \"tag:order\"]\n  anonymous_rate: 1000\n"
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, _, code := runCLI("config", "print", "--config", path); code != 0 ||
		!strings.Contains(out, "anonymous:\n        - snowflake\n        - tag:order") || !strings.Contains(out, "anonymous_rate: 1000") {
		t.Fatalf("config print (exit %d) does not show the anonymous grants:\n%s", code, out)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- serve(ctx, []string{"--config", path, "--http", "0.0.0.0:" + port, "--grpc", "off", "--store", "local", "--node", "3",
			"--log-format", "json"}, io.Discard)
	}()
	base := "http://" + net.JoinHostPort(outsideAddress(t), port)
	call := func(method, route string) (int, string) {
		t.Helper()
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			req, _ := http.NewRequest(method, base+route, nil)
			resp, err := http.DefaultClient.Do(req)
			if err == nil && !starting(resp) {
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				return resp.StatusCode, string(b)
			}
			if err == nil {
				resp.Body.Close()
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s %s: no answer: %v", method, route, err)
			}
		}
	}
	for _, tt := range []struct {
		method, route string
		status        int
		body          string
	}{
		{"GET", "/api/snowflake/get/any", 200, ""},
		{"POST", "/api/snowflake/get/any", 200, ""},
		{"GET", "/v1/snowflake/next", 200, `"id":"`},
		{"GET", "/v1/snowflake/decode/1", 401, "bearer token"},
		{"GET", "/api/segment/get/order", 503, "--local-segments"},
		{"GET", "/api/segment/get/user", 401, ""},
		{"GET", "/tinyid/id/nextSegmentId?bizType=order", 401, "token is error"},
		{"GET", "/v1/segments", 403, "admin"},
		{"POST", "/v1/segments", 403, "admin"},
	} {
		if status, body := call(tt.method, tt.route); status != tt.status || !strings.Contains(body, tt.body) {
			t.Errorf("%s %s without credentials = %d %q, want %d containing %q", tt.method, tt.route, status, body, tt.status, tt.body)
		}
	}
	if _, m := call("GET", "/metrics"); !strings.Contains(m, `firn_anonymous_requests_total{route="GET /api/snowflake/get/{key}"} 1`) {
		t.Errorf("metrics do not count the anonymous Leaf request")
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if l := logs.String(); !strings.Contains(l, `"level":"WARN","msg":"ANONYMOUS ACCESS`) || !strings.Contains(l, `"scopes":"snowflake,tag:order"`) ||
		!strings.Contains(l, `"rate_per_client":1000`) {
		t.Errorf("the start does not warn of the anonymous grants:\n%s", l)
	}
}
