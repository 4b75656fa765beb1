package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/firn-id/firn/cmd/firn/internal/config"
	"github.com/firn-id/firn/internal/testserver"
	"github.com/firn-id/firn/localstore"
	"github.com/firn-id/firn/nodeid"
	"github.com/firn-id/firn/snowflake"
)

// freshUser gives the test a user of its own: a home and a state
// directory in which the quick start's state lands, never the real ones.
func freshUser(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	t.Setenv("XDG_STATE_HOME", t.TempDir())
}

// quickStart runs the README's firn serve (on free ports: a test never
// counts on a fixed port being free) until the test ends or stop is
// called.
func quickStart(t *testing.T) (stop func()) {
	t.Helper()
	addrs := testserver.Addrs(t, 2)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serve(ctx, []string{"--http", addrs[0], "--grpc", addrs[1]}, io.Discard) }()
	waitReady(t, "http://"+addrs[0], done)
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		if err := <-done; err != nil {
			t.Errorf("quick start's serve: %v", err)
		}
	}
	t.Cleanup(stop)
	return stop
}

// advised returns the value of flag in a refusal's advice, as written.
func advised(t *testing.T, refusal, flag string) string {
	t.Helper()
	m := regexp.MustCompile(regexp.QuoteMeta(flag)+` (\S+)`).FindAllStringSubmatch(refusal, -1)
	if len(m) == 0 {
		t.Fatalf("refusal %q advises no %s", refusal, flag)
	}
	return strings.TrimRight(m[len(m)-1][1], ".,;)")
}

// nextOK runs firn next and returns its IDs, failing unless it succeeds.
func nextOK(t *testing.T, what string, args ...string) []string {
	t.Helper()
	out, errOut, code := runCLI(append([]string{"next", "-n", "3"}, args...)...)
	ids := strings.Fields(out)
	if code != 0 || len(ids) != 3 {
		t.Fatalf("%s (firn next %s): exit %d, %q, %s", what, strings.Join(args, " "), code, out, errOut)
	}
	return ids
}

// refused runs a command that must be refused, and returns the refusal.
func refused(t *testing.T, what string, args ...string) string {
	t.Helper()
	out, errOut, code := runCLI(args...)
	if code == 0 {
		t.Fatalf("%s (firn %s): accepted, %q; want a refusal", what, strings.Join(args, " "), out)
	}
	return errOut
}

// TestQuickStartThenAnotherLayout: after the README's quick start,
// firn next --layout js53 is refused while the quick start's server runs
// and after it stops; each refusal's advice, followed literally, gives
// js53 IDs (another ID space, on a node the quick start does not
// hold), and its --layout advice gives the stored layout's.
func TestQuickStartThenAnotherLayout(t *testing.T) {
	freshUser(t)
	js53, _ := snowflake.Preset("js53")
	stop := quickStart(t)

	refusal := refused(t, "another layout beside the running quick start", "next", "--layout", "js53")
	dir := advised(t, refusal, "--data-dir")
	for _, id := range nextOK(t, "the server's refusal's advice", "--layout", "js53", "--data-dir", dir) {
		if p, err := js53.Decompose(uint64(mustInt(t, id))); err != nil || p.Node == 0 {
			t.Fatalf("ID %s under the advice: %+v, %v; want a js53 ID of a node the quick start does not hold", id, p, err)
		}
	}

	stop()
	refusal = refused(t, "another layout in the quick start's data directory", "next", "--layout", "js53")
	if got := advised(t, refusal, "--data-dir"); got != dir {
		t.Fatalf("the data directory's refusal advises --data-dir %s, the server's %s: one ID space, one directory", got, dir)
	}
	nextOK(t, "the data directory's refusal's advice", "--layout", "js53", "--data-dir", dir)
	nextOK(t, "the data directory's refusal's other advice", "--layout", advised(t, refusal, "--layout"))

	// firn serve with that layout is refused alike, and its advice works.
	addrs := testserver.Addrs(t, 2)
	refusal = refused(t, "serve with another layout in the quick start's data directory", "serve", "--layout", "js53", "--http", addrs[0], "--grpc", "off")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- serve(ctx, []string{"--layout", "js53", "--data-dir", advised(t, refusal, "--data-dir"), "--http", addrs[0], "--grpc", "off"}, io.Discard)
	}()
	waitReady(t, "http://"+addrs[0], done)
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestTwoNamespacesOfOneLayoutNeverShareANode: the local store's nodes
// are its layout's, whatever --namespace says: beside a holder of node 0,
// firn next with either of two namespaces, each in a data directory of
// its own, takes another node.
func TestTwoNamespacesOfOneLayoutNeverShareANode(t *testing.T) {
	freshUser(t)
	holdNodes(t, 0)
	for _, ns := range []string{"x", "y"} {
		ids := nextOK(t, "namespace "+ns, "--namespace", ns, "--data-dir", t.TempDir())
		if p, _ := snowflake.DefaultLayout().Decompose(uint64(mustInt(t, ids[0]))); p.Node == 0 {
			t.Fatalf("--namespace %s took node 0, which another data directory of its layout holds", ns)
		}
	}
}

// userNodeDir is the node directory firn uses for the test's user.
func userNodeDir(t *testing.T) string {
	t.Helper()
	dir, err := localstore.DefaultNodeDir(os.Getenv("XDG_STATE_HOME"), os.Getenv("HOME"))
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestLocalRefusalsAdviceWorks follows, literally, the advice of each
// other refusal firn next can give on the local store: a data directory
// another command holds (stop it), a node another holds (take another
// node), every node held (stop one), a clock behind the node's HWM
// (--start-ahead).
func TestLocalRefusalsAdviceWorks(t *testing.T) {
	t.Run("data directory held", func(t *testing.T) {
		freshUser(t)
		dir := t.TempDir()
		s, err := localstore.Open(localstore.Config{Dir: dir, NodeDir: userNodeDir(t)})
		if err != nil {
			t.Fatal(err)
		}
		refusal := refused(t, "a data directory another command holds", "next", "--data-dir", dir)
		if !strings.Contains(refusal, "stop it") {
			t.Fatalf("refusal %q does not say to stop the holder", refusal)
		}
		s.Close()
		nextOK(t, "after stopping the holder", "--data-dir", dir)
	})
	t.Run("node held", func(t *testing.T) {
		freshUser(t)
		holdNodes(t, 0)
		refusal := refused(t, "a node another data directory holds", "next", "--node", "0", "--data-dir", t.TempDir())
		if !strings.Contains(refusal, "or take another node") {
			t.Fatalf("refusal %q does not say to take another node", refusal)
		}
		nextOK(t, "another node", "--node", "1", "--data-dir", t.TempDir())
		nextOK(t, "any node", "--data-dir", t.TempDir())
	})
	t.Run("every node held", func(t *testing.T) {
		freshUser(t)
		// A layout of 2 nodes, both held by other data directories.
		flags := []string{"--time-bits", "41", "--node-bits", "1", "--sequence-bits", "12"}
		x, err := parseNext(flags)
		if err != nil {
			t.Fatal(err)
		}
		stores := holdNodesOf(t, x.lc.Layout, 2)
		refusal := refused(t, "every node held", append([]string{"next", "--data-dir", t.TempDir()}, flags...)...)
		if !strings.Contains(refusal, "stop one") {
			t.Fatalf("refusal %q does not say to stop one", refusal)
		}
		stores[1].Close()
		nextOK(t, "after stopping one", append([]string{"--data-dir", t.TempDir()}, flags...)...)
	})
	t.Run("clock behind the HWM", func(t *testing.T) {
		freshUser(t)
		dir := t.TempDir()
		nextOK(t, "first run", "--node", "0", "--data-dir", dir)
		ahead := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
		if _, errOut, code := runCLI("admin", "advance", "--node", "0", "--to", ahead, "--data-dir", dir); code != 0 {
			t.Fatalf("admin advance: %s", errOut)
		}
		refusal := refused(t, "a clock an hour behind the node's HWM", "next", "--node", "0", "--data-dir", dir)
		if !strings.Contains(refusal, "--start-ahead") {
			t.Fatalf("refusal %q does not advise --start-ahead", refusal)
		}
		nextOK(t, "with --start-ahead", "--node", "0", "--data-dir", dir, "--start-ahead")
	})
}

// holdNodes holds the default layout's nodes, each from a data directory
// of its own, until the test ends.
func holdNodes(t *testing.T, nodes ...uint64) {
	t.Helper()
	id := config.SpaceID(snowflake.DefaultLayout(), nil)
	for _, n := range nodes {
		s := openUserStore(t)
		if _, err := s.Claim(context.Background(), nodeid.ClaimRequest{Node: n, Pool: 1024, Layout: id}); err != nil {
			t.Fatal(err)
		}
	}
}

// holdNodesOf holds every node of a pool of n of layout id.
func holdNodesOf(t *testing.T, id nodeid.LayoutID, n uint64) []*localstore.Store {
	t.Helper()
	var stores []*localstore.Store
	for range n {
		s := openUserStore(t)
		if _, err := s.Claim(context.Background(), nodeid.ClaimRequest{AnyNode: true, Pool: n, Layout: id}); err != nil {
			t.Fatal(err)
		}
		stores = append(stores, s)
	}
	return stores
}

func openUserStore(t *testing.T) *localstore.Store {
	t.Helper()
	s, err := localstore.Open(localstore.Config{Dir: t.TempDir(), NodeDir: userNodeDir(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestSameBitsInTheQuickStartsDataDirectory: after the quick start,
// firn next with the default layout's bits under another fingerprint
// (its node field named worker) is refused by the server, then by the
// data directory once the server stops. Neither refusal sends it to
// another data directory, which the user's node directory would refuse
// as well; the --layout each names, followed literally, works.
func TestSameBitsInTheQuickStartsDataDirectory(t *testing.T) {
	freshUser(t)
	stop := quickStart(t)
	for _, when := range []string{"beside the running quick start", "after it stopped"} {
		refusal := refused(t, "the default layout's bits with a worker field "+when, "next", "--node-names", "worker")
		if strings.Contains(refusal, "--data-dir") {
			t.Errorf("%s: refusal %q advises another data directory", when, refusal)
		}
		nextOK(t, "the refusal's advice "+when, "--layout", advised(t, refusal, "--layout"))
		stop()
	}
}

// asF871c00 leaves the test user's state as f871c00, the released firn,
// would have left it after the same runs: the layout the default data
// directory records also recorded in the user's node directory's file
// "layout", and no ID bits recorded anywhere.
func asF871c00(t *testing.T) {
	t.Helper()
	nodes := userNodeDir(t)
	rec, err := os.ReadFile(filepath.Join(filepath.Dir(nodes), "layout"))
	if err != nil {
		t.Fatal(err)
	}
	spaces, _ := filepath.Glob(filepath.Join(nodes, "space-*"))
	for _, p := range append(spaces, filepath.Join(nodes, "layout")) {
		if err := os.RemoveAll(p); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(nodes, "layout"), rec, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestF871c00QuickStartThenAnotherLayout: the quick start run by
// f871c00, then this version's firn next --layout js53. The firn preset's
// ID bits are known, so the data directory's advice alone gives js53
// IDs. A layout with its node field renamed (the same bits as the preset,
// under a fingerprint no preset has) has bits no record holds: js53 is
// refused beside it until the recorded layout, run once as the advice
// says, records them.
func TestF871c00QuickStartThenAnotherLayout(t *testing.T) {
	js53, _ := snowflake.Preset("js53")
	for _, tc := range []struct {
		name  string
		flags []string // the older firn's layout flags
	}{
		{"firn preset", nil},
		{"firn preset with a worker field", []string{"--node-names", "worker"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			freshUser(t)
			nextOK(t, "the older firn's run", tc.flags...)
			asF871c00(t)
			// The older firn's serve still runs, on node 0.
			f, err := os.OpenFile(filepath.Join(userNodeDir(t), "node-0.lock"), os.O_RDWR|os.O_CREATE, 0o600)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { f.Close() })
			if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
				t.Fatal(err)
			}

			refusal := refused(t, "js53 in the older firn's data directory", "next", "--layout", "js53")
			dir := advised(t, refusal, "--data-dir")
			if tc.flags != nil {
				refusal = refused(t, "js53 beside a layout whose ID bits no record holds", "next", "--layout", "js53", "--data-dir", dir)
				for _, want := range []string{"run firn next once with the recorded layout", "--node-names"} {
					if !strings.Contains(refusal, want) {
						t.Fatalf("refusal %q does not say %q", refusal, want)
					}
				}
				nextOK(t, "the recorded layout, once, as the advice says", tc.flags...)
			}
			for _, id := range nextOK(t, "js53 under the advice", "--layout", "js53", "--data-dir", dir) {
				if p, err := js53.Decompose(uint64(mustInt(t, id))); err != nil || p.Node == 0 {
					t.Fatalf("ID %s under the advice: %+v, %v; want a js53 ID of a node the older firn does not hold", id, p, err)
				}
			}
			nextOK(t, "the older firn's layout after", tc.flags...)
		})
	}
}
