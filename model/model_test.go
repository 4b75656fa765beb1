package model_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/firn-id/firn/internal/testenv"
)

// A check is one Spin run: a model, the macros it is built with, and
// whether Spin must find a violation (a mutant) or none (the protocol).
type check struct {
	name     string
	model    string
	defines  []string
	liveness bool // the ltl property under weak fairness, not the assertions
	mutant   bool // Spin must report a violation: an assertion, or a cycle where no holder serves
}

var checks = []check{
	{name: "node IDs: no tick issued twice", model: "nodeid.pml"},
	{name: "node IDs: a holder with a healthy store serves", model: "nodeid.pml", liveness: true},
	{name: "node IDs: an HWM write that may lower the value", model: "nodeid.pml", defines: []string{"MUT_LOWER"}, mutant: true},
	{name: "node IDs: the HWM read outside the row lock", model: "nodeid.pml", defines: []string{"MUT_READ_OUTSIDE"}, mutant: true},
	{name: "node IDs: the reservation advanced on an unconfirmed write", model: "nodeid.pml", defines: []string{"MUT_UNCONFIRMED"}, mutant: true},
	{name: "node IDs: an owner token reused across acquisitions", model: "nodeid.pml", defines: []string{"MUT_TOKEN_REUSE"}, mutant: true},
	{name: "node IDs: two generators bound to one lease", model: "nodeid.pml", defines: []string{"MUT_TWO_GEN"}, mutant: true},
	{name: "node IDs: a lost lease revived for a new generator", model: "nodeid.pml", defines: []string{"MUT_REVIVE"}, mutant: true},
	{name: "node IDs: a generator without a reservation", model: "nodeid.pml", defines: []string{"MUT_NORES"}, mutant: true},
	{name: "node IDs: leases that never expire keep a crashed holder's node", model: "nodeid.pml", defines: []string{"MUT_NO_EXPIRY"}, liveness: true, mutant: true},
	{name: "segments: no ID handed out twice", model: "segment.pml"},
	{name: "segments: a residue class taken from configuration order", model: "segment.pml", defines: []string{"MUT_CONFIG_ORDER"}, mutant: true},
	{name: "segments: a range read and written in two steps", model: "segment.pml", defines: []string{"MUT_NONATOMIC"}, mutant: true},
	{name: "sites: no tick issued twice", model: "site.pml"},
	{name: "sites: a claim outside the site's value served", model: "site.pml", defines: []string{"MUT_OUTSIDE"}, mutant: true},
	{name: "sites: a renewal that does not see the release marker", model: "site.pml", defines: []string{"MUT_NO_MARKER_CHECK"}, mutant: true},
	{name: "sites: the floor read before the marker is confirmed", model: "site.pml", defines: []string{"MUT_FLOOR_BEFORE_MARKER"}, mutant: true},
	{name: "sites: a claimant that does not start at the floor", model: "site.pml", defines: []string{"MUT_NO_FLOOR"}, mutant: true},
}

// perRun bounds each step of one check; the largest takes about 30 s on
// one core of a loaded machine.
const perRun = 3 * time.Minute

var errorsLine = regexp.MustCompile(`errors: (\d+)`)

// TestModels builds every model and mutant with Spin, compiles the
// verifier with gcc and runs it exhaustively: the protocol must give no
// error, each mutant a violated assertion (a duplicate ID) or, for the
// liveness property, an acceptance cycle (a run where no holder serves).
func TestModels(t *testing.T) {
	spin := testenv.Tool(t, "spin")
	gcc := testenv.Tool(t, "gcc")
	for _, c := range checks {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			out := verify(t, spin, gcc, c)
			m := errorsLine.FindStringSubmatch(out)
			if m == nil {
				t.Fatalf("no error count in the verifier's output:\n%s", out)
			}
			n, _ := strconv.Atoi(m[1])
			want := "assertion violated" // a duplicate ID
			if c.liveness {
				want = "acceptance cycle" // a run in which no holder serves
			}
			switch {
			case c.mutant && (n == 0 || !strings.Contains(out, want)):
				t.Errorf("mutant %v: want %q, got %d errors:\n%s", c.defines, want, n, out)
			case !c.mutant && n != 0:
				t.Errorf("want no errors, got %d:\n%s", n, out)
			case !c.mutant:
				// A search cut short proves nothing.
				for _, cut := range []string{"max search depth too small", "reached -DMEMLIM bound", "hash table is full"} {
					if strings.Contains(out, cut) {
						t.Errorf("the search was not exhaustive (%s):\n%s", cut, out)
					}
				}
				t.Log(summary(out))
			}
		})
	}
}

// verify generates, compiles and runs the verifier for c in a directory
// of its own, and returns its output.
func verify(t *testing.T, spin, gcc string, c check) string {
	t.Helper()
	dir := t.TempDir()
	src, err := os.ReadFile(c.model)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, c.model), src, 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"-a"}
	for _, d := range c.defines {
		args = append(args, "-D"+d)
	}
	run(t, dir, spin, append(args, c.model)...)
	cflags := []string{"-O1", "-w", "-DMEMLIM=1024"}
	panArgs := []string{"-m200000"}
	if c.liveness {
		cflags = append(cflags, "-DNFAIR=3")
		panArgs = append(panArgs, "-a", "-f")
	} else {
		cflags = append(cflags, "-DSAFETY", "-DNOCLAIM")
	}
	run(t, dir, gcc, append(cflags, "-o", "pan", "pan.c")...)
	return run(t, dir, filepath.Join(dir, "pan"), panArgs...)
}

// run runs a program in dir with a deadline and returns its output; the
// verifier's exit status says nothing its output does not.
func run(t *testing.T, dir, prog string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), perRun)
	defer cancel()
	cmd := exec.CommandContext(ctx, prog, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("%s %s: no result within %s", filepath.Base(prog), strings.Join(args, " "), perRun)
	}
	if err != nil && filepath.Base(prog) != "pan" {
		t.Fatalf("%s %s: %v\n%s", filepath.Base(prog), strings.Join(args, " "), err, out)
	}
	return string(out)
}

// summary picks the lines saying how much the search covered.
func summary(out string) string {
	var keep []string
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "errors:") || strings.Contains(l, "states, stored") || strings.Contains(l, "elapsed time") {
			keep = append(keep, strings.TrimSpace(l))
		}
	}
	return strings.Join(keep, "; ")
}
