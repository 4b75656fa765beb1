package etcdstore_test

// Fault sequences against sites on etcd.

import (
	clientv3 "go.etcd.io/etcd/client/v3"

	"context"
	"testing"
	"time"

	"github.com/firn-id/firn/etcdstore"
	"github.com/firn-id/firn/internal/testserver"
	"github.com/firn-id/firn/nodeid"
	"github.com/firn-id/firn/nodeid/nodeidtest"
	"github.com/firn-id/firn/site"
)

// TestSiteHighFirstNode: with a 32-bit node part
// (datacenter:8, worker:24) a site fixing datacenter=255 leases nodes
// 4278190080.. . The etcd store's any-node claim walks
// nodeid.ClaimOrder, which starts at node 0 and filters with
// ClaimRequest.Free: four billion calls before the site's first node,
// on every claim, without a look at ctx. A claim with a 3 s deadline
// runs for tens of seconds, burning a core (zkstore's take does the same).
func TestSiteHighFirstNode(t *testing.T) {
	c := testserver.Etcd(t, 1)
	st := etcdstore.New(c.Client(), prefix())
	ctx := context.Background()
	eu := nodeid.Site{Name: "eu", Fields: "datacenter=255", First: 255 << 24, Count: 1 << 24}
	native, err := st.Identity(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rec := nodeid.SiteRecord{Site: eu, Layout: nodeidtest.Layout, Registry: "r-test", Native: native, Ledger: "l-test"}
	id, err := rec.LayoutID()
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Rerecord(ctx, nodeid.LayoutID{}, id); err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	start := time.Now()
	l, err := nodeid.Acquire(cctx, st, nodeid.Config{NodeBits: 32, Layout: nodeidtest.Layout, TTL: 10 * time.Second, Site: eu})
	took := time.Since(start)
	if err == nil {
		defer l.Close(ctx)
	}
	t.Logf("acquire: %v after %v", err, took)
	if took > 5*time.Second {
		t.Errorf("HANG: one claim of a site's node took %v (deadline 3 s): the claim order scans every node below the site's first", took)
	}
}

// TestSiteTwoPrefixesOneEtcd: two prefixes (namespaces) of one etcd
// cluster report one Identity (the cluster ID), so ClaimSite takes the
// second for the value the ledger gives the first: both lease node 4 of
// site eu from independent HWMs.
func TestSiteTwoPrefixesOneEtcd(t *testing.T) {
	cli, l := siteLedgerOnEtcd(t)
	ctx := context.Background()
	eu := nodeid.Site{Name: "eu", Fields: "datacenter=1", First: 4, Count: 4}
	r1, r2 := etcdstore.New(cli, prefix()), etcdstore.New(cli, prefix())
	if _, err := l.ClaimSite(ctx, site.Registry{Store: r1, Where: "etcd/r1"}, eu, nodeidtest.Layout); err != nil {
		t.Fatal(err)
	}
	cfg := nodeid.Config{NodeBits: 3, Layout: nodeidtest.Layout, TTL: 10 * time.Second, Site: eu}
	a, err := nodeid.Acquire(ctx, r1, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close(ctx)
	if _, err := l.ClaimSite(ctx, site.Registry{Store: r2, Where: "etcd/r2"}, eu, nodeidtest.Layout); err != nil {
		t.Logf("second prefix refused: %v", err)
		return
	}
	b, err := nodeid.Acquire(ctx, r2, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close(ctx)
	if a.Node() == b.Node() && a.Err() == nil && b.Start() < a.Limit() {
		t.Errorf("DUPLICATE: site eu leases node %d under two prefixes of one etcd: r1's lease may issue up to %d, r2's starts at %d (now %d)",
			a.Node(), a.Limit(), b.Start(), time.Now().UnixMilli())
	}
}

// sitePause is an etcd registry whose next Claim first runs a function:
// what other commands do while the claiming process is paused between
// its read of the site record (checkSite) and its claim.
type sitePause struct {
	*etcdstore.Store
	before func()
}

func (p *sitePause) Claim(ctx context.Context, req nodeid.ClaimRequest) (nodeid.Claim, error) {
	if f := p.before; f != nil {
		p.before = nil
		f()
	}
	return p.Store.Claim(ctx, req)
}

// TestSiteStaleFloorOnEtcd: the etcd claim's fence is the layout
// key's revision read by Claim itself, and its check is the fingerprint —
// which a site record's floor, registry ID and release-and-reclaim leave
// unchanged. A process that read the record (floor 0) and paused while
// the site moved to another registry, issued there, was released there
// and claimed back here (floor = what it issued there) claims under the
// new record with the old floor.
func TestSiteStaleFloorOnEtcd(t *testing.T) {
	cli, l := siteLedgerOnEtcd(t)
	ctx := context.Background()
	eu := nodeid.Site{Name: "eu", Fields: "datacenter=1", First: 4, Count: 4}
	r1 := &sitePause{Store: etcdstore.New(cli, prefix())}
	r2 := etcdstore.New(cli, prefix()) // another registry (same cluster here only for the test; identity is not involved)
	reg1, reg2 := site.Registry{Store: r1.Store, Where: "r1"}, site.Registry{Store: r2, Where: "r2"}
	if _, err := l.ClaimSite(ctx, reg1, eu, nodeidtest.Layout); err != nil {
		t.Fatal(err)
	}
	cfg := nodeid.Config{NodeBits: 3, Layout: nodeidtest.Layout, TTL: 10 * time.Second, Site: eu}
	var f2 int64
	var steps []error
	r1.before = func() {
		_, err := l.ReleaseSite(ctx, reg1, eu, nodeidtest.Layout)
		steps = append(steps, err)
		_, err = l.ClaimSite(ctx, reg2, eu, nodeidtest.Layout)
		steps = append(steps, err)
		c2 := cfg
		c2.Window = 5 * time.Second
		l2, err := nodeid.Acquire(ctx, r2, c2)
		steps = append(steps, err)
		if err == nil {
			t.Logf("eu on r2: node %d reserved up to %d", l2.Node(), l2.Limit())
		}
		f2, err = l.ReleaseSite(ctx, reg2, eu, nodeidtest.Layout)
		steps = append(steps, err)
		_, err = l.ClaimSite(ctx, reg1, eu, nodeidtest.Layout)
		steps = append(steps, err)
	}
	stale, err := nodeid.Acquire(ctx, r1, cfg)
	for i, e := range steps {
		if e != nil {
			t.Fatalf("interleaved step %d: %v", i, e)
		}
	}
	if err != nil {
		t.Logf("paused acquire refused: %v", err)
		return
	}
	defer stale.Close(ctx)
	if stale.Start() < f2 {
		t.Errorf("DUPLICATE: eu on r2 issued on node %d up to %d; the paused process on r1 took node %d starting at %d",
			stale.Node(), f2, stale.Node(), stale.Start())
	}
}

// siteLedgerOnEtcd starts an etcd member and opens a ledger of sites of
// four nodes under a prefix of its own there.
func siteLedgerOnEtcd(t *testing.T) (*clientv3.Client, *site.Ledger) {
	t.Helper()
	cli := testserver.Etcd(t, 1).Client()
	open := func(ns string) (nodeid.Recorder, error) { return etcdstore.New(cli, ns), nil }
	l, err := site.OpenLedger(context.Background(), open, prefix()+"ledger", nodeidtest.Layout, site.Spec{Count: 4}, true)
	if err != nil {
		t.Fatal(err)
	}
	return cli, l
}
