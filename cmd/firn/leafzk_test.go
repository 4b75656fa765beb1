package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/firn-id/firn/internal/legacytest"
	"github.com/firn-id/firn/internal/testseam"
	"github.com/firn-id/firn/internal/testserver"
	"github.com/firn-id/firn/zkstore"
)

// leafHeartbeat is the stand-ins' heartbeat, and leafWatch the watch
// --apply keeps in these tests: over three heartbeats, as Leaf's 3 s
// heartbeat and the 8 s watch. The CLI has no way to shorten it; this
// test binary does, through internal/testseam.
const (
	leafHeartbeat = 200 * time.Millisecond
	leafWatch     = 700 * time.Millisecond
)

// leafCLI is a Leaf fleet on a real ZooKeeper and the flags of firn's
// commands on it: the registry is a namespace of the same ensemble.
type leafCLI struct {
	servers, name string
	hosts         []legacytest.SnowflakeConfig
	ids           []int64 // every ID the stand-ins issued
	check, store  []string
}

func newLeafCLI(t *testing.T) *leafCLI {
	zk := testserver.ZooKeeper(t)
	l := &leafCLI{servers: strings.Join(zk.Servers(), ","), name: "leaf-" + suffix()}
	for _, ip := range []string{"10.0.0.1", "10.0.0.2", "10.0.0.3"} {
		l.hosts = append(l.hosts, legacytest.SnowflakeConfig{IP: ip, Port: "8080", Servers: zk.Servers(), Name: l.name, TmpDir: t.TempDir(), Heartbeat: leafHeartbeat})
	}
	l.store = []string{"--store", "zookeeper", "--endpoints", l.servers, "--namespace", "/firn/" + l.name}
	l.check = append([]string{"migrate", "check", "--from", "leaf-zookeeper", "--leaf-endpoints", l.servers, "--leaf-name", l.name}, l.store...)
	return l
}

// start runs the stand-ins, each issuing n IDs, and returns them running.
func (l *leafCLI) start(t *testing.T, n int) []*legacytest.Snowflake {
	var fleet []*legacytest.Snowflake
	for _, h := range l.hosts {
		s, err := legacytest.StartSnowflake(h)
		if err != nil {
			t.Fatalf("start Leaf %s: %v", h.IP, err)
		}
		t.Cleanup(s.Stop)
		for range n {
			id, err := s.Next()
			if err != nil {
				t.Fatal(err)
			}
			l.ids = append(l.ids, id)
		}
		fleet = append(fleet, s)
	}
	return fleet
}

// run runs firn with args and wants exit code want.
func (l *leafCLI) run(t *testing.T, want int, args ...string) string {
	t.Helper()
	out, stderr, code := runCLI(args...)
	if code != want {
		t.Fatalf("firn %s: exit %d, want %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, want, out, stderr)
	}
	return out + stderr
}

func wantAll(t *testing.T, what, out string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(out, w) {
			t.Errorf("%s lacks %q:\n%s", what, w, out)
		}
	}
}

// TestUnreserveOnAnUnusedNamespace: firn admin unreserve on a namespace
// nothing ever used says there is nothing to unreserve there, naming the
// namespace, and not that there is nothing to advance (the command of
// the same error elsewhere).
func TestUnreserveOnAnUnusedNamespace(t *testing.T) {
	zk := testserver.ZooKeeper(t)
	ns := "/firn/unused-" + suffix()
	out, errOut, code := runCLI("admin", "unreserve", "--node", "1", "--confirm-caches-deleted", "--note", "OPS-1",
		"--store", "zookeeper", "--endpoints", strings.Join(zk.Servers(), ","), "--namespace", ns)
	if code != 2 || out != "" || strings.Contains(errOut, "advance") {
		t.Fatalf("exit %d, stdout %q, stderr %q: want exit 2 naming unreserve, not advance", code, out, errOut)
	}
	wantAll(t, "unreserve on an unused namespace", errOut, ns, "never been used", "nothing to unreserve")
}

// TestMigrateLeafZooKeeperCLI takes a Leaf fleet over through the binary's
// commands: --apply is refused while a stand-in heartbeats and writes
// nothing into the registry; applied, then applied again (it says so);
// the reserved worker IDs are refused to firn next and firn serve until
// firn admin unreserve lets one out; firn serve in Leaf's layout issues,
// over HTTP, IDs unique against every Leaf ID and above them all.
func TestMigrateLeafZooKeeperCLI(t *testing.T) {
	defer testseam.SetLeafWatch(leafWatch)()
	l := newLeafCLI(t)
	fleet := l.start(t, 2000)
	time.Sleep(2 * leafHeartbeat) // every worker has written a heartbeat
	fleet[0].Stop()
	fleet[1].Stop()
	out := l.run(t, 2, append(l.check, "--apply")...)
	wantAll(t, "--apply beside a live Leaf", out, "Leaf worker 2 (10.0.0.3:8080)", "a Leaf instance is alive", "nothing written to firn's registry")
	reg, err := zkstore.New(zkstore.Config{Servers: strings.Split(l.servers, ","), Namespace: l.store[5]})
	if err != nil {
		t.Fatal(err)
	}
	if r, err := reg.Reservation(context.Background()); err == nil && (len(r.Nodes) > 0 || r.Floor != 0) {
		t.Fatalf("the refused --apply wrote %+v into the registry", r)
	}
	fleet[2].Stop()

	plan := l.run(t, 0, append(l.check, "--sample-id", strconv.FormatInt(l.ids[0], 10))...)
	wantAll(t, "the plan", plan, "10.0.0.1:8080", "10.0.0.3:8080", "sequence 3", "node IDs to reserve in firn's registry: 0–2",
		"heartbeat 3s and a clock-skew margin 2s", "fits the layout", "workerID.properties", "never delete /snowflake/"+l.name,
		"preset: twitter", "store: zookeeper", "not determined:", "nothing written")
	first := l.run(t, 0, append(l.check, "--apply")...)
	wantAll(t, "--apply", first, "applied: /snowflake/"+l.name+"/forever's sequence is past 1023", "reserves 3 Leaf worker IDs and")
	again := l.run(t, 0, append(l.check, "--apply")...)
	wantAll(t, "--apply again", again, "recognised, nothing rewritten", "nothing new")

	l.checkUnreserve(t)
	firn := l.serve(t)
	checkAboveLeaf(t, l.ids, firn)
}

// checkUnreserve: node 1 is refused to firn next and firn serve; firn admin
// unreserve refuses without the confirmation, a note, or a node not
// reserved; then lets it out, saying what it recorded; and firn next
// takes it.
func (l *leafCLI) checkUnreserve(t *testing.T) {
	next := append([]string{"next", "--node", "1", "--layout", "twitter"}, l.store...)
	wantAll(t, "firn next on a reserved node", l.run(t, 1, next...), "node 1 is reserved in the registry")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second) // a serve that started is killed, and fails below
	defer cancel()
	serve := exec.CommandContext(ctx, testserver.Binary(t), append([]string{"serve", "--node", "1", "--layout", "twitter", "--http", testserver.Addr(t), "--grpc", "off"}, l.store...)...)
	out, err := serve.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "node 1 is reserved in the registry") {
		t.Fatalf("firn serve --node 1: %v, %s; want a refusal naming the reservation", err, out)
	}
	un := append([]string{"admin", "unreserve", "--node", "1"}, l.store...)
	wantAll(t, "unreserve unconfirmed", l.run(t, 2, append(un, "--note", "OPS-1")...), "--confirm-caches-deleted is required")
	wantAll(t, "unreserve without a note", l.run(t, 2, append(un, "--confirm-caches-deleted")...), "--note is required")
	wantAll(t, "unreserve node 7", l.run(t, 2, append([]string{"admin", "unreserve", "--node", "7", "--confirm-caches-deleted", "--note", "x"}, l.store...)...), "node 7 is not reserved")
	got := l.run(t, 0, append(un, "--confirm-caches-deleted", "--note", "OPS-1 caches removed by alice")...)
	wantAll(t, "unreserve", got, "node 1: no longer reserved", "workerID.properties deleted on every Leaf host", "OPS-1 caches removed by alice", "still reserved: 0, 2")
	l.run(t, 0, next...)
	wantAll(t, "--apply after unreserve", l.run(t, 0, append(l.check, "--apply")...), "reserves 2 Leaf worker IDs")
}

// serve runs firn serve in Leaf's layout on the registry and takes IDs
// over HTTP.
func (l *leafCLI) serve(t *testing.T) []int64 {
	p := startServe(t, append([]string{"--layout", "twitter"}, l.store...)...)
	defer p.stop(t)
	var ids []int64
	for range 20 {
		ids = append(ids, batch(t, p.base+"/v1/snowflake/batch?count=100")...)
	}
	return ids
}

func checkAboveLeaf(t *testing.T, leaf, firn []int64) {
	t.Helper()
	seen := map[int64]bool{}
	for _, id := range append(slices.Clone(leaf), firn...) {
		if seen[id] {
			t.Fatalf("ID %d issued twice", id)
		}
		seen[id] = true
	}
	if lo, hi := slices.Min(firn), slices.Max(leaf); lo <= hi {
		t.Fatalf("firn's least ID %d is not above Leaf's largest %d", lo, hi)
	}
}

// TestMigrateLeafZooKeeperRefusals: bad input exits 2 before anything is
// dialed or written; a registry that keeps no reservation is refused by
// --apply before the local store's directory is created.
func TestMigrateLeafZooKeeperRefusals(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	base := []string{"migrate", "check", "--from", "leaf-zookeeper", "--leaf-endpoints", "127.0.0.1:1"}
	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"no name", nil, "--leaf-name is required"},
		{"no endpoints", []string{"--leaf-endpoints", "", "--leaf-name", "x"}, "--leaf-endpoints is required"},
		{"a database flag", []string{"--leaf-name", "x", "--dsn", "root@tcp(127.0.0.1:1)/x"}, "--dsn is not for --from leaf-zookeeper"},
		{"another layout", []string{"--leaf-name", "x", "--layout", "sonyflake"}, "Leaf's layout is fixed in its code"},
		{"a Leaf flag elsewhere", []string{"--from", "leaf", "--dsn", "root@tcp(127.0.0.1:1)/x", "--leaf-name", "x"}, "--leaf-endpoints is not for --from leaf"},
		{"a bad server", []string{"--leaf-name", "x", "--leaf-endpoints", "zk1"}, "--leaf-endpoints zk1: server address"},
		{"--apply on the local store", []string{"--leaf-name", "x", "--apply", "--data-dir", dir},
			`local data directory ` + dir + ` keeps no reservation of its own: the reserved node IDs would live in configuration only`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, code := runCLI(append(slices.Clone(base), tt.args...)...)
			if code != 2 || out != "" || !strings.Contains(errOut, tt.wantErr) {
				t.Fatalf("exit %d, stdout %q, stderr %q; want exit 2 and %q", code, out, errOut, tt.wantErr)
			}
		})
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("the refused --apply created %s: %v", dir, err)
	}
}
