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
	"syscall"
	"testing"

	"github.com/firn-id/firn/internal/testenv"
	"github.com/firn-id/firn/internal/testserver"
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
	bin := testserver.Binary(t)
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
// second is not refused, and takes a node the first does not hold: node
// N of the user is one whatever the layout. (Their IDs may coincide
// otherwise, as two etcd namespaces' may: two ID spaces are never mixed
// in one table.)
func TestNextOnTwoDirectoriesWithTwoLayouts(t *testing.T) {
	bin := testserver.Binary(t)
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
	p, err := x.l.Decompose(uint64(mustInt(t, otherIDs[0])))
	if err != nil {
		t.Fatal(err)
	}
	d, err := snowflake.DefaultLayout().Decompose(uint64(mustInt(t, strings.Fields(out.String())[0])))
	if err != nil || p.Node == d.Node {
		t.Fatalf("firn next with another layout took node %d, and the default layout's beside it node %d (%v): want two nodes", p.Node, d.Node, err)
	}
}

// nextAtOnce runs two firn next of one user at once, a and b, and
// returns each one's IDs, or its refusal.
func nextAtOnce(t *testing.T, bin string, env []string, a, b []string) (ids [2][]string, refusal [2]string) {
	t.Helper()
	var wg sync.WaitGroup
	for i, args := range [][]string{a, b} {
		wg.Go(func() {
			cmd := exec.Command(bin, append([]string{"next"}, args...)...)
			var out, errOut bytes.Buffer
			cmd.Env, cmd.Stdout, cmd.Stderr = append(os.Environ(), env...), &out, &errOut
			if err := cmd.Run(); err != nil {
				refusal[i] = errOut.String() + " (" + err.Error() + ")"
				return
			}
			ids[i] = strings.Fields(out.String())
		})
	}
	wg.Wait()
	return ids, refusal
}

// common counts the IDs in both lists.
func common(a, b []string) int {
	seen := make(map[string]bool, len(a))
	for _, id := range a {
		seen[id] = true
	}
	n := 0
	for _, id := range b {
		if seen[id] {
			n++
		}
	}
	return n
}

// TestNextSameBitsOtherFields is the review's reproduction: one user, two
// data directories, two firn next at once, the second with a layout that
// composes the same IDs under another fingerprint (node fields named or
// split otherwise, or a preset written out). Keyed by fingerprint, each
// took node 0 of a node directory of its own: tens of thousands of IDs in
// both outputs. Now the second is refused, naming the recorded layout;
// followed literally, its advice runs beside the first with no ID in
// common.
func TestNextSameBitsOtherFields(t *testing.T) {
	bin := testserver.Binary(t)
	sony := []string{"--epoch", "1409529600000", "--tick", "10ms", "--time-bits", "39", "--node-bits", "16", "--sequence-bits", "8", "--order", "time,sequence,node"}
	for _, tc := range []struct {
		name string
		a, b []string
		n    int
	}{
		{"node named worker", nil, []string{"--node-names", "worker"}, 300000},
		{"node split 5,5", nil, []string{"--node-bits", "5,5"}, 300000},
		{"twitter with one node field", []string{"--layout", "twitter"}, []string{"--layout", "twitter", "--node-bits", "10"}, 300000},
		{"sonyflake written out", []string{"--layout", "sonyflake"}, sony, 20000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := []string{"XDG_STATE_HOME=" + t.TempDir()}
			dirA, dirB := t.TempDir(), t.TempDir()
			n := strconv.Itoa(tc.n)
			firnNext(t, bin, env, append([]string{"--data-dir", dirA, "-n", "1"}, tc.a...)...) // the first records its layout
			ids, refusal := nextAtOnce(t, bin, env,
				append([]string{"--data-dir", dirA, "-n", n}, tc.a...),
				append([]string{"--data-dir", dirB, "-n", n}, tc.b...))
			if refusal[0] != "" {
				t.Fatalf("the first layout, recorded: %s", refusal[0])
			}
			if refusal[1] == "" {
				if c := common(ids[0], ids[1]); c > 0 {
					t.Fatalf("firn next %v and %v at once: %d IDs in both", tc.a, tc.b, c)
				}
				return
			}
			layout := advised(t, refusal[1], "--layout")
			ids, refusal = nextAtOnce(t, bin, env,
				append([]string{"--data-dir", dirA, "-n", n}, tc.a...),
				[]string{"--data-dir", dirB, "-n", n, "--layout", layout})
			if refusal[0] != "" || refusal[1] != "" {
				t.Fatalf("the refusal's advice, --layout %s, beside the first: %q, %q", layout, refusal[0], refusal[1])
			}
			if len(ids[0]) != tc.n || len(ids[1]) != tc.n {
				t.Fatalf("the refusal's advice beside the first: %d and %d IDs, want %d each", len(ids[0]), len(ids[1]), tc.n)
			}
			if c := common(ids[0], ids[1]); c > 0 {
				t.Fatalf("the refusal's advice, --layout %s, beside %v: %d IDs in both", layout, tc.a, c)
			}
		})
	}
}

// TestNextBesideAFirnThatRecordedNoLayout: a firn from before the user's
// node directory recorded a layout (built from c8c1791, say) still runs on
// node 0: it holds nodes/node-0.lock, and nodes/ holds no record. After
// the upgrade, firn next --layout js53 runs first, then the default
// layout: neither takes node 0 while the old process holds it.
func TestNextBesideAFirnThatRecordedNoLayout(t *testing.T) {
	bin := testserver.Binary(t)
	state := t.TempDir()
	env := []string{"XDG_STATE_HOME=" + state}
	nodes := filepath.Join(state, "firn", "nodes")
	if err := os.MkdirAll(nodes, 0o700); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(nodes, "node-0.lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	js53, _ := snowflake.Preset("js53")
	for _, run := range []struct {
		l    snowflake.Layout
		args []string
	}{
		{js53, []string{"--layout", "js53"}},
		{snowflake.DefaultLayout(), nil},
	} {
		for _, id := range firnNext(t, bin, env, append([]string{"--data-dir", t.TempDir(), "-n", "3"}, run.args...)...) {
			if p, err := run.l.Decompose(uint64(mustInt(t, id))); err != nil || p.Node == 0 {
				t.Fatalf("firn next %v beside an old firn holding node 0: ID %s is %+v, %v", run.args, id, p, err)
			}
		}
	}
}
