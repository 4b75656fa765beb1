package main

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/firn-id/firn/internal/testserver"
)

// TestZooKeeperHoldsNoSegments: firn tag on a ZooKeeper registry, and
// segments.store zookeeper, exit 2 and point to segments.store (a
// database of their own), before anything is dialed.
func TestZooKeeperHoldsNoSegments(t *testing.T) {
	runs := [][]string{
		{"tag", "list", "--store", "zookeeper", "--endpoints", "127.0.0.1:1"},
		{"tag", "create", "order", "--store", "zookeeper", "--endpoints", "127.0.0.1:1"},
		{"config", "check", "--store", "zookeeper", "--endpoints", "127.0.0.1:1", "--segment-store", "zookeeper", "--segment-dsn", "x"},
		{"serve", "--store", "etcd", "--endpoints", "127.0.0.1:1", "--segment-store", "zookeeper", "--segment-dsn", "x"},
	}
	for _, args := range runs {
		_, stderr, code := runCLI(args...)
		if code != 2 || !strings.Contains(stderr, "segments.store") || !strings.Contains(stderr, "postgres or mysql") {
			t.Errorf("firn %s: exit %d, %q; want 2, pointing to segments.store and a database", strings.Join(args, " "), code, stderr)
		}
	}
}

// TestServeWarnsWorldWritableHWMs starts firn serve on ZooKeeper three
// times: without digest credentials it warns, naming the HWMs' path; with
// them, on the namespace the first start left open, it names the znodes
// anyone may still change; on a namespace of its own, it does not warn.
func TestServeWarnsWorldWritableHWMs(t *testing.T) {
	zks := testserver.ZooKeeper(t)
	digest := filepath.Join(t.TempDir(), "digest")
	if err := os.WriteFile(digest, []byte("firn:s3cret-pass\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ns := "/warn-" + suffix()
	base := []string{"--store", "zookeeper", "--endpoints", strings.Join(zks.Servers(), ",")}
	lives := []struct {
		name string
		args []string
		want string // in the WARN line; "" for no warning
	}{
		{"no digest", []string{"--namespace", ns}, `"path":"` + ns + `/hwm"`},
		{"digest, znodes left open", []string{"--namespace", ns, "--zk-digest-file", digest}, ns + "/hwm/0"},
		{"digest, own namespace", []string{"--namespace", ns + "-own", "--zk-digest-file", digest}, ""},
	}
	for i, l := range lives {
		p := startServe(t, append(base, l.args...)...)
		if i == 0 { // no segment store beside ZooKeeper: segments answer 503, saying where they go
			resp, err := http.Get(p.base + "/v1/segments/order/next")
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 503 || !strings.Contains(string(body), "segments.store") {
				t.Errorf("a segment on ZooKeeper alone: %d %s; want 503 naming segments.store", resp.StatusCode, body)
			}
		}
		p.stop(t)
		log := p.Log()
		if strings.Contains(log, "s3cret-pass") {
			t.Fatalf("%s: the digest's password is in the log", l.name)
		}
		var warn string
		for line := range strings.SplitSeq(log, "\n") {
			if strings.Contains(line, `"level":"WARN"`) && strings.Contains(line, "WORLD-WRITABLE") {
				warn = line
			}
		}
		if l.want == "" && warn != "" || l.want != "" && !strings.Contains(warn, l.want) {
			t.Errorf("%s: warning %q; want one naming %q", l.name, warn, l.want)
		}
	}
}

// TestSchemaZooKeeper prints the znodes and ACLs of a namespace: with
// digest credentials from a file the identity is named, its password
// never; --dialect does not apply.
func TestSchemaZooKeeper(t *testing.T) {
	digest := filepath.Join(t.TempDir(), "digest")
	if err := os.WriteFile(digest, []byte("firn:s3cret-pass\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, stderr, code := runCLI("schema", "--store", "zookeeper", "--namespace", "/firn/orders", "--zk-digest-file", digest)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"/firn\n", "/firn/orders/hwm/N\n    persistent; ACL digest:firn:", "/firn/orders/held/N\n    ephemeral;", "/firn/orders/layout\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("firn schema --store zookeeper lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "s3cret-pass") {
		t.Errorf("firn schema prints the digest's password:\n%s", out)
	}
	if out, _, _ := runCLI("schema", "--store", "zookeeper"); !strings.Contains(out, "/firn/default/hwm/N\n    persistent; ACL world:anyone cdrwa") {
		t.Errorf("without digest: want world-writable HWMs in the default namespace:\n%s", out)
	}
	if _, stderr, code := runCLI("schema", "--store", "zookeeper", "--dialect", "postgres"); code != 2 || !strings.Contains(stderr, "--dialect") {
		t.Errorf("--store zookeeper --dialect postgres: exit %d, %q; want 2 naming --dialect", code, stderr)
	}
}

// TestZooKeeperDigestNeverPrinted: the digest credentials come from a
// file or FIRN_ZOOKEEPER_DIGEST, never a setting, so config print cannot
// show them; an ensemble that refuses the connection is one line naming
// the servers and the refusal, without the password.
func TestZooKeeperDigestNeverPrinted(t *testing.T) {
	t.Setenv("FIRN_ZOOKEEPER_DIGEST", "firn:s3cret-pass")
	args := []string{"--store", "zookeeper", "--endpoints", "127.0.0.1:1,127.0.0.1:2", "--dial-timeout", "300ms"}
	out, stderr, code := runCLI(append([]string{"config", "print"}, args...)...)
	if code != 0 || strings.Contains(out+stderr, "s3cret-pass") || !strings.Contains(out, "zookeeper:") {
		t.Fatalf("config print: exit %d, %q %q; want the zookeeper section without the password", code, out, stderr)
	}
	_, stderr, code = runCLI(append([]string{"next"}, args...)...)
	if code == 0 || strings.Contains(stderr, "s3cret-pass") || strings.Count(strings.TrimSpace(stderr), "\n") != 0 ||
		!strings.Contains(stderr, "zookeeper 127.0.0.1:1,127.0.0.1:2: unreachable: ") || !strings.Contains(stderr, "connection refused") {
		t.Fatalf("firn next on an unreachable ensemble: exit %d, %q; want one line naming both servers", code, stderr)
	}
	if _, stderr, code := runCLI(append([]string{"config", "check", "--zk-digest-file", "/nonexistent"}, args...)...); code != 2 || !strings.Contains(stderr, "both set") {
		t.Fatalf("a digest file and FIRN_ZOOKEEPER_DIGEST: exit %d, %q; want 2, refused", code, stderr)
	}
}

// TestNextOnZooKeeper runs firn next twice on one ZooKeeper namespace:
// each run takes a node, and the second run's IDs follow the first's.
func TestNextOnZooKeeper(t *testing.T) {
	zks := testserver.ZooKeeper(t)
	args := []string{"next", "-n", "100", "--store", "zookeeper", "--endpoints", strings.Join(zks.Servers(), ","), "--namespace", "/next-" + suffix()}
	var last int64
	for run := range 2 {
		out, stderr, code := runCLI(args...)
		lines := strings.Fields(out)
		if code != 0 || len(lines) != 100 {
			t.Fatalf("run %d: exit %d, %d IDs, %s", run, code, len(lines), stderr)
		}
		first, err := strconv.ParseInt(lines[0], 10, 64)
		if err != nil || first <= last {
			t.Fatalf("run %d starts at %s, not above the last run's %d", run, lines[0], last)
		}
		last, _ = strconv.ParseInt(lines[99], 10, 64)
	}
}
