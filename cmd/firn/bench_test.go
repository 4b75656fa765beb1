package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"github.com/firn-id/firn/cmd/firn/internal/bench"
	"github.com/firn-id/firn/opaque"
	"github.com/firn-id/firn/segment"
	"github.com/firn-id/firn/segment/segmenttest"
	"github.com/firn-id/firn/server"
	"github.com/firn-id/firn/snowflake"
)

// benchService is a service with the tag "order".
func benchService(t *testing.T) *server.Server {
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
	srv, err := server.New(server.Config{Snowflake: g, Segments: alloc, SegmentStore: store})
	if err != nil {
		t.Fatal(err)
	}
	return srv
}

// benchServer serves HTTP and gRPC in process, with the tag "order".
func benchServer(t *testing.T) (httpURL, grpcAddr string) {
	t.Helper()
	svc := benchService(t)
	hs := httptest.NewServer(svc.Handler())
	t.Cleanup(hs.Close)
	return hs.URL, serveGRPC(t, svc.GRPC())
}

// serveGRPC serves gs on a loopback port until the test ends.
func serveGRPC(t *testing.T, gs *grpc.Server) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = gs.Serve(ln) }()
	t.Cleanup(gs.Stop)
	return ln.Addr().String()
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
		{name: "http segment", args: []string{"--protocol", "http", "--target", httpURL, "--tag", "order"}, ids: 1},
		{name: "leaf snowflake", args: []string{"--protocol", "leaf", "--target", httpURL}, ids: 1},
		{name: "leaf segment", args: []string{"--protocol", "leaf", "--target", httpURL, "--mode", "segment", "--tag", "order"}, ids: 1},
		{name: "tinyid", args: []string{"--protocol", "tinyid", "--target", httpURL, "--tag", "order", "--batch", "7"}, ids: 7},
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
			var r bench.Result
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

// TestBenchClientOfAnOpaqueServer: firn bench --protocol client measures
// a server in opaque mode without being told: its batches, permuted, say
// they are unordered, so the client serves them (it checks them for
// distinct IDs only) and the run counts no error.
func TestBenchClientOfAnOpaqueServer(t *testing.T) {
	l := snowflake.DefaultLayout()
	g, err := snowflake.New(snowflake.Config{Layout: l, Reservation: snowflake.Unreserved()})
	if err != nil {
		t.Fatal(err)
	}
	perm, err := opaque.New(mustKey(t, testKeyA), []byte("orders"), l.Bits())
	if err != nil {
		t.Fatal(err)
	}
	svc, err := server.New(server.Config{Snowflake: g, Opaque: perm})
	if err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runCLI("bench", "--count", "200", "--workers", "4", "--json", "--protocol", "client", "--target", serveGRPC(t, svc.GRPC()), "--batch", "30")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var r bench.Result
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v in %s", err, out)
	}
	if r.Requests != 200 || r.Errors != 0 || r.IDs != 200*30 || !r.Checked || r.Duplicates != 0 {
		t.Fatalf("result %+v: want 200 requests of 30 IDs, no error, no duplicate", r)
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

// TestBenchFailsOnAnyFailedRequest: failed requests are counted with the
// first error, not taken for IDs, and make the exit status 1.
func TestBenchFailsOnAnyFailedRequest(t *testing.T) {
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"error":{"code":"unknown_tag"}}`, http.StatusNotFound)
	}))
	t.Cleanup(hs.Close)
	out, errOut, code := runCLI("bench", "--protocol", "http", "--target", hs.URL, "--mode", "segment", "--tag", "x", "--count", "10", "--json")
	var r bench.Result
	if code != 1 || json.Unmarshal([]byte(out), &r) != nil {
		t.Fatalf("exit %d: %s %s: want exit 1 and a JSON report", code, out, errOut)
	}
	if r.Errors != 10 || r.IDs != 0 || !strings.Contains(r.FirstError, "404") || r.OK {
		t.Fatalf("result %+v: want 10 errors, the first naming the 404, not ok", r)
	}
	if !strings.Contains(errOut, "10 of 10 requests failed, the first with: 404 Not Found") {
		t.Fatalf("stderr %q: want the count and the first error", errOut)
	}
}

// TestBenchFailsOnOneFailedRequestInMany: one failure among successes is
// still a failed run, reported in the text verdict.
func TestBenchFailsOnOneFailedRequestInMany(t *testing.T) {
	var n atomic.Int64
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if i := n.Add(1); i != 5 {
			fmt.Fprint(w, i)
			return
		}
		http.Error(w, "overloaded", http.StatusServiceUnavailable)
	}))
	t.Cleanup(hs.Close)
	out, errOut, code := runCLI("bench", "--protocol", "leaf", "--target", hs.URL, "--count", "20", "--workers", "1")
	if code != 1 || !strings.Contains(out, "verdict    FAIL: failed_requests\n") || !strings.Contains(out, "unique     yes, all 19") ||
		!strings.Contains(errOut, "1 of 20 requests failed, the first with: 503 Service Unavailable: overloaded") {
		t.Fatalf("exit %d, stdout %q, stderr %q: want exit 1, one failure of 20", code, out, errOut)
	}
}

// stoppedAddr is a loopback address where a server listened and stopped.
func stoppedAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	return addr
}

// maxAttempts is the most requests one worker can send within elapsed
// when every one fails: the first at once, each further one after the
// documented backoff (1 ms, doubling, at most 100 ms), written out here
// rather than read from retryDelay so that a broken one fails the test.
func maxAttempts(elapsed time.Duration) int64 {
	n, waited, delay := int64(1), time.Duration(0), time.Millisecond
	for {
		waited += delay
		if waited > elapsed {
			return n
		}
		n++
		delay = min(2*delay, 100*time.Millisecond)
	}
}

// TestBenchAgainstStoppedServerFails: against an address where nothing
// listens, every protocol exits 1 saying no ID arrived, and the workers
// back off rather than spin: the requests sent are no more than the
// backoff schedule allows in the time the run took.
func TestBenchAgainstStoppedServerFails(t *testing.T) {
	addr := stoppedAddr(t)
	url := "http://" + addr
	tests := []struct {
		name string
		args []string
	}{
		{name: "grpc", args: []string{"--protocol", "grpc", "--target", addr}},
		{name: "stream", args: []string{"--protocol", "stream", "--target", addr}},
		{name: "client", args: []string{"--protocol", "client", "--target", addr}},
		{name: "http", args: []string{"--protocol", "http", "--target", url}},
		{name: "leaf", args: []string{"--protocol", "leaf", "--target", url}},
		{name: "tinyid", args: []string{"--protocol", "tinyid", "--target", url, "--mode", "segment", "--tag", "order"}},
		{name: "open loop", args: []string{"--protocol", "http", "--target", url, "--rate", "1000000"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := runCLI(append([]string{"bench", "--duration", "300ms", "--workers", "2", "--json"}, tc.args...)...)
			var r bench.Result
			if code != 1 || json.Unmarshal([]byte(out), &r) != nil {
				t.Fatalf("exit %d, stdout %q, stderr %q: want exit 1 and a JSON report", code, out, errOut)
			}
			if r.OK || r.IDs != 0 || !slices.Contains(r.Failures, bench.FailNoIDs) || !strings.Contains(errOut, "no ID arrived") {
				t.Fatalf("result %+v, stderr %q: want no ID, not ok, saying so", r, errOut)
			}
			if r.Errors != r.Requests || r.Requests > 0 && !slices.Contains(r.Failures, bench.FailRequests) {
				t.Fatalf("result %+v: want every request failed and counted", r)
			}
			if most := int64(r.Workers) * maxAttempts(r.Elapsed); r.Requests > most {
				t.Fatalf("%d requests in %s from %d workers: the backoff allows at most %d", r.Requests, r.Elapsed, r.Workers, most)
			}
		})
	}
}

// TestBenchDefaults: flags left out keep their defaults (8 workers closed
// loop, 64 open loop), where a 0 given is refused (TestBenchBadInput).
func TestBenchDefaults(t *testing.T) {
	httpURL, _ := benchServer(t)
	for _, tc := range []struct {
		name    string
		args    []string
		workers int
	}{
		{name: "closed loop", workers: 8},
		{name: "open loop", args: []string{"--rate", "5000"}, workers: 64},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := runCLI(append([]string{"bench", "--protocol", "http", "--target", httpURL, "--count", "100", "--json"}, tc.args...)...)
			var r bench.Result
			if code != 0 || json.Unmarshal([]byte(out), &r) != nil {
				t.Fatalf("exit %d: %s %s", code, out, errOut)
			}
			if r.Workers != tc.workers || !r.OK || len(r.Failures) != 0 {
				t.Fatalf("result %+v: want %d workers, ok", r, tc.workers)
			}
		})
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
		{name: "tag for snowflake", args: []string{"--mode", "snowflake", "--tag", "order"}, wantErr: "tags are for --mode segment"},
		{name: "tinyid without tag", args: []string{"--protocol", "tinyid"}, wantErr: "--protocol tinyid needs --tag, Tinyid's bizType"},
		{name: "tinyid, unknown mode", args: []string{"--protocol", "tinyid", "--mode", "bogus"}, wantErr: `--mode "bogus": want snowflake or segment`},
		{name: "tinyid snowflake", args: []string{"--protocol", "tinyid", "--mode", "snowflake"}, wantErr: "--mode snowflake: Tinyid's routes serve segment tags only"},
		{name: "url for grpc", args: []string{"--target", "http://x:1"}, wantErr: "--protocol grpc wants a gRPC host:port"},
		{name: "address for http", args: []string{"--protocol", "http", "--target", "x:1"}, wantErr: "wants a base URL"},
		{name: "several targets", args: []string{"--target", "a:1,b:2"}, wantErr: "only --protocol client spreads over several"},
		{name: "batch", args: []string{"--batch", "0"}, wantErr: "--batch 0: want 1 to 100000"},
		{name: "leaf batch", args: []string{"--protocol", "leaf", "--batch", "5"}, wantErr: "Leaf's routes return one ID a request"},
		{name: "batch negative", args: []string{"--batch", "-1"}, wantErr: "--batch -1: want 1 to 100000"},
		{name: "rate negative", args: []string{"--rate", "-1"}, wantErr: "--rate -1: want 0.001 to 10000000 requests per second"},
		{name: "rate 0", args: []string{"--rate", "0"}, wantErr: "--rate 0: want 0.001 to 10000000 requests per second (omit --rate for closed loop)"},
		{name: "rate NaN", args: []string{"--rate", "NaN"}, wantErr: "--rate NaN: want 0.001 to 10000000"},
		{name: "rate too high", args: []string{"--rate", "1e9"}, wantErr: "--rate 1e+09: want 0.001 to 10000000"},
		{name: "workers", args: []string{"--workers", "1000000000"}, wantErr: "--workers 1000000000: want 1 to 10000"},
		{name: "workers 0", args: []string{"--workers", "0"}, wantErr: "--workers 0: want 1 to 10000"},
		{name: "workers negative", args: []string{"--workers", "-4"}, wantErr: "--workers -4: want 1 to 10000"},
		{name: "workers 0 open loop", args: []string{"--rate", "100", "--workers", "0"}, wantErr: "--workers 0: want 1 to 10000"},
		{name: "duration", args: []string{"--duration", "0s"}, wantErr: "--duration 0s: want a positive duration"},
		{name: "duration negative", args: []string{"--duration", "-1s"}, wantErr: "--duration -1s: want a positive duration"},
		{name: "count 0", args: []string{"--count", "0"}, wantErr: "--count 0: want 1 or more (omit --count for no limit)"},
		{name: "count negative", args: []string{"--count", "-5"}, wantErr: "--count -5: want 1 or more"},
		{name: "ca and insecure", args: []string{"--ca", "x.pem", "--insecure"}, wantErr: "--ca and --insecure: give one"},
		{name: "tls over http", args: []string{"--protocol", "http", "--tls"}, wantErr: "--tls is for gRPC; over HTTP, TLS comes with an https:// --target"},
		{name: "ca over plain http", args: []string{"--protocol", "leaf", "--ca", "x.pem"}, wantErr: `--target "http://127.0.0.1:8080" is plain HTTP`},
		{name: "insecure over plain http", args: []string{"--protocol", "tinyid", "--mode", "segment", "--tag", "t", "--insecure"}, wantErr: "want an https:// target"},
		{name: "ca missing", args: []string{"--ca", "/nonexistent/ca.pem"}, wantErr: "--ca: open /nonexistent/ca.pem: no such file"},
		{name: "ca without PEM", args: []string{"--ca", "bench_test.go"}, wantErr: "--ca bench_test.go: no PEM certificate in the file"},
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

// benchCert makes a self-signed CA certificate for 127.0.0.1 and writes it,
// as the CA to trust, to a PEM file.
func benchCert(t *testing.T) (cert tls.Certificate, caFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "firn bench test"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	caFile = filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, caFile
}

// TestBenchTLS: against servers with a self-signed certificate, --ca
// trusting it succeeds, --insecure succeeds and says so, and neither fails
// with advice naming --ca; for gRPC (unary, streams, the client) and
// https:// targets.
func TestBenchTLS(t *testing.T) {
	cert, caFile := benchCert(t)
	svc := benchService(t)
	hs := httptest.NewUnstartedServer(svc.Handler())
	hs.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	hs.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshakes
	hs.StartTLS()
	t.Cleanup(hs.Close)
	grpcAddr := serveGRPC(t, svc.GRPC(grpc.Creds(credentials.NewTLS(&tls.Config{Certificates: []tls.Certificate{cert}}))))
	targets := []struct {
		name string
		args []string
		tls  []string // what makes it use TLS, without --ca
	}{
		{name: "grpc", args: []string{"--protocol", "grpc", "--target", grpcAddr}, tls: []string{"--tls"}},
		{name: "stream", args: []string{"--protocol", "stream", "--target", grpcAddr}, tls: []string{"--tls"}},
		{name: "client", args: []string{"--protocol", "client", "--target", grpcAddr}, tls: []string{"--tls"}},
		{name: "https", args: []string{"--protocol", "http", "--target", hs.URL}},
		{name: "leaf https", args: []string{"--protocol", "leaf", "--target", hs.URL}},
	}
	for _, tg := range targets {
		t.Run(tg.name+" with --ca", func(t *testing.T) {
			r, errOut, code := benchJSON(t, append(tg.args, "--ca", caFile)...)
			if code != 0 || !r.OK || r.Errors != 0 || r.IDs != 20 || r.Insecure {
				t.Fatalf("exit %d, result %+v, stderr %q: want 20 IDs over verified TLS", code, r, errOut)
			}
		})
		t.Run(tg.name+" with --insecure", func(t *testing.T) {
			r, errOut, code := benchJSON(t, append(tg.args, "--insecure")...)
			if code != 0 || !r.OK || r.IDs != 20 || !r.Insecure {
				t.Fatalf("exit %d, result %+v, stderr %q: want 20 IDs, the report saying --insecure", code, r, errOut)
			}
		})
		t.Run(tg.name+" without --ca", func(t *testing.T) {
			r, errOut, code := benchJSON(t, append(tg.args, tg.tls...)...)
			if code != 1 || r.OK || r.IDs != 0 || !strings.Contains(r.FirstError, "certificate") ||
				!strings.Contains(errOut, "the server's certificate did not verify: pass --ca FILE") {
				t.Fatalf("exit %d, result %+v, stderr %q: want exit 1 advising --ca", code, r, errOut)
			}
		})
	}
	// The client SDK moves on from a failed handshake to the next server
	// at once; one that accepts and never answers holds the refill past
	// the run's end. A run that ends first still says why no ID came.
	t.Run("client without --ca, ended before its retries", func(t *testing.T) {
		out, errOut, code := runCLI("bench", "--protocol", "client", "--target", grpcAddr+","+silentListener(t), "--tls", "--duration", "500ms", "--json")
		var r bench.Result
		if code != 1 || json.Unmarshal([]byte(out), &r) != nil || r.IDs != 0 || !strings.Contains(r.LastFailure, grpcAddr) ||
			!strings.Contains(errOut, "no ID arrived, the last failure: ") || !strings.Contains(errOut, "the server's certificate did not verify: pass --ca FILE") {
			t.Fatalf("exit %d, stdout %q, stderr %q: want exit 1 naming the server and advising --ca", code, out, errOut)
		}
	})
	t.Run("grpc in plain text to TLS", func(t *testing.T) {
		r, errOut, code := benchJSON(t, "--protocol", "grpc", "--target", grpcAddr)
		if code != 1 || r.OK || !strings.Contains(errOut, "the server may speak TLS: add --tls") {
			t.Fatalf("exit %d, result %+v, stderr %q: want exit 1 advising --tls", code, r, errOut)
		}
	})
	t.Run("http to an https server", func(t *testing.T) {
		r, errOut, code := benchJSON(t, "--protocol", "http", "--target", strings.Replace(hs.URL, "https://", "http://", 1))
		if code != 1 || r.OK || !strings.Contains(errOut, "the server may speak TLS") {
			t.Fatalf("exit %d, result %+v, stderr %q: want exit 1 advising https", code, r, errOut)
		}
	})
}

// benchJSON runs firn bench for 20 requests from 2 workers with --json and
// decodes its report.
func benchJSON(t *testing.T, args ...string) (r bench.Result, stderr string, code int) {
	t.Helper()
	out, errOut, code := runCLI(append([]string{"bench", "--count", "20", "--workers", "2", "--duration", "5s", "--json"}, args...)...)
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("exit %d, stdout %q, stderr %q: %v", code, out, errOut, err)
	}
	return r, errOut, code
}
