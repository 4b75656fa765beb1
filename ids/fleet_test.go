package ids_test

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/firn-id/firn/ids"
	"github.com/firn-id/firn/internal/faultproxy"
	"github.com/firn-id/firn/internal/testenv"
	"github.com/firn-id/firn/internal/testserver"
	"github.com/firn-id/firn/node"
	"github.com/firn-id/firn/nodeid"
	"github.com/firn-id/firn/snowflake"
	"github.com/firn-id/firn/store"
)

// The fleet rig: N embedded processes simulated in one test process,
// each opening its own store client through ids.Open, as a process of
// its own would, on one namespace of a real store. The store kinds are
// wrapped ("fleet-etcd"…) only to count the node store's operations and
// tell which process made them; everything under the count is the real
// store. A process killed with -9 is simulated by cutting its
// connections (a proxy of its own in front of each server) without
// releasing anything: the store frees its node when the lease expires.

var (
	fleetSize   = flag.Int("fleet.size", 0, "processes of the fleet runs (TestFleet); 0 skips them (make fleet sets 1000)")
	fleetStores = flag.String("fleet.stores", "etcd,postgres,mysql,zookeeper", "stores of the fleet runs, comma-separated")
	fleetTTL    = flag.Duration("fleet.ttl", 10*time.Second, "the fleet runs' lease TTL")
	fleetWindow = flag.Duration("fleet.window", 0, "the fleet runs' lease window (ids.Options.Window; 0: its default)")
)

// fleetConnLimit is the connection limit of the role (PostgreSQL) or
// user (MariaDB) every fleet runs as: far below any fleet it serves, and
// below what the shared servers allow (100 and 151), so that the rule of
// sqlstore.Embed is what lets the fleet start.
const fleetConnLimit = 20

// proc is one simulated process.
type proc struct {
	id    int
	src   *ids.Source
	log   *slog.Logger
	proxy []*faultproxy.Proxy // nil unless it may be killed
	start time.Time
	ready atomic.Int64 // Unix ns it first held a node; 0 before

	mu      sync.Mutex
	cur     *nodeid.Claim // the claim its store holds for it
	killed  bool
	stopped bool
}

// rig is one store under a fleet, and the processes on it.
type rig struct {
	t         testing.TB
	name      string // the store's kind: "etcd"…
	namespace string
	layout    snowflake.Layout
	ttl       time.Duration
	window    time.Duration // ids.Options.Window
	targets   []string      // the servers a process dials, host:port
	target    func([]string) string
	ports     []int // the servers' ports, for counting connections

	ops ops
	// noLoss, once set, makes a renewal answered lease lost a fault: the
	// tests set it once the fleet has started.
	noLoss atomic.Bool
	mu     sync.Mutex
	procs  []*proc
	byLog  map[*slog.Logger]*proc
	faults []string // what a check saw go wrong, reported by the test
}

// ops counts the node store's operations of every process of a rig.
type ops struct {
	claims, claimsOK, poolFull, conflicts, claimErrs atomic.Int64
	renewals, renewErrs, lost, releases              atomic.Int64
}

func (o *ops) total() int64 { return o.claims.Load() + o.renewals.Load() + o.releases.Load() }

func (o *ops) String() string {
	return fmt.Sprintf("claims %d (ok %d, pool full %d, conflict %d, error %d), renewals %d (error %d, lost %d), releases %d",
		o.claims.Load(), o.claimsOK.Load(), o.poolFull.Load(), o.conflicts.Load(), o.claimErrs.Load(),
		o.renewals.Load(), o.renewErrs.Load(), o.lost.Load(), o.releases.Load())
}

// rigs by the logger each process is given: the wrapped kinds find a
// process by the store.Settings.Log ids.Open hands them.
var (
	rigMu sync.Mutex
	rigOf = map[*slog.Logger]*rig{}
)

func init() {
	// A killed process's cut connections make the MySQL driver log
	// "unexpected EOF" for each; the rig counts what matters.
	_ = mysql.SetLogger(log.New(io.Discard, "", 0))
	for _, name := range []string{"etcd", "postgres", "mysql", "zookeeper"} {
		k, ok := store.Lookup(name)
		if !ok {
			continue
		}
		inner := k.Open
		k.Name, k.Default = "fleet-"+name, false
		k.Open = func(ctx context.Context, s store.Settings) (*store.Conn, error) {
			s.Store = name
			c, err := inner(ctx, s)
			if err != nil {
				return nil, err
			}
			rigMu.Lock()
			r := rigOf[s.Log]
			rigMu.Unlock()
			if r == nil {
				return c, nil
			}
			r.mu.Lock()
			p := r.byLog[s.Log]
			r.mu.Unlock()
			c.Nodes = &counted{Store: c.Nodes, r: r, p: p}
			return c, nil
		}
		store.Register(k)
	}
}

// counted counts a process's node store operations and checks, at every
// claim, that no live process holds the node claimed.
type counted struct {
	nodeid.Store
	r *rig
	p *proc
}

func (c *counted) Claim(ctx context.Context, req nodeid.ClaimRequest) (nodeid.Claim, error) {
	o := &c.r.ops
	o.claims.Add(1)
	cl, err := c.Store.Claim(ctx, req)
	var pf *nodeid.PoolFullError
	var ce *nodeid.ConflictError
	switch {
	case err == nil:
		o.claimsOK.Add(1)
		c.r.claimed(c.p, cl)
	case errors.As(err, &pf):
		o.poolFull.Add(1)
	case errors.As(err, &ce):
		o.conflicts.Add(1)
	default:
		o.claimErrs.Add(1)
	}
	return cl, err
}

func (c *counted) Renew(ctx context.Context, cl nodeid.Claim, hwm int64) (int64, error) {
	o := &c.r.ops
	o.renewals.Add(1)
	v, err := c.Store.Renew(ctx, cl, hwm)
	switch {
	case errors.Is(err, nodeid.ErrLeaseLost):
		o.lost.Add(1)
		c.p.mu.Lock()
		if !c.p.killed && c.r.noLoss.Load() {
			c.r.fault("process %d lost its lease on node %d: %v", c.p.id, cl.Node, err)
		}
		c.p.cur = nil
		c.p.mu.Unlock()
	case err != nil:
		o.renewErrs.Add(1)
	}
	return v, err
}

func (c *counted) Release(ctx context.Context, cl nodeid.Claim) error {
	c.r.ops.releases.Add(1)
	// The node is given up before the store hears of it: a claim of it
	// that succeeds once the release lands finds no holder.
	c.p.mu.Lock()
	if c.p.cur != nil && c.p.cur.Token == cl.Token {
		c.p.cur = nil
	}
	c.p.mu.Unlock()
	return c.Store.Release(ctx, cl)
}

// claimed records p's new claim, and faults a node that a live process
// (not killed, not stopped) still holds.
func (r *rig) claimed(p *proc, cl nodeid.Claim) {
	r.mu.Lock()
	procs := slices.Clone(r.procs)
	r.mu.Unlock()
	for _, q := range procs {
		if q == p {
			continue
		}
		q.mu.Lock()
		held := q.cur != nil && q.cur.Node == cl.Node && !q.killed && !q.stopped
		q.mu.Unlock()
		if held {
			r.fault("process %d took node %d, held by live process %d", p.id, cl.Node, q.id)
		}
	}
	p.mu.Lock()
	p.cur = &cl
	p.mu.Unlock()
}

func (r *rig) fault(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.faults) < 20 {
		r.faults = append(r.faults, fmt.Sprintf(format, args...))
	}
}

// checkFaults fails the test with what the checks saw.
func (r *rig) checkFaults() {
	r.t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, f := range r.faults {
		r.t.Error(f)
	}
}

// layoutOf is firn's layout with bits node bits.
func layoutOf(bits int) snowflake.Layout {
	l := snowflake.DefaultLayout()
	l.Name = fmt.Sprintf("fleet%d", bits)
	l.Node = []snowflake.Field{{Name: "node", Bits: bits}}
	l.SequenceBits = min(l.SequenceBits, 63-l.TimeBits-bits) // IDs fit 63 bits
	return l
}

// newRig starts (or makes room on) the store name for a fleet of layout
// l and TTL ttl, in a namespace of its own. members is the size of the
// etcd cluster or ZooKeeper ensemble.
func newRig(t testing.TB, name string, l snowflake.Layout, ttl time.Duration, members int) *rig {
	t.Helper()
	r := &rig{t: t, name: name, layout: l, ttl: ttl, byLog: map[*slog.Logger]*proc{},
		namespace: fleetName("fleet_")}
	switch name {
	case "etcd":
		c := testserver.Etcd(t, members)
		for _, ep := range c.Endpoints() {
			r.targets = append(r.targets, strings.TrimPrefix(ep, "http://"))
		}
		r.namespace = "/" + r.namespace + "/"
		r.target = func(hosts []string) string {
			eps := make([]string, len(hosts))
			for i, h := range hosts {
				eps[i] = "http://" + h
			}
			return strings.Join(eps, ",")
		}
	case "zookeeper":
		r.targets = testserver.ZooKeeperEnsemble(t, members).Servers()
		checkMaxClientCnxns(t, r.targets[0])
		r.namespace = "/" + r.namespace
		r.target = func(hosts []string) string { return strings.Join(hosts, ",") }
	case "postgres":
		r.targets, r.target = limitedPostgres(t, fleetConnLimit)
	case "mysql":
		r.targets, r.target = limitedMySQL(t, fleetConnLimit)
	default:
		t.Fatalf("no fleet rig for store %q", name)
	}
	for _, h := range r.targets {
		_, port, _ := net.SplitHostPort(h)
		n, _ := strconv.Atoi(port)
		r.ports = append(r.ports, n)
	}
	t.Cleanup(r.stopAll)
	return r
}

// checkMaxClientCnxns fails the test unless the ZooKeeper server at
// addr lets more than ZooKeeper's default 60 connections in from one
// address (testserver sets maxClientCnxns=0): the rig, all its processes
// on 127.0.0.1, must not be the ceiling. It holds 100 connections open
// and asks "ruok" on one more.
func checkMaxClientCnxns(t testing.TB, addr string) {
	t.Helper()
	for range 100 {
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			t.Fatalf("ZooKeeper at %s: connection refused below 100 from one address: %v", addr, err)
		}
		defer c.Close()
	}
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err == nil {
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(5 * time.Second))
		if _, err = c.Write([]byte("ruok")); err == nil {
			b := make([]byte, 4)
			_, err = io.ReadFull(c, b)
			if err == nil && string(b) != "imok" {
				err = fmt.Errorf("answered %q", b)
			}
		}
	}
	if err != nil {
		t.Fatalf("ZooKeeper at %s refuses a 101st connection from one address (maxClientCnxns): %v", addr, err)
	}
}

// fleetName is prefix and 12 random hex digits.
func fleetName(prefix string) string {
	return prefix + strconv.FormatInt(time.Now().UnixNano()%1e12, 16) + strconv.Itoa(int(nameSeq.Add(1)))
}

var nameSeq atomic.Int64

// limitedPostgres makes a role that may open at most limit connections,
// and a database of its own, dropped when t ends: the shared server's
// settings stay as they are. The DSN a process gets names the host it
// dials (a proxy's, or the server's).
func limitedPostgres(t testing.TB, limit int) ([]string, func([]string) string) {
	t.Helper()
	dsn := testenv.Endpoint(t, "FIRN_TEST_POSTGRES")
	admin := adminDB(t, "pgx", dsn)
	name := fleetName("firn_fleet_")
	for _, s := range []string{
		fmt.Sprintf("CREATE ROLE %s LOGIN CONNECTION LIMIT %d", name, limit),
		fmt.Sprintf("CREATE DATABASE %s OWNER %s CONNECTION LIMIT %d", name, name, limit),
	} {
		if _, err := admin.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	t.Cleanup(func() {
		admin.Exec("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)")
		admin.Exec("DROP ROLE IF EXISTS " + name)
	})
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	host := u.Host
	return []string{host}, func(hosts []string) string {
		v := *u
		v.Host, v.Path, v.User = hosts[0], "/"+name, url.User(name)
		return v.String()
	}
}

// limitedMySQL makes a user with MAX_USER_CONNECTIONS limit and a
// database of its own, dropped when t ends.
func limitedMySQL(t testing.TB, limit int) ([]string, func([]string) string) {
	t.Helper()
	dsn := testenv.Endpoint(t, "FIRN_TEST_MYSQL")
	admin := adminDB(t, "mysql", dsn)
	name := fleetName("firn_fleet_")
	for _, s := range []string{
		"CREATE DATABASE " + name,
		fmt.Sprintf("CREATE USER '%s'@'%%' WITH MAX_USER_CONNECTIONS %d", name, limit),
		fmt.Sprintf("GRANT ALL ON %s.* TO '%s'@'%%'", name, name),
	} {
		if _, err := admin.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	t.Cleanup(func() {
		admin.Exec("DROP DATABASE IF EXISTS " + name)
		admin.Exec("DROP USER IF EXISTS '" + name + "'@'%'")
	})
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	host := cfg.Addr
	return []string{host}, func(hosts []string) string {
		c := cfg.Clone()
		c.Addr, c.DBName, c.User, c.Passwd = hosts[0], name, name, ""
		return c.FormatDSN()
	}
}

func adminDB(t testing.TB, driver, dsn string) *sql.DB {
	t.Helper()
	db, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// spawn starts n processes at once; killable ones dial through proxies
// of their own. It returns them without waiting for a node.
func (r *rig) spawn(n int, killable bool) []*proc {
	r.t.Helper()
	out := make([]*proc, n)
	for i := range out {
		p := &proc{log: slog.New(slog.DiscardHandler)}
		hosts := r.targets
		if killable {
			hosts = nil
			for _, h := range r.targets {
				px := faultproxy.New(r.t, h)
				p.proxy = append(p.proxy, px)
				hosts = append(hosts, px.Addr())
			}
		}
		r.mu.Lock()
		p.id = len(r.procs)
		r.procs = append(r.procs, p)
		r.byLog[p.log] = p
		r.mu.Unlock()
		rigMu.Lock()
		rigOf[p.log] = r
		rigMu.Unlock()
		out[i] = p
		p.start = time.Now()
		src, err := ids.Open(context.Background(), "fleet-"+r.name, r.target(hosts),
			ids.Options{Namespace: r.namespace, Layout: r.layout, TTL: r.ttl, Window: r.window, Log: p.log})
		if err != nil {
			r.t.Fatalf("process %d: %v", p.id, err)
		}
		p.src = src
		go p.watchReady()
	}
	return out
}

// watchReady notes when p first holds a node.
func (p *proc) watchReady() {
	for p.ready.Load() == 0 {
		p.mu.Lock()
		gone := p.killed || p.stopped
		p.mu.Unlock()
		if gone {
			return
		}
		if p.src.Ready() == nil {
			p.ready.Store(time.Now().UnixNano())
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// readyIn is how long p took to hold a node, or false.
func (p *proc) readyIn() (time.Duration, bool) {
	ns := p.ready.Load()
	if ns == 0 {
		return 0, false
	}
	return time.Unix(0, ns).Sub(p.start), true
}

// waitReady waits until every one of ps holds a node, or limit passes;
// it returns how many do.
func waitReady(ps []*proc, limit time.Duration) int { return waitReadyN(ps, len(ps), limit) }

// waitReadyN waits until want of ps hold a node, or limit passes; it
// returns how many do.
func waitReadyN(ps []*proc, want int, limit time.Duration) int {
	deadline := time.Now().Add(limit)
	for {
		n := 0
		for _, p := range ps {
			if p.ready.Load() != 0 {
				n++
			}
		}
		if n >= want || time.Now().After(deadline) {
			return n
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// stop closes p, which releases its node.
func (r *rig) stop(p *proc) error {
	p.mu.Lock()
	p.stopped = true
	p.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 2*r.ttl+5*time.Second)
	defer cancel()
	return p.src.Close(ctx)
}

// kill cuts p's connections and refuses new ones, releasing nothing: the
// store sees what it sees of a process killed with -9.
func (r *rig) kill(p *proc) {
	if p.proxy == nil {
		r.t.Fatalf("process %d was not started killable", p.id)
	}
	p.mu.Lock()
	p.killed = true
	p.mu.Unlock()
	for _, px := range p.proxy {
		px.Cut()
	}
}

// stopAll closes every process left, killed ones with a short deadline
// (their release cannot reach the store).
func (r *rig) stopAll() {
	r.mu.Lock()
	procs := slices.Clone(r.procs)
	r.mu.Unlock()
	var wg sync.WaitGroup
	for _, p := range procs {
		wg.Go(func() {
			p.mu.Lock()
			killed := p.killed
			p.stopped = true
			p.mu.Unlock()
			d := 2*r.ttl + 5*time.Second
			if killed {
				d = 100 * time.Millisecond
			}
			if p.src == nil { // its Open failed
				return
			}
			ctx, cancel := context.WithTimeout(context.Background(), d)
			defer cancel()
			_ = p.src.Close(ctx)
		})
	}
	wg.Wait()
	rigMu.Lock()
	for _, p := range procs {
		delete(rigOf, p.log)
	}
	rigMu.Unlock()
}

// liveNodes checks that no two live processes hold one node, and
// returns the nodes held.
func (r *rig) liveNodes() map[uint64]*proc {
	r.mu.Lock()
	procs := slices.Clone(r.procs)
	r.mu.Unlock()
	held := map[uint64]*proc{}
	for _, p := range procs {
		p.mu.Lock()
		gone := p.killed || p.stopped
		p.mu.Unlock()
		if gone {
			continue
		}
		if n, ok := p.src.Node(); ok {
			if q := held[n]; q != nil {
				r.fault("processes %d and %d both serve node %d", q.id, p.id, n)
			}
			held[n] = p
		}
	}
	return held
}

// conns counts the established TCP connections of this test process to
// the store's servers: every simulated process's, since they share it.
func (r *rig) conns() int {
	inodes := map[string]bool{}
	fds, _ := os.ReadDir("/proc/self/fd")
	for _, fd := range fds {
		l, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name()))
		if s, ok := strings.CutPrefix(l, "socket:["); err == nil && ok {
			inodes[strings.TrimSuffix(s, "]")] = true
		}
	}
	n := 0
	for _, file := range []string{"/proc/self/net/tcp", "/proc/self/net/tcp6"} {
		f, err := os.Open(file)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			fs := strings.Fields(sc.Text())
			if len(fs) < 10 || fs[3] != "01" || !inodes[fs[9]] { // 01: ESTABLISHED
				continue
			}
			_, port, _ := strings.Cut(fs[2], ":")
			p, _ := strconv.ParseInt(port, 16, 32)
			if slices.Contains(r.ports, int(p)) {
				n++
			}
		}
		f.Close()
	}
	return n
}

// probe waits until node n is free in the store, claiming it (and
// releasing it at once) through a client of its own, and returns when.
func (r *rig) probe(ctx context.Context, nodes nodeid.Store, n uint64) (time.Time, error) {
	req := nodeid.ClaimRequest{Node: n, Pool: 1 << uint(r.layout.NodeBits()), Layout: node.LayoutID(r.layout), TTL: r.ttl}
	for {
		c, err := nodes.Claim(ctx, req)
		if err == nil {
			at := time.Now()
			return at, nodes.Release(ctx, c)
		}
		if !errors.As(err, new(*nodeid.ConflictError)) {
			return time.Time{}, err
		}
		select {
		case <-ctx.Done():
			return time.Time{}, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// prober opens a node store of the rig's namespace, unwrapped, for probe.
func (r *rig) prober() nodeid.Store {
	r.t.Helper()
	s := store.Settings{Store: r.name, Namespace: r.namespace, DialTimeout: 5 * time.Second, Embedded: true}
	if r.name == "etcd" || r.name == "zookeeper" {
		s.Endpoints = []string{r.target(r.targets)}
	} else {
		s.DSN = r.target(r.targets)
	}
	c, err := store.Open(context.Background(), s)
	if err != nil {
		r.t.Fatal(err)
	}
	r.t.Cleanup(func() { _ = c.Close() })
	return c.Nodes
}

// fleetStoreNames are the stores a test runs its fleet on.
func fleetStoreNames() []string { return strings.Split(*fleetStores, ",") }
