package cluster

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/firn-id/firn/internal/faultproxy"
	"github.com/firn-id/firn/internal/testserver"
	"github.com/firn-id/firn/snowflake"
)

// Site makes a cluster one site of several (docs/operations.md, "Several
// sites"): its node store is the site's registry, its processes run on
// SiteLayout with the site's setting (--site, --site-fields) and re-read
// the site's claim from the ledger, each through fault proxies of its
// own. Start claims the site's value in the ledger (`firn site claim`)
// before it starts a process. A site's processes are named after it
// ("eu-f0"), so the histories of several sites check as one.
type Site struct {
	Name string
	// Value is the site field's, 0–3; the site's nodes are 4·Value to
	// 4·Value+3, the last two of them reserved (siteUsableNodes).
	Value  uint64
	Ledger *Ledger
}

// SiteField is the node field a site fixes in SiteLayout.
const SiteField = "site"

// SiteLayout is the layout of every site's processes: Layout's two node
// bits behind a 2-bit site field, so each site has Layout's four nodes.
func SiteLayout() snowflake.Layout {
	l := snowflake.DefaultLayout()
	l.Node = []snowflake.Field{{Name: SiteField, Bits: 2}, {Name: "node", Bits: 2}}
	return l
}

// siteLayoutFlags are SiteLayout's flags, as `firn site claim` takes
// them.
var siteLayoutFlags = []string{"--node-bits", "2,2", "--node-names", SiteField + ",node"}

// siteUsableNodes is how many nodes a site hands out: two, so that its
// three processes (Config.Procs' default) are two holders and one that
// waits to take over a freed node, as Layout's four processes are.
const siteUsableNodes = 2

// layoutFlags are the layout flags of s's processes: SiteLayout with the
// site's last two nodes reserved.
func (s *Site) layoutFlags() []string {
	return append(slices.Clone(siteLayoutFlags), "--reserved-nodes", fmt.Sprintf("%d,%d", 4*s.Value+2, 4*s.Value+3))
}

// flags are the site's setting and its ledger's read settings, with the
// ledger reached through xs.
func (s *Site) flags(xs []*faultproxy.Proxy) []string {
	return append([]string{"--site", s.Name, "--site-fields", fmt.Sprintf("%s=%d", SiteField, s.Value)}, s.Ledger.flags(xs)...)
}

// Ledger is the ledger of site values the sites of a run share: a
// 3-member etcd on loopback of its own, apart from every site's
// registry. Every process of a site reaches each member through a fault
// proxy of its own, so a site can be cut off from the ledger alone.
type Ledger struct {
	etcd *etcdNodes // its leader is what LedgerCrash kills

	mu      sync.Mutex
	created bool
}

// StartLedger starts a ledger's etcd; it stops when t ends.
func StartLedger(t *testing.T) *Ledger {
	t.Helper()
	e := testserver.Etcd(t, 3)
	return &Ledger{etcd: &etcdNodes{etcd: e, cli: e.Client(), namespace: "/firn-ledger-" + suffix() + "/"}}
}

func (l *Ledger) flags(xs []*faultproxy.Proxy) []string {
	var eps []string
	for _, x := range xs {
		eps = append(eps, "http://"+x.Addr())
	}
	return []string{"--ledger-store", StoreEtcd, "--ledger-endpoints", strings.Join(eps, ","), "--ledger-namespace", l.etcd.namespace}
}

// claim claims c's site value for c's registry with `firn site claim`,
// reaching both through proxies of their own; the first claim of all
// creates the ledger.
func (l *Ledger) claim(c *Cluster) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := c.cfg.Site
	args := []string{"site", "claim"}
	if !l.created {
		args = append(args, "--create-ledger")
	}
	args = append(args, c.store.flags(c.proxies(c.store.upstreams()))...)
	args = append(args, siteLayoutFlags...)
	args = append(args, s.flags(c.proxies(l.etcd.upstreams()))...)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.bin, args...)
	cmd.Env = environ()
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("firn %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	l.created = true
	return nil
}

// proxies are fault proxies of their own to each of ups.
func (c *Cluster) proxies(ups []string) []*faultproxy.Proxy {
	var xs []*faultproxy.Proxy
	for _, up := range ups {
		xs = append(xs, faultproxy.New(c.t, up))
	}
	return xs
}

// named is a name of the cluster's own: prefixed with its site's.
func (c *Cluster) named(name string) string {
	if c.cfg.Site == nil {
		return name
	}
	return c.cfg.Site.Name + "-" + name
}

// siteName is the cluster's site, empty when it is none.
func (c *Cluster) siteName() string {
	if c.cfg.Site == nil {
		return ""
	}
	return c.cfg.Site.Name
}

// cutLedger cuts every process of the site off from the ledger, or lets
// them through again.
func (c *Cluster) cutLedger(cut bool) {
	for _, p := range c.all() {
		for _, x := range p.ledger {
			if cut {
				x.Cut()
			} else {
				x.Restore()
			}
		}
	}
}

// LedgerCut cuts every process of the site off from the ledger for d, and
// meanwhile starts the process that waits for a node again, then kills a
// holder with SIGKILL and starts it again: the ledger is never on the
// path that issues IDs, so the site serves on, and the holder's node is
// served again by one of the two lives started while the ledger was out
// of reach (docs/operations.md, "A partition"). A d past
// site.DefaultWatchEvery spans a re-read of the claim by every process.
// Back is from the kill to the node served again.
func (f *Faults) LedgerCut(i int, d time.Duration) Result {
	p := f.holder(i)
	r, live, start := f.begin("ledger-cut", p)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f.c.cutLedger(true)
	if w := f.waiting(p); w != nil {
		r.Err = errors.Join(w.Stop(15*time.Second), w.Start())
	}
	free := f.freed(ctx, r.Node)
	killed := time.Now()
	p.Kill()
	r.Err = errors.Join(r.Err, p.Start())
	f.recovered(&r, killed, free, 3*f.c.cfg.TTL+5*time.Second)
	if r.NodeFree > 0 {
		r.Back = r.NodeFree + r.Resumed
	}
	time.Sleep(time.Until(start.Add(d)))
	f.c.cutLedger(false)
	f.end(&r, live)
	return r
}

// LedgerCrash kills the ledger's etcd leader with SIGKILL and starts it
// again after an election's worth of time: nothing of the site waits
// for it.
func (f *Faults) LedgerCrash() Result {
	r := Result{Fault: "ledger-crash", Node: -1}
	live := f.load.Mark(300 * time.Millisecond)
	f.c.Phase(r.Fault)
	r.Target, r.Err = f.c.cfg.Site.Ledger.etcd.crash(2 * time.Second)
	f.end(&r, live)
	return r
}
