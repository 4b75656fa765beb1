package main

import (
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/firn-id/firn/cmd/firn/internal/backend"
	"github.com/firn-id/firn/localstore"
	"github.com/firn-id/firn/snowflake"
)

// startBeside runs firn serve in process on dir and returns its base URL.
func startBeside(t *testing.T, dir string, args ...string) string {
	t.Helper()
	addr := freePort(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- serve(ctx, append([]string{"--http", addr, "--grpc", "off", "--data-dir", dir}, args...), io.Discard)
	}()
	base := "http://" + addr
	waitReady(t, base, done)
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
		if _, err := os.Stat(filepath.Join(dir, backend.DiscoveryName)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the discovery file outlived the server: %v", err)
		}
	})
	return base
}

// TestNextAndTagBesideARunningServer: with the data directory held by a
// running firn serve, firn next and firn tag ask the server (found in the
// directory), and refuse a layout or node other than the server's.
func TestNextAndTagBesideARunningServer(t *testing.T) {
	ownNodes(t)
	dir := t.TempDir()
	base := startBeside(t, dir)
	if b, err := os.ReadFile(filepath.Join(dir, backend.DiscoveryName)); err != nil || strings.Contains(string(b), "secret") || !strings.Contains(string(b), base) {
		t.Fatalf("discovery file %q, %v: want the address %s only", b, err, base)
	}
	out, errOut, code := runCLI("next", "-n", "3", "--data-dir", dir)
	ids := strings.Fields(out)
	if code != 0 || len(ids) != 3 {
		t.Fatalf("next beside the server: exit %d, %q, %s", code, out, errOut)
	}
	p, err := snowflake.DefaultLayout().Decompose(uint64(mustInt(t, ids[0])))
	if err != nil || p.Node != 0 {
		t.Fatalf("ID %s: node %d, %v; want the server's node 0", ids[0], p.Node, err)
	}
	for _, tc := range []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"another layout", []string{"next", "--data-dir", dir, "--layout", "twitter"}, "give the server's layout flags (e.g. --layout firn); or, for IDs of another layout (another ID space), give them a data directory of their own: --data-dir " + dir + "-twitter-"},
		{"another node", []string{"next", "--data-dir", dir, "--node", "5"}, "holds node 0; this command asked for node 5"},
		{"store flags with --server", []string{"next", "--server", base, "--store", "etcd"}, "--store does not apply"},
		{"a URL with a query", []string{"next", "--server", base + "?x=1"}, "want a base URL"},
		{"a tag no store has", []string{"tag", "next", "nope", "--data-dir", dir}, `unknown tag "nope"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := runCLI(tc.args...)
			if code != 2 || out != "" || !strings.Contains(errOut, tc.wantErr) {
				t.Fatalf("exit %d, stdout %q, stderr %q; want exit 2 with %q", code, out, errOut, tc.wantErr)
			}
		})
	}
	if out, errOut, code := runCLI("next", "-n", "2", "--server", base); code != 0 || len(strings.Fields(out)) != 2 {
		t.Fatalf("next --server: exit %d, %q, %s", code, out, errOut)
	}
	// A shell that exports its servers' store settings still asks the
	// server it names: settings from the environment are not flags.
	t.Setenv("FIRN_REGISTRY_STORE", "postgres")
	t.Setenv("FIRN_REGISTRY_DSN", "postgres://firn@127.0.0.1:1/unreachable")
	if out, errOut, code := runCLI("next", "-n", "2", "--server", base); code != 0 || len(strings.Fields(out)) != 2 {
		t.Fatalf("next --server with FIRN_REGISTRY_DSN exported: exit %d, %q, %s", code, out, errOut)
	}
	os.Unsetenv("FIRN_REGISTRY_STORE")
	os.Unsetenv("FIRN_REGISTRY_DSN")
	for _, args := range [][]string{
		{"tag", "create", "order", "--step", "10", "--data-dir", dir},
		{"tag", "step", "order", "20", "--data-dir", dir},
		{"tag", "advance", "order", "--to", "100", "--data-dir", dir},
	} {
		if _, errOut, code := runCLI(args...); code != 0 {
			t.Fatalf("%v: exit %d, %s", args, code, errOut)
		}
	}
	out, errOut, code = runCLI("tag", "next", "order", "-n", "3", "--data-dir", dir)
	if got := strings.Fields(out); code != 0 || len(got) != 3 || mustInt(t, got[0]) < 100 {
		t.Fatalf("tag next: exit %d, %q, %s; want 3 IDs from 100", code, out, errOut)
	}
	if out, _, code := runCLI("tag", "list", "--data-dir", dir); code != 0 || !strings.Contains(out, "order") {
		t.Fatalf("tag list: exit %d, %q", code, out)
	}
}

// TestLockedByAnotherCommand: a directory locked by something that left
// no address (another firn next) is still reported as locked, with the
// ways out.
func TestLockedByAnotherCommand(t *testing.T) {
	dir := t.TempDir()
	s, err := localstore.Open(localstore.Config{Dir: dir, NodeDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_, errOut, code := runCLI("next", "--data-dir", dir)
	if code != 1 || !strings.Contains(errOut, "locked") {
		t.Fatalf("exit %d, %s; want 1 naming the lock", code, errOut)
	}
	// Another directory is no way out: every directory shares the nodes.
	for _, want := range []string{"stop it", "--server URL", "--store etcd"} {
		if !strings.Contains(errOut, want) || strings.Contains(errOut, "another directory") {
			t.Errorf("locked data directory: %q does not say %q, or advises another directory", errOut, want)
		}
	}
}

// TestConfigFileForTagAndNext: --config gives firn next and firn tag the
// store and layout of firn serve's file, but not its node.
func TestConfigFileForTagAndNext(t *testing.T) {
	ownNodes(t)
	dir := t.TempDir()
	cfg := filepath.Join(t.TempDir(), "firn.yaml")
	doc := "registry:\n  data_dir: " + dir + "\n  node: \"7\"\nlayout:\n  preset: twitter\n"
	if err := os.WriteFile(cfg, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runCLI("next", "--config", cfg)
	if code != 0 {
		t.Fatalf("next --config: exit %d, %s", code, errOut)
	}
	twitter, _ := snowflake.Preset("twitter")
	p, err := twitter.Decompose(uint64(mustInt(t, strings.TrimSpace(out))))
	if err != nil || p.Node != 0 {
		t.Fatalf("ID %s: node %d, %v; want the twitter layout and the lowest free node, not the file's 7", out, p.Node, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "layout")); err != nil {
		t.Fatalf("the file's data directory was not used: %v", err)
	}
	if _, errOut, code := runCLI("tag", "create", "order", "--config", cfg); code != 0 {
		t.Fatalf("tag create --config: exit %d, %s", code, errOut)
	}
	if out, _, code := runCLI("tag", "list", "--data-dir", dir); code != 0 || !strings.Contains(out, "order") {
		t.Fatalf("the tag is not in the file's data directory: %q", out)
	}
}

// TestServeSegmentsOnly: with --snowflake=false the server takes no node
// (the store records no layout and no node) and serves segments only.
func TestServeSegmentsOnly(t *testing.T) {
	dir := t.TempDir()
	if _, errOut, code := runCLI("tag", "create", "order", "--data-dir", dir); code != 0 {
		t.Fatal(errOut)
	}
	base := startBeside(t, dir, "--snowflake=false")
	if ids := strings.Fields(fetch(t, base+"/v1/segments/order/batch?count=3&format=text")); len(ids) != 3 {
		t.Fatalf("segment IDs %v", ids)
	}
	resp, err := http.Get(base + "/v1/snowflake/next")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("snowflake on a server of segments only: %d, want 503", resp.StatusCode)
	}
	if _, err := os.Stat(filepath.Join(dir, "layout")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a layout recorded by a server that takes no node: %v", err)
	}
	if hwms, _ := filepath.Glob(filepath.Join(dir, "nodes", "*")); len(hwms) != 0 {
		t.Errorf("node HWMs written by a server that takes no node: %v", hwms)
	}
}

// TestFirnTokenIsNotASetting: FIRN_TOKEN, the token firn next and firn
// tag send, is accepted beside the settings' variables.
func TestFirnTokenIsNotASetting(t *testing.T) {
	t.Setenv("FIRN_TOKEN", "s3cret")
	for _, args := range [][]string{{"config", "check"}, {"next", "--data-dir", t.TempDir()}} {
		if out, errOut, code := runCLI(args...); code != 0 {
			t.Errorf("%v with FIRN_TOKEN set: exit %d, %s%s", args, code, out, errOut)
		}
	}
}

// TestNextBesideATLSServer: beside an HTTPS server whose certificate this
// machine does not trust, firn next says to give --ca, and works with it.
func TestNextBesideATLSServer(t *testing.T) {
	dir := t.TempDir()
	cert, key := selfSigned(t, t.TempDir())
	addr := freePort(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- serve(ctx, []string{"--http", addr, "--grpc", "off", "--data-dir", dir, "--tls-cert", cert, "--tls-key", key}, io.Discard)
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	// Serving once its address is in the data directory.
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(filepath.Join(dir, backend.DiscoveryName)); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the server left no address in its data directory")
		}
	}
	out, errOut, code := runCLI("next", "-n", "2", "--data-dir", dir, "--ca", cert)
	if code != 0 || len(strings.Fields(out)) != 2 {
		t.Fatalf("next --ca beside an HTTPS server: exit %d, %q %s", code, out, errOut)
	}
	if _, errOut, code := runCLI("next", "--data-dir", dir); code != 2 || !strings.Contains(errOut, "--ca") {
		t.Fatalf("next without --ca: exit %d, %s; want 2 naming --ca", code, errOut)
	}
}
