package cluster

import (
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/firn-id/firn/test/cluster/evidence"
	"github.com/firn-id/firn/test/cluster/history"
	"github.com/firn-id/firn/test/cluster/storecheck"
)

// Production reports whether the run's processes run the production
// build (FIRN_CHAOS_BUILD=production): their IDs are checked, but they
// record no store operations. Otherwise every life runs the test build
// (the firn_clockhook tag, hook off unless the clock fault sets it) and
// records its node-store operations for the linearizability check.
func Production() bool { return os.Getenv("FIRN_CHAOS_BUILD") == "production" }

// storeLogEnv is the variable naming the store log of a process life.
func (c *Cluster) storeLogEnv(life string) string {
	return "FIRN_TEST_STORE_LOG=" + filepath.Join(c.Dir, storecheck.LogName(life))
}

// storeName is the node store the processes run on.
func (c *Cluster) storeName() string { return c.cfg.Store }

// Evidence ends a run: it kills every process, so the store logs are
// final (an operation in flight has no answer), and unless the run used
// the production build it checks the store operations every process life
// recorded for linearizability, failing t on a history that is illegal
// or undecided and writing porcupine's picture of it beside the history
// (store-ops.html). When FIRN_EVIDENCE names a directory, it then writes
// the run's section of the evidence report there, with the run's
// histories compressed.
func (c *Cluster) Evidence(t *testing.T, rep *history.Report, results []Result) {
	t.Helper()
	c.stopAll()
	var verdict string
	var linearizable bool
	if !Production() {
		verdict, linearizable = c.checkStoreOps(t)
	}
	dir := os.Getenv("FIRN_EVIDENCE")
	if dir == "" {
		return
	}
	if want := os.Getenv("FIRN_CHAOS_STORE"); want != "" && want != c.storeName() {
		t.Fatalf("FIRN_CHAOS_STORE=%s, but the processes ran on %s: no evidence written", want, c.storeName())
	}
	s := evidence.Section{Store: c.storeName(), Build: "test", Date: time.Now().UTC(), IDs: rep.IDs,
		Violations: rep.Counts, Faults: faultStats(results), Verdict: verdict, Linearizable: linearizable}
	if Production() {
		s.Build = "production"
	}
	s.Histories = filepath.Join(dir, strings.TrimSuffix(s.FileName(), ".json"))
	if err := c.compress(s.Histories); err != nil {
		t.Fatal(err)
	}
	if err := evidence.Write(dir, s); err != nil {
		t.Fatal(err)
	}
}

// checkStoreOps checks the recorded store operations and returns the
// verdict, and whether it is a yes.
func (c *Cluster) checkStoreOps(t *testing.T) (string, bool) {
	t.Helper()
	ops, logs, err := storecheck.ReadDir(c.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if logs == 0 || len(ops) == 0 {
		t.Fatalf("no store operation recorded in %s: the test build records them", c.Dir)
	}
	// A process that embeds firn records through a store kind of its
	// own (cmd/embedded): one that recorded nothing would pass unseen.
	for _, p := range c.Embedded {
		life := p.Name + "#1"
		if st, err := os.Stat(filepath.Join(c.Dir, storecheck.LogName(life))); err != nil || st.Size() == 0 {
			t.Errorf("%s recorded no store operation (%v): its test build records them", life, err)
		}
	}
	r := storecheck.Check(ops, storecheck.DefaultTimeout)
	t.Logf("store operations of %d process lives: %s", logs, r)
	if !r.OK() {
		pic := filepath.Join(c.Dir, "store-ops.html")
		if err := r.Visualize(pic); err != nil {
			t.Errorf("draw the store history: %v", err)
		}
		t.Errorf("the store's history is not one a correct store gives: %s (picture: %s)", r, pic)
	}
	return r.String(), r.OK()
}

// faultStats sums the results by fault, in the order first run.
func faultStats(results []Result) []evidence.Fault {
	var names []string
	by := map[string][]Result{}
	for _, r := range results {
		if _, ok := by[r.Fault]; !ok {
			names = append(names, r.Fault)
		}
		by[r.Fault] = append(by[r.Fault], r)
	}
	var out []evidence.Fault
	for _, n := range names {
		var free, served, back, pause []time.Duration
		for _, r := range by[n] {
			if r.NodeFree > 0 {
				free, served = append(free, r.NodeFree), append(served, r.Resumed)
			}
			if r.Back > 0 {
				back = append(back, r.Back)
			}
			pause = append(pause, r.Pause)
		}
		out = append(out, evidence.Fault{Name: n, Count: len(by[n]), NodeFree: evidence.Of(free),
			Served: evidence.Of(served), Back: evidence.Of(back), Pause: evidence.Of(pause)})
	}
	return out
}

// compress writes the history and every store log, gzipped, to dir.
func (c *Cluster) compress(dir string) error {
	if err := c.Flush(); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	entries, err := os.ReadDir(c.Dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if n := e.Name(); n == "history.jsonl" || strings.HasSuffix(n, storecheck.LogSuffix) {
			if err := gzipFile(filepath.Join(c.Dir, n), filepath.Join(dir, n+".gz")); err != nil {
				return err
			}
		}
	}
	return nil
}

func gzipFile(from, to string) (err error) {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := out.Close(); err == nil {
			err = cerr
		}
	}()
	z := gzip.NewWriter(out)
	if _, err := io.Copy(z, in); err != nil {
		return err
	}
	return z.Close()
}
