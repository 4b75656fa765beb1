package cluster

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/firn-id/firn/snowflake"
	"github.com/firn-id/firn/test/cluster/history"
)

// Config sizes a cluster. The zero value is three serving processes and a
// spare on three usable nodes, a 2 s lease TTL and batches of 1000.
type Config struct {
	// Procs is how many firn serve processes run. Default one more
	// process than the usable nodes (3, a site's 2), less Embedded, so
	// one always waits to take over a freed node.
	Procs int
	// Embedded is how many processes embed firn through package ids
	// (cmd/embedded) beside the firn serve ones, on the same namespace,
	// layout and node pool: either kind takes over the other's nodes.
	// Default 0.
	Embedded int
	// TTL is --lease-ttl. Default 2 s.
	TTL time.Duration
	// Batch is the count of each batch request. Default 1000.
	Batch int
	// Callers is how many callers load each process. Default 2.
	Callers int
	// Pace is how long a caller waits between two requests: 0 loads as
	// fast as the machine allows.
	Pace time.Duration
	// Segments serves the segment tag SegmentTag beside snowflake IDs
	// from a set of two databases, PostgreSQL (FIRN_TEST_POSTGRES, the
	// IDs ≡ 0 mod 2) and MariaDB (FIRN_TEST_MYSQL, ≡ 1), each with a table
	// of the run's own, each process reaching each database through a
	// fault proxy of its own; one more caller per process loads it.
	Segments bool
	// ClientCallers load snowflake IDs through one Go client (package
	// client) of every process, one ID at a time, recorded as buffered
	// (the history checks them with the client's MaxAge as ε).
	ClientCallers int
	// Store is the node store, one of Stores. Default etcd.
	Store string
	// Bins are the firn binaries to run; Start builds them when unset.
	Bins Bins
	// Site makes the cluster one site of several (see Site); nil: none.
	// The embedding program takes no site setting: Embedded must be 0.
	Site *Site
}

// Bins are a production build of cmd/firn, one with the clock hook, and
// the harness's embedding program (cmd/embedded), built with the clock
// hook's tag (it records its store operations) unless the run uses the
// production build.
type Bins struct{ Firn, Clock, Embedded string }

// BuildBins builds the binaries into dir, for several clusters to share.
func BuildBins(t *testing.T, dir string) Bins {
	t.Helper()
	var tags []string
	if !Production() {
		tags = []string{ClockTag}
	}
	return Bins{Firn: build(t, dir, "firn"), Clock: build(t, dir, "firn-clockhook", ClockTag),
		Embedded: buildPkg(t, ".", "./cmd/embedded", filepath.Join(dir, "embedded"), tags...)}
}

// SegmentTag is the tag a cluster with Config.Segments serves.
const SegmentTag = "chaos"

func (c Config) withDefaults() Config {
	if c.Procs == 0 {
		c.Procs = max(c.usable()+1-c.Embedded, 1)
	}
	if c.TTL == 0 {
		c.TTL = 2 * time.Second
	}
	if c.Batch == 0 {
		c.Batch = 1000
	}
	if c.Callers == 0 {
		c.Callers = 2
	}
	if c.Store == "" {
		c.Store = StoreEtcd
	}
	return c
}

// The layout every process serves: four node slots, node 3 reserved, so
// three processes hold a node and the fourth waits for one to be freed.
// A site's processes serve SiteLayout, the same four slots behind the
// site's value (Site.layoutFlags).
var layoutFlags = []string{"--node-bits", "2", "--reserved-nodes", "3"}

// usableNodes is how many nodes layoutFlags leaves to hand out.
const usableNodes = 3

// usable is how many nodes the cluster's layout flags leave to hand out.
func (c Config) usable() int {
	if c.Site != nil {
		return siteUsableNodes
	}
	return usableNodes
}

// Layout is the layout of layoutFlags, for the checker.
func Layout() snowflake.Layout {
	l := snowflake.DefaultLayout()
	l.Node = []snowflake.Field{{Name: "node", Bits: 2}}
	return l
}

// layoutFlags are the layout flags of c's processes.
func (c *Cluster) layoutFlags() []string {
	if c.cfg.Site != nil {
		return c.cfg.Site.layoutFlags()
	}
	return layoutFlags
}

// Layout is the layout c's processes serve.
func (c *Cluster) Layout() snowflake.Layout {
	if c.cfg.Site != nil {
		return SiteLayout()
	}
	return Layout()
}

// Cluster is a running node store and its firn processes.
type Cluster struct {
	t           *testing.T
	cfg         Config
	Dir         string // the run's artifacts: history.jsonl, one log per process and per server
	bin         string
	clockBin    string // built with the firn_clockhook tag
	embeddedBin string // cmd/embedded
	store       nodeStore
	// Procs are the firn serve processes (f0, f1…), Embedded the
	// processes that embed firn through package ids (e0…).
	Procs    []*Proc
	Embedded []*Proc
	// SegmentTable is the run's segment table in each database of the
	// set dbs, which belong to the store set segmentSet.
	SegmentTable string
	dbs          []segmentDB
	segmentSet   string

	histFile *os.File
	hist     *history.Writer

	mu    sync.Mutex
	ports map[string]bool
	alone []string // lives that exited without being stopped
}

// Start builds firn, starts the node store and the processes, and waits
// until every node is served. Everything stops when t ends; if t failed, the artifact
// directory stays and its path is printed.
func Start(t *testing.T, cfg Config) *Cluster {
	t.Helper()
	cfg = cfg.withDefaults()
	dir, err := os.MkdirTemp("", "firn-chaos-")
	if err != nil {
		t.Fatal(err)
	}
	c := &Cluster{t: t, cfg: cfg, Dir: dir, ports: map[string]bool{}}
	if cfg.Bins == (Bins{}) {
		cfg.Bins = BuildBins(t, dir)
	}
	c.bin, c.clockBin, c.embeddedBin = cfg.Bins.Firn, cfg.Bins.Clock, cfg.Bins.Embedded
	c.histFile, err = os.Create(filepath.Join(dir, "history.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	c.hist = history.NewWriter(c.histFile)
	t.Cleanup(c.keepOrRemove)
	c.store = c.startStore()
	if cfg.Site != nil {
		if cfg.Embedded > 0 {
			t.Fatalf("site %s: the embedding program takes no site setting", cfg.Site.Name)
		}
		if err := cfg.Site.Ledger.claim(c); err != nil {
			t.Fatal(err)
		}
	}
	if cfg.Segments {
		c.startDB()
	}
	for i := range cfg.Procs {
		c.Procs = append(c.Procs, c.newProc(c.named(fmt.Sprintf("f%d", i)), false))
	}
	for i := range cfg.Embedded {
		c.Embedded = append(c.Embedded, c.newProc(c.named(fmt.Sprintf("e%d", i)), true))
	}
	t.Cleanup(c.stopAll)
	for _, p := range c.all() {
		if err := p.Start(); err != nil {
			t.Fatal(err)
		}
	}
	c.waitHolders(30 * time.Second)
	if cfg.Segments {
		c.createTag()
	}
	return c
}

// waitHolders waits until every usable node is held.
func (c *Cluster) waitHolders(timeout time.Duration) {
	c.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		held := 0
		for _, p := range c.all() {
			if p.Node() >= 0 {
				held++
			}
		}
		if held >= c.cfg.usable() {
			return
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("%d of %d nodes held after %s; logs in %s", held, c.cfg.usable(), timeout, c.Dir)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// suffix is a random name part, so runs never share a namespace.
func suffix() string {
	b := make([]byte, 4)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// ClockTag is the build tag of the clock hook (cmd/firn/clockhook_on.go).
const ClockTag = "firn_clockhook"

// Build builds cmd/firn from this tree into dir/name, with the build tag
// if one is given.
func Build(t *testing.T, dir, name string, tags ...string) string {
	t.Helper()
	return build(t, dir, name, tags...)
}

func build(t *testing.T, dir, name string, tags ...string) string {
	t.Helper()
	return buildPkg(t, "../..", "./cmd/firn", filepath.Join(dir, name), tags...) // in the root module
}

// buildPkg builds the package pkg of the module in dir into bin.
func buildPkg(t *testing.T, dir, pkg, bin string, tags ...string) string {
	t.Helper()
	args := []string{"build", "-o", bin}
	if len(tags) > 0 {
		args = append(args, "-tags", tags[0])
	}
	cmd := exec.Command("go", append(args, pkg)...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build %s: %v\n%s", pkg, err, out)
	}
	return bin
}

func (c *Cluster) keepOrRemove() {
	_ = c.hist.Flush()
	c.histFile.Close()
	if c.t.Failed() || os.Getenv("FIRN_CHAOS_KEEP") != "" {
		// A site's node fields are one 4-bit field to firn-check: the
		// same nodes, the site's value their top bits.
		c.t.Logf("artifacts kept in %s (history.jsonl, f*.log); check again with: cd test/cluster && go run ./cmd/firn-check -node-bits %d %s",
			c.Dir, c.Layout().NodeBits(), filepath.Join(c.Dir, "history.jsonl"))
		return
	}
	if err := os.RemoveAll(c.Dir); err != nil {
		c.t.Logf("remove the artifacts: %v", err)
	}
}

// all are the processes of both kinds.
func (c *Cluster) all() []*Proc { return slices.Concat(c.Procs, c.Embedded) }

func (c *Cluster) stopAll() {
	for _, p := range c.all() {
		p.Kill()
	}
}

// Record appends r to the history.
func (c *Cluster) Record(r history.Record) {
	if err := c.hist.Write(r); err != nil {
		c.t.Errorf("history: %v", err)
	}
}

// Phase starts a phase of the run in the history.
func (c *Cluster) Phase(name string) time.Time {
	now := time.Now()
	c.Record(history.Record{Kind: history.KindPhase, Phase: name, At: now.UnixNano()})
	return now
}

// Flush writes the buffered history to its file.
func (c *Cluster) Flush() error { return c.hist.Flush() }

// HistoryPath is the history file.
func (c *Cluster) HistoryPath() string { return filepath.Join(c.Dir, "history.jsonl") }

// freeAddr returns a loopback address no earlier process life used, so a
// request to a life's address can only reach that life.
func (c *Cluster) freeAddr() (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for range 100 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return "", err
		}
		addr := ln.Addr().String()
		ln.Close()
		if !c.ports[addr] {
			c.ports[addr] = true
			return addr, nil
		}
	}
	return "", fmt.Errorf("no unused loopback port after 100 tries")
}

// lifeEnv is the environment each life of a process runs with beyond the
// harness's own (Environ) and the clock hook's: the one place a run hands
// its processes a setting of its own. The test build gets the file its
// store operations go to.
func (c *Cluster) lifeEnv(life string) []string {
	if Production() {
		return nil
	}
	return []string{c.storeLogEnv(life)}
}

// exitedAlone notes a life that exited without the harness stopping it:
// for firn serve, which waits rather than exits, an availability failure.
func (c *Cluster) exitedAlone(life string, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.alone = append(c.alone, fmt.Sprintf("%s (%v)", life, err))
}

// ExitedAlone lists the lives that exited without being stopped, with
// their exit status; their last lines are in their process's log.
func (c *Cluster) ExitedAlone() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.alone)
}
