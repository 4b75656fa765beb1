package main

import (
	"bytes"
	"context"
	"maps"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/firn-id/firn/internal/testenv"
	"github.com/firn-id/firn/internal/testserver"
	"github.com/firn-id/firn/snowflake"
)

// The multi-node guide: docs/operations.md's two step-by-step sections.
const (
	guideFile     = "docs/operations.md"
	guideEtcd     = "Three nodes on etcd, step by step"
	guidePostgres = "Three nodes on PostgreSQL"
)

// TestGuideOnEtcd runs the commands of "Three nodes on etcd, step by
// step" as written, in one shell, in a directory of its own. The
// substitutions: `firn` and `etcd` on PATH are the binary built here and
// FIRN_TEST_ETCD; every loopback address the section names is given a
// free port. The guide's own `sleep` waits out the lease where it says
// "watch it come back" (the test checks it is at least three lease TTLs).
func TestGuideOnEtcd(t *testing.T) {
	etcd := testenv.Endpoint(t, "FIRN_TEST_ETCD")
	blocks := docBlocks(t, guideFile, guideEtcd)
	checkGuide(t, blocks, runGuide(t, blocks, map[string]string{"etcd": etcd}, "", ""))
}

// TestGuideOnPostgres runs "Three nodes on PostgreSQL", then steps 3 to 8
// of the etcd section as that section says, leaving out the block that
// stops etcd, on FIRN_TEST_POSTGRES's server in a database of the test's
// own: the guide's DSN is replaced by that database's, and every loopback
// address given a free port, as for etcd.
func TestGuideOnPostgres(t *testing.T) {
	realDSN := guideDatabase(t, "guide_")
	blocks := docBlocks(t, guideFile, guidePostgres)
	m := regexp.MustCompile(`dsn: "([^"]+)"`).FindStringSubmatch(blocks[0].text)
	if m == nil {
		t.Fatalf("the PostgreSQL section's first block names no DSN:\n%s", blocks[0].text)
	}
	steps := false
	for _, b := range docBlocks(t, guideFile, guideEtcd) {
		steps = steps || strings.HasPrefix(b.heading, "3. ")
		if steps && !strings.Contains(b.text, "$etcd") {
			blocks = append(blocks, b)
		}
	}
	checkGuide(t, blocks, runGuide(t, blocks, nil, m[1], realDSN))
}

// guideDatabase creates a database named prefix and a random suffix on
// FIRN_TEST_POSTGRES's server, dropped when t ends, and returns its DSN.
func guideDatabase(t *testing.T, prefix string) string {
	t.Helper()
	pg := testenv.Endpoint(t, "FIRN_TEST_POSTGRES")
	db := prefix + suffix()
	execAs(t, "postgres", pg, "CREATE DATABASE "+db)
	t.Cleanup(func() { execAs(t, "postgres", pg, "DROP DATABASE IF EXISTS "+db+" WITH (FORCE)") })
	u, err := url.Parse(pg)
	if err != nil {
		t.Fatalf("FIRN_TEST_POSTGRES is not a URL DSN: %v", err)
	}
	u.Path = "/" + db
	return u.String()
}

// runGuide runs blocks as one sh script in a new directory, with tools
// (name → path) first on PATH beside the firn built here, the DSN dsn
// replaced by realDSN, and every 127.0.0.1 address given a free port. It
// returns what each block printed, by heading; it fails t if the script
// fails. Every process the script started is killed when it ends.
func runGuide(t *testing.T, blocks []docBlock, tools map[string]string, dsn, realDSN string) map[string]string {
	t.Helper()
	testenv.Tool(t, "curl") // the guide's own client, beside firn next
	dir := t.TempDir()
	bin, work := filepath.Join(dir, "bin"), filepath.Join(dir, "work")
	for _, d := range []string{bin, work} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	links := map[string]string{"firn": testserver.Binary(t)}
	maps.Copy(links, tools)
	for name, path := range links {
		if err := os.Symlink(path, filepath.Join(bin, name)); err != nil {
			t.Fatal(err)
		}
	}

	var all strings.Builder
	for _, b := range blocks {
		all.WriteString(b.text)
	}
	text, pairs := all.String(), []string{}
	if dsn != "" {
		// First, so that the replacer takes the DSN whole: its address is
		// the database's, not a port to free.
		text, pairs = strings.ReplaceAll(text, dsn, ""), []string{dsn, realDSN}
	}
	seen := map[string]bool{}
	for _, a := range regexp.MustCompile(`127\.0\.0\.1:[0-9]+`).FindAllString(text, -1) {
		seen[a] = true
	}
	addrs := slices.Sorted(maps.Keys(seen))
	for i, free := range testserver.Addrs(t, len(addrs)) {
		pairs = append(pairs, addrs[i], free)
	}
	r := strings.NewReplacer(pairs...)

	script := "set -e\n"
	for _, b := range blocks {
		script += "echo '@@ " + b.heading + "'\n" + r.Replace(b.text) + "\n"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", script)
	cmd.Dir = work
	cmd.Env = []string{"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH"), "HOME=" + dir, "XDG_STATE_HOME=" + dir, "LANG=C"}
	// The servers and etcd run in the script's process group: killed
	// with it, whatever the script reached.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	if err != nil {
		logs, _ := filepath.Glob(filepath.Join(work, "*.log"))
		for _, l := range logs {
			b, _ := os.ReadFile(l)
			t.Logf("%s:\n%s", filepath.Base(l), b)
		}
		t.Fatalf("the guide's commands failed: %v\n%s\nwhat they printed:\n%s", err, script, out.String())
	}
	printed := map[string]string{}
	heading := ""
	for _, line := range strings.SplitAfter(out.String(), "\n") {
		if h, ok := strings.CutPrefix(line, "@@ "); ok {
			heading = strings.TrimSpace(h)
			continue
		}
		printed[heading] += line
	}
	return printed
}

// checkGuide checks what the guide's steps printed: IDs unique across
// the three servers, the others serving while one is killed, and the
// killed server, restarted after the guide's wait of at least three lease
// TTLs, holding its old node again and issuing IDs from it.
func checkGuide(t *testing.T, blocks []docBlock, printed map[string]string) {
	t.Helper()
	step := func(name string) string {
		t.Helper()
		for h, out := range printed {
			if strings.Contains(h, name) {
				return out
			}
		}
		t.Fatalf("no step %q among %v", name, printed)
		return ""
	}
	// The wait is the guide's own: at least three lease TTLs where it
	// says to watch the node come back.
	ttl, wait := 0, 0
	for _, b := range blocks {
		for _, m := range regexp.MustCompile(`lease_ttl: ([0-9]+)s`).FindAllStringSubmatch(b.text, -1) {
			ttl = max(ttl, atoi(t, m[1]))
		}
		if strings.Contains(b.heading, "Watch it come back") {
			for _, m := range regexp.MustCompile(`(?m)^sleep ([0-9]+)$`).FindAllStringSubmatch(b.text, -1) {
				wait += atoi(t, m[1])
			}
		}
	}
	if ttl == 0 || wait < 3*ttl {
		t.Fatalf("the guide waits %d s for a lease TTL of %d s where it watches the node come back: want a TTL, and a wait of at least three", wait, ttl)
	}
	ids := map[uint64]string{}
	idsOf := func(name string) []uint64 {
		var got []uint64
		for _, f := range regexp.MustCompile(`(?m)^(?:\{"id":")?([0-9]+)(?:"\})?$`).FindAllStringSubmatch(step(name), -1) {
			id, err := strconv.ParseUint(f[1], 10, 64)
			if err != nil {
				t.Fatalf("step %q printed %q: %v", name, f[0], err)
			}
			if prev, ok := ids[id]; ok {
				t.Errorf("ID %d printed twice: in %q and in %q", id, prev, name)
			}
			ids[id] = name
			got = append(got, id)
		}
		return got
	}
	if got := idsOf("Take IDs"); len(got) < 4 {
		t.Errorf("taking IDs from the three servers printed %d IDs:\n%s", len(got), step("Take IDs"))
	}
	if got := idsOf("Kill one"); len(got) == 0 {
		t.Errorf("no ID from the servers left after the kill:\n%s", step("Kill one"))
	}
	again := idsOf("Watch it come back")
	nodeRe := regexp.MustCompile(`"node":([0-9]+)`)
	before, after := nodeRe.FindStringSubmatch(step("Kill one")), nodeRe.FindStringSubmatch(step("Watch it come back"))
	if before == nil || after == nil {
		t.Fatalf("the node before the kill %q, after the restart %q: want both shown", before, after)
	}
	if before[1] != after[1] {
		t.Errorf("the restarted server holds node %s, before the kill %s: want its old node, free again after the lease", after[1], before[1])
	}
	if len(again) == 0 {
		t.Fatalf("the restarted server issued no ID:\n%s", step("Watch it come back"))
	}
	l := snowflake.DefaultLayout()
	for _, id := range again {
		p, err := l.Decompose(id)
		if err != nil {
			t.Fatal(err)
		}
		if strconv.FormatUint(p.Node, 10) != after[1] {
			t.Errorf("ID %d from the restarted server: %+v, want node %s", id, p, after[1])
		}
	}
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
