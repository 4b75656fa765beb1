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
		{name: "refill", cfg: client.Config{Endpoints: []string{"a:1"}, Refill: 1.5}, wantErr: "Config.Refill: want between 0 and 1"},
		{name: "max buffer", cfg: client.Config{Endpoints: []string{"a:1"}, Buffer: 10, MaxBuffer: 5}, wantErr: "Config.MaxBuffer: want at least Buffer (10)"},
		{name: "ahead", cfg: client.Config{Endpoints: []string{"a:1"}, MaxAge: time.Second, Ahead: time.Second}, wantErr: "Config.Ahead"},
		{name: "batch", cfg: client.Config{Endpoints: []string{"a:1"}, MaxBatch: -1}, wantErr: "Config.MaxBatch"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := client.New(tc.cfg)
			if err == nil || c != nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("New: %v, %v; want an error with %q", c, err, tc.wantErr)
			}
		})
	}
}
