package main

import (
	"bytes"
	"cmp"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/firn-id/firn/internal/servetest"
	"github.com/firn-id/firn/internal/testenv"
	"github.com/firn-id/firn/snowflake"
)

// firnNext runs the binary's firn next with args and the environment
// plus env, and returns its IDs.
func firnNext(t *testing.T, bin string, env []string, args ...string) []string {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"next"}, args...)...)
	var out, errOut bytes.Buffer
	cmd.Env, cmd.Stdout, cmd.Stderr = append(os.Environ(), env...), &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Errorf("firn next %s: %v\n%s", strings.Join(args, " "), err, errOut.String())
		return nil
	}
	return strings.Fields(out.String())
}

// TestNextOnTwoDirectoriesNeverRepeats: two firn next of one user on two
// data directories at once, as a newcomer's second server beside the
// quick start's: one node directory keeps them on two nodes (or the
// second past the first), so no ID is in both outputs.
func TestNextOnTwoDirectoriesNeverRepeats(t *testing.T) {
	bin := servetest.Binary(t)
	env := []string{"XDG_STATE_HOME=" + t.TempDir()}
	const n = 300000
	dirs := []string{t.TempDir(), t.TempDir()}
	outs := make([][]string, len(dirs))
	var wg sync.WaitGroup
	for i, dir := range dirs {
		wg.Go(func() { outs[i] = firnNext(t, bin, env, "--data-dir", dir, "-n", strconv.Itoa(n)) })
	}
	wg.Wait()
	seen := make(map[string]bool, n)
	for _, id := range outs[0] {
		seen[id] = true
	}
	common := 0
	for _, id := range outs[1] {
		if seen[id] {
			common++
		}
	}
	if len(outs[0]) != n || len(outs[1]) != n || common > 0 {
		t.Fatalf("firn next -n %d on two data directories: %d and %d IDs, %d in both; want %d each, none in both", n, len(outs[0]), len(outs[1]), common, n)
	}
}

// clockBinary builds cmd/firn with the clock hook (clockhook_on.go), once
// per test binary.
var clockBinary = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "firn-clockhook")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "firn")
	out, err := exec.Command("go", "build", "-tags", "firn_clockhook", "-o", bin, "github.com/firn-id/firn/cmd/firn").CombinedOutput()
	if err != nil {
		return "", errors.New(string(out))
	}
	return bin, nil
})

// TestNextOnAnotherDirectoryWithTheClockBack: firn next on directory A
// writes node 0's HWM and exits; with the clock set back 5 s, firn next
// on directory B takes node 0 again and starts at A's HWM, every ID past
// A's.
func TestNextOnAnotherDirectoryWithTheClockBack(t *testing.T) {
	testenv.NotShort(t, "a firn process")
	bin, err := clockBinary()
	if err != nil {
		t.Fatalf("build firn with the clock hook: %v", err)
	}
	env := []string{"XDG_STATE_HOME=" + t.TempDir()}
	a, b := t.TempDir(), t.TempDir()
	first := firnNext(t, bin, env, "--data-dir", a, "-n", "20000")
	hwm, err := os.ReadFile(filepath.Join(a, "nodes", "0.hwm"))
	if err != nil || len(first) == 0 {
		t.Fatalf("firn next on %s: %d IDs, node 0's HWM: %v", a, len(first), err)
	}
	back := append(env, "FIRN_TEST_CLOCK_HOOK=1", "FIRN_TEST_CLOCK_OFFSET=-5s")
	second := firnNext(t, bin, back, "--data-dir", b, "-n", "20000")
	if len(second) == 0 {
		t.FailNow()
	}
	byValue := func(x, y string) int { return cmp.Compare(mustInt(t, x), mustInt(t, y)) }
	last, start := slices.MaxFunc(first, byValue), slices.MinFunc(second, byValue)
	p, err := snowflake.DefaultLayout().Decompose(uint64(mustInt(t, start)))
	if err != nil {
		t.Fatal(err)
	}
	if mustInt(t, start) <= mustInt(t, last) || p.Time.UnixMilli() < mustInt(t, strings.TrimSpace(string(hwm))) {
		t.Fatalf("with the clock 5 s back, directory B's first ID %s (node %d, %s) is not past directory A's last %s and HWM %s",
			start, p.Node, p.Time, last, hwm)
	}
}

// TestNextOnTwoDirectoriesWithTwoLayouts: two firn next of one user on
// two data directories at once, the second with 11 node and 11 sequence
// bits. A layout is an ID space of its own (docs/design.md §4): the
// second is not refused, and takes node 0 of its own layout, from a node
// directory of its own, while the first holds node 0 of the default
// layout. (Their IDs may coincide, as two etcd namespaces' may: two ID
// spaces are never mixed in one table. Before the node directory was
// keyed by layout, they took nodes 0 and 1 of one directory and still
// collided, 43,008 and 73,728 of 300,000 IDs in two runs.)
func TestNextOnTwoDirectoriesWithTwoLayouts(t *testing.T) {
	bin := servetest.Binary(t)
	env := []string{"XDG_STATE_HOME=" + t.TempDir()}
	const n = 300000
	first := firnNext(t, bin, env, "--data-dir", t.TempDir(), "-n", "1") // records the default layout
	cmd := exec.Command(bin, "next", "--data-dir", t.TempDir(), "-n", strconv.Itoa(n))
	var out bytes.Buffer
	cmd.Env, cmd.Stdout = append(os.Environ(), env...), &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	otherFlags := []string{"--node-bits", "11", "--sequence-bits", "11"}
	otherIDs := firnNext(t, bin, env, append([]string{"--data-dir", t.TempDir(), "-n", strconv.Itoa(n)}, otherFlags...)...)
	if err := cmd.Wait(); err != nil || len(first) != 1 {
		t.Fatalf("firn next with the default layout: %v", err)
	}
	x, err := parseNext(otherFlags)
	if err != nil {
		t.Fatal(err)
	}
	if len(otherIDs) != n {
		t.Fatalf("firn next with another layout beside the default: %d IDs, want %d", len(otherIDs), n)
	}
	if p, err := x.l.Decompose(uint64(mustInt(t, otherIDs[0]))); err != nil || p.Node != 0 {
		t.Fatalf("firn next with another layout: ID %s is %+v, %v; want node 0 of its own layout", otherIDs[0], p, err)
	}
}
