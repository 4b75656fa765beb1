package client_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/firn-id/firn/client"
)

// TestHTTPAnswerCutShort: a body whose last line lacks its newline was cut
// short, and its last "ID" may be a prefix of one; it is refused, never
// served.
func TestHTTPAnswerCutShort(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		ok         bool
	}{
		{name: "whole", body: "123454\n123455\n123456\n", ok: true},
		{name: "cut in the last ID", body: "123454\n123455\n123", ok: false},
		{name: "not IDs", body: "123454\nabc\n123456\n", ok: false},
		{name: "empty", body: "", ok: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = w.Write([]byte(tc.body))
			}))
			defer hs.Close()
			c, err := client.New(client.Config{Endpoints: []string{hs.URL}, HTTP: true, Buffer: 3, MaxBuffer: 3, MaxBatch: 3, Attempts: 1})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close(context.Background())
			ids := make([]int64, 3)
			n, err := c.Tag("order").NextN(context.Background(), ids)
			if tc.ok && (err != nil || ids[2] != 123456) {
				t.Fatalf("NextN: %v %v", ids[:n], err)
			}
			var e *client.Error
			if !tc.ok && (!errors.Is(err, client.ErrUnavailable) || !errors.As(err, &e) || e.Code != "bad_answer" || n != 0) {
				t.Fatalf("NextN on %q: %v, %v; want nothing and a bad_answer error", tc.body, ids[:n], err)
			}
		})
	}
}

func TestNewRefusesABadConfig(t *testing.T) {
	for _, tc := range []struct {
		name    string
		cfg     client.Config
		wantErr string
	}{
		{name: "no endpoint", cfg: client.Config{}, wantErr: "Config.Endpoints is empty"},
		{name: "a URL for gRPC", cfg: client.Config{Endpoints: []string{"http://a:1"}}, wantErr: "want host:port of a gRPC listener"},
		{name: "an address for HTTP", cfg: client.Config{Endpoints: []string{"a:1"}, HTTP: true}, wantErr: "want a base URL"},
		{name: "a path in the URL", cfg: client.Config{Endpoints: []string{"http://a:1/v1"}, HTTP: true}, wantErr: "want a base URL"},
		{name: "no port", cfg: client.Config{Endpoints: []string{"127.0.0.1:"}}, wantErr: `endpoint "127.0.0.1:": no port`},
		{name: "port too large", cfg: client.Config{Endpoints: []string{"127.0.0.1:70000"}}, wantErr: `endpoint "127.0.0.1:70000": port "70000": want 1 to 65535`},
		{name: "negative port", cfg: client.Config{Endpoints: []string{"127.0.0.1:-1"}}, wantErr: `endpoint "127.0.0.1:-1": port "-1"`},
		{name: "port zero", cfg: client.Config{Endpoints: []string{"127.0.0.1:0"}}, wantErr: `port "0"`},
		{name: "named port", cfg: client.Config{Endpoints: []string{"127.0.0.1:grpc"}}, wantErr: `port "grpc"`},
		{name: "no host", cfg: client.Config{Endpoints: []string{":9090"}}, wantErr: `endpoint ":9090": no host`},
		{name: "no colon", cfg: client.Config{Endpoints: []string{"127.0.0.1"}}, wantErr: "want host:port"},
		{name: "a query for gRPC", cfg: client.Config{Endpoints: []string{"a:1?x=1"}}, wantErr: "want host:port"},
		{name: "listed twice", cfg: client.Config{Endpoints: []string{"a:1", "b:2", "A:1"}}, wantErr: `endpoint "A:1": listed twice`},
		{name: "URL port too large", cfg: client.Config{Endpoints: []string{"http://127.0.0.1:70000"}, HTTP: true}, wantErr: `port "70000"`},
		{name: "URL negative port", cfg: client.Config{Endpoints: []string{"http://127.0.0.1:-1"}, HTTP: true}, wantErr: "want a base URL"},
		{name: "URL empty port", cfg: client.Config{Endpoints: []string{"http://127.0.0.1:"}, HTTP: true}, wantErr: "an empty port"},
		{name: "URL query", cfg: client.Config{Endpoints: []string{"http://127.0.0.1:1?x=1"}, HTTP: true}, wantErr: "a query"},
		{name: "URL empty query", cfg: client.Config{Endpoints: []string{"http://127.0.0.1:1?"}, HTTP: true}, wantErr: "a query"},
		{name: "URL fragment", cfg: client.Config{Endpoints: []string{"http://127.0.0.1:1#x"}, HTTP: true}, wantErr: "a fragment"},
		{name: "URL scheme", cfg: client.Config{Endpoints: []string{"ftp://127.0.0.1:1"}, HTTP: true}, wantErr: `scheme "ftp"`},
		{name: "URL no host", cfg: client.Config{Endpoints: []string{"http:///v1"}, HTTP: true}, wantErr: "no host"},
		{name: "URL twice", cfg: client.Config{Endpoints: []string{"http://a:1", "http://a:1/"}, HTTP: true}, wantErr: "listed twice"},
		{name: "URL credentials, not printed", cfg: client.Config{Endpoints: []string{"http://u:s3cret@a:1"}, HTTP: true}, wantErr: `endpoint "http://u:REDACTED@a:1": credentials in the URL`},
		{name: "URL query token, not printed", cfg: client.Config{Endpoints: []string{"http://a:1?token=s3cret"}, HTTP: true}, wantErr: `endpoint "http://a:1?token=REDACTED": a query`},
		{name: "URL bare query token, not printed", cfg: client.Config{Endpoints: []string{"http://a:1?s3cret"}, HTTP: true}, wantErr: `endpoint "http://a:1?REDACTED": a query`},
		{name: "URL fragment token, not printed", cfg: client.Config{Endpoints: []string{"http://a:1#s3cret"}, HTTP: true}, wantErr: "a fragment"},
		{name: "unparsable URL with a query, not printed", cfg: client.Config{Endpoints: []string{"http://a:1%zz?token=s3cret"}, HTTP: true}, wantErr: `want a base URL`},
		{name: "refill", cfg: client.Config{Endpoints: []string{"a:1"}, Refill: 1.5}, wantErr: "Config.Refill: want between 0 and 1"},
		{name: "max buffer", cfg: client.Config{Endpoints: []string{"a:1"}, Buffer: 10, MaxBuffer: 5}, wantErr: "Config.MaxBuffer: want at least Buffer (10)"},
		{name: "ahead", cfg: client.Config{Endpoints: []string{"a:1"}, MaxAge: time.Second, Ahead: time.Second}, wantErr: "Config.Ahead"},
		{name: "batch", cfg: client.Config{Endpoints: []string{"a:1"}, MaxBatch: -1}, wantErr: "Config.MaxBatch"},
		{name: "encoding", cfg: client.Config{Endpoints: []string{"a:1"}, Encoding: 7}, wantErr: "Config.Encoding: want decimal, base62 or base32"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := client.New(tc.cfg)
			if err == nil || c != nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("New: %v, %v; want an error with %q", c, err, tc.wantErr)
			}
			if strings.Contains(err.Error(), "s3cret") {
				t.Fatalf("New: %v: the error prints the password", err)
			}
		})
	}
}

// TestNewTakesGoodEndpoints: the spellings of a server that work. The
// ports are ones no server listens on (never the quick start's 8080 and
// 9090, where a user's firn serve may run).
func TestNewTakesGoodEndpoints(t *testing.T) {
	for _, tc := range []struct {
		name string
		eps  []string
		http bool
	}{
		{name: "host:port", eps: []string{"127.0.0.1:1", "localhost:2", "[::1]:3", "firn-0.firn.svc:65535"}},
		{name: "base URLs", eps: []string{"http://127.0.0.1:1", "https://firn.example/", "http://[::1]:1"}, http: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := client.New(client.Config{Endpoints: tc.eps, HTTP: tc.http})
			if err != nil {
				t.Fatalf("New(%v): %v", tc.eps, err)
			}
			if err := c.Close(context.Background()); err != nil {
				t.Fatal(err)
			}
		})
	}
}
