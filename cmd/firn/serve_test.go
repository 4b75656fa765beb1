package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"io"
	"math"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/firn-id/firn/firnpb"
	"github.com/firn-id/firn/internal/testenv"
	"github.com/firn-id/firn/internal/testserver"
	"github.com/firn-id/firn/nodeid"
)

func freePort(t *testing.T) string { return testserver.Addr(t) }

// TestServe starts firn serve on the local data directory, draws IDs over
// HTTP, stops it, and starts it again on the same directory: the second
// life's IDs follow the first's.
func TestServe(t *testing.T) {
	ownNodes(t)
	dir := t.TempDir()
	if _, errOut, code := runCLI("tag", "create", "order", "--step", "10", "--data-dir", dir); code != 0 {
		t.Fatal(errOut)
	}
	var last, lastSeg int64
	for life := range 2 {
		addrs := testserver.Addrs(t, 2)
		addr, gaddr := addrs[0], addrs[1]
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		var out bytes.Buffer
		go func() { done <- serve(ctx, []string{"--http", addr, "--grpc", gaddr, "--data-dir", dir}, &out) }()
		base := "http://" + addr
		waitReady(t, base, done)
		body := fetch(t, base+"/v1/snowflake/batch?count=100&format=text")
		ids := strings.Fields(body)
		if len(ids) != 100 {
			t.Fatalf("life %d: %d IDs", life, len(ids))
		}
		first := mustInt(t, ids[0])
		if first <= last {
			t.Fatalf("life %d starts at %d, not past %d", life, first, last)
		}
		last = mustInt(t, ids[99])
		segs := strings.Fields(fetch(t, base+"/v1/segments/order/batch?count=25&format=text"))
		if len(segs) != 25 || mustInt(t, segs[0]) <= lastSeg {
			t.Fatalf("life %d: segment IDs %v after %d", life, segs, lastSeg)
		}
		lastSeg = mustInt(t, segs[24])
		conn, err := grpc.Dial(gaddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			t.Fatal(err)
		}
		got, err := firnpb.NewFirnClient(conn).Next(context.Background(), &firnpb.NextRequest{})
		conn.Close()
		if err != nil || got.Id <= last {
			t.Fatalf("life %d: gRPC Next = %v, %v; want an ID past %d", life, got, err, last)
		}
		cancel()
		if err := <-done; err != nil {
			t.Fatalf("life %d: serve returned %v", life, err)
		}
	}
}

// TestServeRefusesAnOpenAddressOnTheImplicitDefault: off loopback, the
// local store's "lowest free node" is refused whether named or not (every
// machine would take node 0); a static node passes that check and meets
// the next one, tokens.
func TestServeRefusesAnOpenAddressOnTheImplicitDefault(t *testing.T) {
	for _, tc := range []struct {
		name    string
		args    []string
		wantErr string
	}{
		{name: "implicit default", args: nil, wantErr: "name a registry shared by every machine"},
		{name: "explicit local", args: []string{"--store", "local"}, wantErr: "name a registry shared by every machine"},
		{name: "grpc too", args: []string{"--http", "127.0.0.1:0", "--grpc", "0.0.0.0:9090"}, wantErr: "--grpc 0.0.0.0:9090 is not loopback"},
		{name: "static node, no tokens", args: []string{"--store", "local", "--node", "3"}, wantErr: "configure auth.tokens"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := runCLI(append([]string{"serve", "--http", "0.0.0.0:8080"}, tc.args...)...)
			if code != 2 || out != "" || !strings.Contains(errOut, tc.wantErr) {
				t.Fatalf("exit %d, stdout %q, stderr %q: want exit 2 with %q", code, out, errOut, tc.wantErr)
			}
		})
	}
}

// TestServeNamesTheFlagOfATakenPort: a port already taken, HTTP or gRPC,
// ends serve with an error naming the flag that moves it.
func TestServeNamesTheFlagOfATakenPort(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	for _, tc := range []struct {
		name, http, grpc, wantErr string
	}{
		{"http", taken.Addr().String(), "off", "choose another address with --http"},
		{"grpc", "127.0.0.1:0", taken.Addr().String(), "choose another address with --grpc, or --grpc off"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, errOut, code := runCLI("serve", "--data-dir", t.TempDir(), "--http", tc.http, "--grpc", tc.grpc)
			if code != 1 || !strings.Contains(errOut, "address already in use") || !strings.Contains(errOut, tc.wantErr) {
				t.Fatalf("exit %d, stderr %q: want exit 1 with %q", code, errOut, tc.wantErr)
			}
		})
	}
}

func waitReady(t *testing.T, base string, done chan error) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		select {
		case err := <-done:
			t.Fatalf("serve ended before it was ready: %v", err)
		default:
		}
		if resp, err := http.Get(base + "/readyz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("not ready after 5 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func fetch(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s = %d %s", url, resp.StatusCode, b)
	}
	return string(b)
}

func mustInt(t *testing.T, s string) int64 {
	t.Helper()
	var n int64
	for _, c := range s {
		if c < '0' || c > '9' {
			t.Fatalf("not a number: %q", s)
		}
		n = n*10 + int64(c-'0')
	}
	return n
}

func TestServeFromConfigFile(t *testing.T) {
	dir := t.TempDir()
	addr := freePort(t)
	path := dir + "/firn.yaml"
	doc := "http:\n  listen: " + addr + "\ngrpc:\n  listen: \"off\"\nregistry:\n  data_dir: " + dir + "/data\n  node: \"9\"\n"
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runCLI("config", "check", "--config", path)
	if code != 0 || !strings.Contains(out, "config ok: http "+addr) {
		t.Fatalf("config check: exit %d, %q, %q", code, out, errOut)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serve(ctx, []string{"--config", path}, io.Discard) }()
	waitReady(t, "http://"+addr, done)
	body := fetch(t, "http://"+addr+"/v1/snowflake/decode/"+strings.TrimSpace(fetch(t, "http://"+addr+"/v1/snowflake/next?format=text")))
	if !strings.Contains(body, `"node":{"node":9}`) {
		t.Fatalf("the node from the file was not used: %s", body)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	// A flag overrides the file.
	if out, _, _ := runCLI("config", "check", "--config", path, "--http", "127.0.0.1:1"); !strings.Contains(out, "http 127.0.0.1:1,") {
		t.Fatalf("flag did not override the file: %q", out)
	}
	bad := dir + "/bad.yaml"
	os.WriteFile(bad, []byte("registry:\n  store: redis\n"), 0o600)
	if out, errOut, code := runCLI("config", "check", "--config", bad); code != 2 || out != "" || !strings.Contains(errOut, "registry.store") {
		t.Fatalf("bad config: exit %d, %q, %q", code, out, errOut)
	}
}

func TestServeRefusesBelowTheFloor(t *testing.T) {
	// A previous system issued IDs up to one day from now.
	floor := strconv.FormatUint(uint64(time.Now().Add(24*time.Hour).Sub(time.UnixMilli(1767225600000)).Milliseconds())<<22, 10)
	err := serve(context.Background(), []string{"--http", freePort(t), "--grpc", "off", "--data-dir", t.TempDir(), "--floor", floor}, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "snowflake floor") || !strings.Contains(err.Error(), "firn admin advance") {
		t.Fatalf("serve with a floor a day ahead: %v", err)
	}
}

func TestServeAuthAndTLS(t *testing.T) {
	dir := t.TempDir()
	// Without tokens, a non-loopback address is refused even with a static node.
	if _, errOut, code := runCLI("config", "check", "--http", "0.0.0.0:8080", "--store", "local", "--node", "5", "--data-dir", dir); code != 2 || !strings.Contains(errOut, "auth.tokens") {
		t.Fatalf("no tokens off loopback: exit %d, %q", code, errOut)
	}
	cert, key := selfSigned(t, dir)
	addr := freePort(t)
	path := dir + "/firn.yaml"
	doc := "http:\n  listen: " + addr + "\n  tls_cert: " + cert + "\n  tls_key: " + key + "\ngrpc:\n  listen: " + freePort(t) + "\n" +
		"registry:\n  data_dir: " + dir + "/data\nauth:\n  tokens:\n    - {name: app, secret: s3cret-012345678, scopes: [snowflake]}\n"
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, _, _ := runCLI("config", "print", "--config", path); strings.Contains(out, "s3cret") || !strings.Contains(out, "REDACTED") {
		t.Fatalf("config print shows the token:\n%s", out)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- serve(ctx, []string{"--config", path}, io.Discard) }()
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	var resp *http.Response
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		req, _ := http.NewRequest("GET", "https://"+addr+"/v1/snowflake/next", nil)
		req.Header.Set("Authorization", "Bearer s3cret-012345678")
		var err error
		if resp, err = client.Do(req); err == nil && !starting(resp) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no HTTPS answer: %v", err)
		}
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("with the token over HTTPS: %d", resp.StatusCode)
	}
	resp, err := client.Get("https://" + addr + "/v1/snowflake/next")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 401 {
		t.Fatalf("without a token: %d, want 401", resp.StatusCode)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// selfSigned writes a certificate and key for 127.0.0.1.
func selfSigned(t *testing.T, dir string) (certPath, keyPath string) {
	t.Helper()
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "firn test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &priv.PublicKey, priv)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, _ := x509.MarshalECPrivateKey(priv)
	certPath, keyPath = dir+"/cert.pem", dir+"/key.pem"
	os.WriteFile(certPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(keyPath, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600)
	return certPath, keyPath
}

// TestTuneGC: firn serve collects at GOGC=400 under a 24 MiB soft limit,
// unless GOGC or GOMEMLIMIT say otherwise.
func TestTuneGC(t *testing.T) {
	oldPercent, oldLimit := debug.SetGCPercent(100), debug.SetMemoryLimit(math.MaxInt64)
	t.Cleanup(func() { debug.SetGCPercent(oldPercent); debug.SetMemoryLimit(oldLimit) })
	tuneGC("", "")
	if p, l := debug.SetGCPercent(100), debug.SetMemoryLimit(math.MaxInt64); p != 400 || l != 24<<20 {
		t.Fatalf("unset: GOGC %d, limit %d; want 400 and 24 MiB", p, l)
	}
	tuneGC("50", "1GiB") // the runtime read these at start; firn leaves them
	if p, l := debug.SetGCPercent(100), debug.SetMemoryLimit(math.MaxInt64); p != 100 || l != math.MaxInt64 {
		t.Fatalf("set: GOGC %d, limit %d; want both untouched", p, l)
	}
}

// TestServeOffLoopbackLocalSegments: off loopback on the local store, a
// static node serves snowflake IDs, but segment tags are refused with the
// reason (machines behind one address would each count the same IDs)
// unless --local-segments says this machine alone serves them.
func TestServeOffLoopbackLocalSegments(t *testing.T) {
	for _, tc := range []struct {
		name   string
		args   []string
		status int
	}{
		{name: "refused", status: http.StatusServiceUnavailable},
		{name: "acknowledged", args: []string{"--local-segments"}, status: http.StatusCreated},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			port := freePort(t)[len("127.0.0.1:"):]
			path := dir + "/firn.yaml"
			doc := "registry:\n  data_dir: " + dir + "/data\nauth:\n  tokens:\n    - {name: app, secret: s3cret-012345678, scopes: [snowflake, admin, \"tag:*\"]}\n"
			if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			args := append([]string{"--config", path, "--http", "0.0.0.0:" + port, "--grpc", "off", "--store", "local", "--node", "3"}, tc.args...)
			go func() { done <- serve(ctx, args, io.Discard) }()
			call := func(method, route, body string) *http.Response {
				t.Helper()
				for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
					req, _ := http.NewRequest(method, "http://127.0.0.1:"+port+route, strings.NewReader(body))
					req.Header.Set("Authorization", "Bearer s3cret-012345678")
					resp, err := http.DefaultClient.Do(req)
					if err == nil && !starting(resp) {
						return resp
					}
					if time.Now().After(deadline) {
						t.Fatalf("no answer: %v", err)
					}
				}
			}
			resp := call("GET", "/v1/snowflake/next", "")
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("snowflake on a static node: %d", resp.StatusCode)
			}
			resp = call("POST", "/v1/segments", `{"tag":"order","step":10}`)
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.status || (tc.status != http.StatusCreated && !strings.Contains(string(b), "--local-segments")) {
				t.Fatalf("create a tag: %d %s; want %d", resp.StatusCode, b, tc.status)
			}
			if resp := call("GET", "/readyz", ""); resp.StatusCode != http.StatusOK {
				t.Fatalf("/readyz: %d, want ready (snowflake serves)", resp.StatusCode)
			}
			cancel()
			if err := <-done; err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestServeAsADaemon: the version on /healthz and in the metrics, the
// start-up log naming store (the data directory's path), node and layout, and SIGHUP logged and
// ignored, the server still serving.
func TestServeAsADaemon(t *testing.T) {
	var logs syncBuffer
	old := logOutput
	logOutput = &logs
	t.Cleanup(func() { logOutput = old })
	addr, dir := freePort(t), t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- serve(ctx, []string{"--http", addr, "--grpc", "off", "--data-dir", dir, "--log-format", "json", "--log-level", "debug"}, io.Discard)
	}()
	base := "http://" + addr
	waitReady(t, base, done)
	if h := fetch(t, base+"/healthz"); !strings.HasPrefix(h, "ok firn ") || !strings.Contains(h, runtime.Version()) {
		t.Fatalf("/healthz = %q, want ok and the version", h)
	}
	if m := fetch(t, base+"/metrics"); !strings.Contains(m, "firn_build_info{") {
		t.Fatal("no firn_build_info in /metrics")
	}
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	for !strings.Contains(logs.String(), "SIGHUP ignored") {
		select {
		case err := <-done:
			t.Fatalf("serve ended on SIGHUP: %v", err)
		case <-time.After(10 * time.Millisecond):
		}
	}
	waitReady(t, base, done)
	start := logs.String()
	for _, want := range []string{`"msg":"serving"`, `"store":"local data directory ` + dir + `"`, `"node":0`, `"layout":"firn`, `"version":"firn `} {
		if !strings.Contains(start, want) {
			t.Errorf("start-up log lacks %s:\n%s", want, start)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestServeRefusesBadFilesAndLogSettingsBeforeAnyState: TLS files that do
// not load and unknown log settings are bad input for serve and config
// check alike, found before the data directory is touched.
func TestServeRefusesBadFilesAndLogSettingsBeforeAnyState(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing.pem")
	for _, tc := range []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"missing TLS files", []string{"--tls-cert", missing, "--tls-key", missing}, "--tls-cert"},
		{"log level", []string{"--log-level", "loud"}, "--log-level"},
		{"log format", []string{"--log-format", "xml"}, "--log-format"},
	} {
		for _, cmd := range [][]string{{"serve"}, {"config", "check"}} {
			t.Run(tc.name+"/"+strings.Join(cmd, " "), func(t *testing.T) {
				dir := filepath.Join(t.TempDir(), "state")
				args := append(append(slices.Clone(cmd), "--data-dir", dir, "--http", freePort(t), "--grpc", "off"), tc.args...)
				_, errOut, code := runCLI(args...)
				if code != 2 || !strings.Contains(errOut, tc.wantErr) {
					t.Fatalf("exit %d, stderr %q; want 2 naming %s", code, errOut, tc.wantErr)
				}
				if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
					t.Fatalf("the data directory was touched: %v", err)
				}
			})
		}
	}
}

// syncBuffer is a buffer safe for a logger and a test reading it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// starting reports (and consumes) the answer of a server still starting:
// its port answers 503 not_ready until the store answers and a node is
// held.
func starting(resp *http.Response) bool {
	if resp.StatusCode != http.StatusServiceUnavailable {
		return false
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(b))
	return strings.Contains(string(b), `"not_ready"`)
}

// TestServeReleasesTheNodeAfterTheServersStop: after SIGTERM a gRPC
// stream still open keeps issuing IDs while the servers finish, and all
// that time the node stays held in the store; once the stream ends and
// serve returns, the node is released.
func TestServeReleasesTheNodeAfterTheServersStop(t *testing.T) {
	dsn := testenv.Endpoint(t, "FIRN_TEST_POSTGRES")
	old := shutdownBound
	shutdownBound = 5 * time.Minute // the test, not the bound, ends the stop
	t.Cleanup(func() { shutdownBound = old })
	table, seg := "firn_nodes_stop_"+suffix(), "leaf_alloc_stop_"+suffix()
	t.Cleanup(func() { dropTables(t, "postgres", dsn, table); dropTables(t, "postgres", dsn, seg) })
	ports := testserver.Addrs(t, 2)
	args := []string{"--store", "postgres", "--dsn", dsn, "--table", table, "--segment-table", seg,
		"--http", ports[0], "--grpc", ports[1], "--node-bits", "1", "--node", "1"}
	o, stores := openServeStores(t, args)
	nodes := stores.Nodes
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	done := make(chan error, 1)
	go func() { done <- serve(ctx, args, io.Discard) }()
	waitReadiness(t, "http://"+ports[0], done, func(code int, _ string) bool { return code == 200 })
	conn, err := grpc.Dial(ports[1], grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	sctx, endStream := context.WithCancel(context.Background())
	defer endStream()
	stream, err := firnpb.NewFirnClient(conn).Stream(sctx, &firnpb.StreamRequest{Batch: 10})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := stream.Recv(); err != nil {
		t.Fatal(err)
	}
	stop() // SIGTERM
	for range 3 {
		time.Sleep(200 * time.Millisecond)
		if _, err := stream.Recv(); err != nil {
			t.Fatalf("the stream after SIGTERM: %v, want IDs until it ends", err)
		}
		if _, err := nodeid.Acquire(context.Background(), nodes, o.Lease); !errors.Is(err, nodeid.ErrNodeHeld) {
			t.Fatalf("node 1 while the gRPC server still issues: %v, want ErrNodeHeld", err)
		}
		select {
		case err := <-done:
			t.Fatalf("serve returned %v with a stream still open", err)
		default:
		}
	}
	endStream()
	if err := <-done; err != nil {
		t.Fatalf("serve returned %v", err)
	}
	l, err := nodeid.Acquire(context.Background(), nodes, o.Lease)
	if err != nil {
		t.Fatalf("node 1 after serve stopped: %v, want it released", err)
	}
	_ = l.Close(context.Background())
}
