package main

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/firn-id/firn/segment"
	"github.com/firn-id/firn/segment/segmenttest"
	"github.com/firn-id/firn/server"
	"github.com/firn-id/firn/snowflake"
)

// benchServer serves HTTP and gRPC in process, with the tag "order".
func benchServer(t *testing.T) (httpURL, grpcAddr string) {
	t.Helper()
	g, err := snowflake.New(snowflake.Config{Reservation: snowflake.Unreserved()})
	if err != nil {
		t.Fatal(err)
	}
	store := segmenttest.NewMemStore()
	if err := store.CreateTag(context.Background(), "order", 1, 1000, ""); err != nil {
		t.Fatal(err)
	}
	alloc, err := segment.NewAllocator(store, segment.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = alloc.Close(context.Background()) })
	svc := &server.Service{Snowflake: g, Segments: alloc, SegmentStore: store}
	hs := httptest.NewServer(server.NewHTTP(svc))
	t.Cleanup(hs.Close)
	gs := server.NewGRPC(svc)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = gs.Serve(ln) }()
	t.Cleanup(gs.Stop)
	return hs.URL, ln.Addr().String()
}

// TestBenchEveryProtocol runs a short load of each protocol and mode and
// checks the figures add up: the requests asked for, every ID unique.
func TestBenchEveryProtocol(t *testing.T) {
	httpURL, grpcAddr := benchServer(t)
	tests := []struct {
		name string
		args []string
		ids  int64 // per request
	}{
		{name: "grpc snowflake", args: []string{"--protocol", "grpc", "--target", grpcAddr}, ids: 1},
		{name: "grpc segment batch", args: []string{"--protocol", "grpc", "--target", grpcAddr, "--mode", "segment", "--tag", "order", "--batch", "50"}, ids: 50},
		{name: "http snowflake batch", args: []string{"--protocol", "http", "--target", httpURL, "--batch", "20"}, ids: 20},
		{name: "http segment", args: []string{"--protocol", "http", "--target", httpURL, "--mode", "segment", "--tag", "order"}, ids: 1},
		{name: "leaf snowflake", args: []string{"--protocol", "leaf", "--target", httpURL}, ids: 1},
		{name: "leaf segment", args: []string{"--protocol", "leaf", "--target", httpURL, "--mode", "segment", "--tag", "order"}, ids: 1},
		{name: "tinyid", args: []string{"--protocol", "tinyid", "--target", httpURL, "--mode", "segment", "--tag", "order", "--batch", "7"}, ids: 7},
		{name: "stream", args: []string{"--protocol", "stream", "--target", grpcAddr, "--mode", "segment", "--tag", "order", "--batch", "100"}, ids: 100},
		{name: "client", args: []string{"--protocol", "client", "--target", grpcAddr, "--batch", "30"}, ids: 30},
		{name: "client segment", args: []string{"--protocol", "client", "--target", grpcAddr, "--mode", "segment", "--tag", "order", "--batch", "30"}, ids: 30},
		{name: "open loop", args: []string{"--protocol", "http", "--target", httpURL, "--rate", "2000"}, ids: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := runCLI(append([]string{"bench", "--count", "200", "--workers", "4", "--json"}, tc.args...)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			var r benchResult
			if err := json.Unmarshal([]byte(out), &r); err != nil {
				t.Fatalf("%v in %s", err, out)
			}
			if r.Requests != 200 || r.Errors != 0 || r.IDs != 200*tc.ids || !r.Checked || r.Duplicates != 0 {
				t.Fatalf("result %+v: want 200 requests of %d IDs, no error, no duplicate", r, tc.ids)
			}
			if r.Latency.P50 <= 0 || r.Latency.P50 > r.Latency.P99 || r.Latency.P99 > r.Latency.Max {
				t.Fatalf("latency %+v: want 0 < p50 ≤ p99 ≤ max", r.Latency)
			}
		})
	}
}

// TestBenchFindsDuplicates: a server that answers the same ID twice makes
// the run fail, and the text report says so.
func TestBenchFindsDuplicates(t *testing.T) {
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte("42"))
	}))
	t.Cleanup(hs.Close)
	out, errOut, code := runCLI("bench", "--protocol", "leaf", "--target", hs.URL, "--count", "10", "--workers", "2")
	if code != 1 || !strings.Contains(errOut, "9 IDs were received more than once") || !strings.Contains(out, "NO: 9 duplicates") {
		t.Fatalf("exit %d, stdout %q, stderr %q: want exit 1 naming 9 duplicates", code, out, errOut)
	}
}

// TestBenchCountsErrors: failed requests are counted with the first
// error, not taken for IDs.
func TestBenchCountsErrors(t *testing.T) {
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"error":{"code":"unknown_tag"}}`, http.StatusNotFound)
	}))
	t.Cleanup(hs.Close)
	out, errOut, code := runCLI("bench", "--protocol", "http", "--target", hs.URL, "--mode", "segment", "--tag", "x", "--count", "10", "--json")
	var r benchResult
	if code != 0 || json.Unmarshal([]byte(out), &r) != nil {
		t.Fatalf("exit %d: %s %s", code, out, errOut)
	}
	if r.Errors != 10 || r.IDs != 0 || !strings.Contains(r.FirstError, "404") {
		t.Fatalf("result %+v: want 10 errors, the first naming the 404", r)
	}
}

func TestBenchBadInput(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{name: "protocol", args: []string{"--protocol", "ftp"}, wantErr: `--protocol "ftp": want grpc, stream, http, client, leaf or tinyid`},
		{name: "segment without tag", args: []string{"--mode", "segment"}, wantErr: "--mode segment needs --tag"},
		{name: "tag for snowflake", args: []string{"--tag", "order"}, wantErr: "tags are for --mode segment"},
		{name: "url for grpc", args: []string{"--target", "http://x:1"}, wantErr: "--protocol grpc wants a gRPC host:port"},
		{name: "address for http", args: []string{"--protocol", "http", "--target", "x:1"}, wantErr: "wants a base URL"},
		{name: "several targets", args: []string{"--target", "a:1,b:2"}, wantErr: "only --protocol client spreads over several"},
		{name: "batch", args: []string{"--batch", "0"}, wantErr: "--batch 0: want 1 to 100000"},
		{name: "leaf batch", args: []string{"--protocol", "leaf", "--batch", "5"}, wantErr: "Leaf's routes return one ID a request"},
		{name: "rate", args: []string{"--rate", "-1"}, wantErr: "--rate -1"},
		{name: "workers", args: []string{"--workers", "1000000000"}, wantErr: "--workers 1000000000: want 1 to 10000"},
		{name: "duration", args: []string{"--duration", "0s"}, wantErr: "--duration 0s: want a positive duration"},
		{name: "argument", args: []string{"extra"}, wantErr: `unexpected argument "extra"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := runCLI(append([]string{"bench"}, tc.args...)...)
			if code != 2 || out != "" || !strings.Contains(errOut, tc.wantErr) {
				t.Fatalf("exit %d, stdout %q, stderr %q: want exit 2 with %q", code, out, errOut, tc.wantErr)
			}
		})
	}
}
