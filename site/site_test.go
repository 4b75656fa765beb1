package site_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/firn-id/firn/etcdstore"
	"github.com/firn-id/firn/ids"
	"github.com/firn-id/firn/internal/testserver"
	"github.com/firn-id/firn/node"
	"github.com/firn-id/firn/nodeid"
	"github.com/firn-id/firn/site"
	"github.com/firn-id/firn/snowflake"
)

// layout has a 2-bit datacenter field a site fixes and a 3-bit worker
// field its registry leases.
var layout = func() snowflake.Layout {
	l := snowflake.DefaultLayout()
	l.Name = "sites"
	l.Node = []snowflake.Field{{Name: "datacenter", Bits: 2}, {Name: "worker", Bits: 3}}
	l.SequenceBits = 12
	l.TimeBits = 63 - 5 - 12
	return l
}()

func prefix() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return "/site-test/" + hex.EncodeToString(b) + "/"
}

func siteOf(t *testing.T, name string, dc uint64) nodeid.Site {
	t.Helper()
	s, err := node.Site(layout, name, []snowflake.FieldValue{{Name: "datacenter", Value: dc}})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func ledgerOn(t *testing.T, cli *clientv3.Client, count uint64) *site.Ledger {
	t.Helper()
	ns := prefix()
	open := func(name string) (nodeid.Recorder, error) { return etcdstore.New(cli, name), nil }
	l, err := site.OpenLedger(context.Background(), open, ns, node.LayoutID(layout), site.Spec{Count: count}, true)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// source starts an embedded process of site s on st and waits for its
// first ID.
func source(t *testing.T, st nodeid.Store, name string, dc uint64) (*ids.Source, error) {
	t.Helper()
	src, err := ids.New(st, ids.Options{Layout: layout, TTL: 2 * time.Second, Window: 300 * time.Millisecond,
		Site: ids.Site{Name: name, Fields: []snowflake.FieldValue{{Name: "datacenter", Value: dc}}}})
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() { _ = src.Close(context.Background()) })
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	_, err = src.Next(ctx)
	return src, err
}

// TestTwoSites: two sites, each with its own etcd registry, and a ledger
// on a third. Each site's processes take only their value's nodes; their
// IDs are disjoint; a third site on site 1's value is refused naming the
// holder; a process without the site setting, or on a copy of the
// registry, is refused; a release stops the site, and the next claimant
// of its value starts above the floor.
func TestTwoSites(t *testing.T) {
	ctx := context.Background()
	ledgerCluster, eu, us := testserver.Etcd(t, 1), testserver.Etcd(t, 1), testserver.Etcd(t, 1)
	a, b := siteOf(t, "eu", 1), siteOf(t, "us", 2)
	ledger := ledgerOn(t, ledgerCluster.Client(), a.Count)
	regA := site.Registry{Store: etcdstore.New(eu.Client(), "/firn/ids/"), Where: "etcd eu /firn/ids/"}
	regB := site.Registry{Store: etcdstore.New(us.Client(), "/firn/ids/"), Where: "etcd us /firn/ids/"}
	space := node.LayoutID(layout)
	for _, c := range []struct {
		reg site.Registry
		s   nodeid.Site
	}{{regA, a}, {regB, b}} {
		if _, err := ledger.ClaimSite(ctx, c.reg, c.s, space); err != nil {
			t.Fatalf("claim %s: %v", c.s, err)
		}
	}
	if res, err := ledger.ClaimSite(ctx, regA, a, space); err != nil || !res.Already {
		t.Fatalf("second claim of eu = %+v, %v; want already claimed", res, err)
	}

	// A third site on eu's value, with a registry of its own.
	regC := site.Registry{Store: etcdstore.New(us.Client(), "/firn/third/"), Where: "etcd us /firn/third/"}
	_, err := ledger.ClaimSite(ctx, regC, siteOf(t, "third", 1), space)
	if !errors.Is(err, site.ErrRefused) || !strings.Contains(err.Error(), `held by site "eu"`) {
		t.Fatalf("claim of eu's value by a third site: %v; want refused naming eu", err)
	}

	seen := map[int64]string{}
	for _, p := range []struct {
		reg  site.Registry
		name string
		dc   uint64
	}{{regA, "eu", 1}, {regA, "eu", 1}, {regB, "us", 2}, {regB, "us", 2}} {
		src, err := source(t, p.reg.Store, p.name, p.dc)
		if err != nil {
			t.Fatalf("process of %s: %v", p.name, err)
		}
		for range 2000 {
			id, err := src.Next(ctx)
			if err != nil {
				t.Fatal(err)
			}
			parts, err := layout.Decompose(uint64(id))
			if err != nil {
				t.Fatal(err)
			}
			if dc := parts.Node >> 3; dc != p.dc {
				t.Fatalf("site %s issued ID %d on node %d, datacenter %d", p.name, id, parts.Node, dc)
			}
			if prev, dup := seen[id]; dup {
				t.Fatalf("ID %d issued by %s and %s", id, prev, p.name)
			}
			seen[id] = p.name
		}
	}

	// Without the site setting, or with another site's.
	plain, err := ids.New(regA.Store, ids.Options{Layout: layout, TTL: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close(ctx)
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	_, err = plain.Next(wctx)
	cancel()
	if err == nil || !strings.Contains(err.Error(), `belongs to site "eu"`) {
		t.Fatalf("a process without the site setting: %v; want refused naming site eu", err)
	}
	if _, err := source(t, regA.Store, "us", 2); err == nil || !strings.Contains(err.Error(), `belongs to site "eu"`) {
		t.Fatalf("a process of us on eu's registry: %v; want refused naming eu", err)
	}

	// A copy of eu's registry in another etcd cluster.
	rec, _ := regA.Store.Record(ctx)
	copyStore := etcdstore.New(us.Client(), "/firn/copy/")
	if err := copyStore.Rerecord(ctx, nodeid.LayoutID{}, rec); err != nil {
		t.Fatal(err)
	}
	if _, err := source(t, copyStore, "eu", 1); err == nil || !strings.Contains(err.Error(), "not the one the site claimed") {
		t.Fatalf("a process on a copy of eu's registry: %v; want refused as a copy", err)
	}

	// Release eu while a process of it runs: it stops at its next renewal.
	live, err := source(t, regA.Store, "eu", 1)
	if err != nil {
		t.Fatal(err)
	}
	// A node of eu's left 5 s ahead (within MaxBehind): the floor, and
	// the next site's first ID, must be past it.
	ahead := time.Now().Add(5 * time.Second).UnixMilli()
	if _, err := regA.Store.Advance(ctx, nodeid.AdvanceRequest{Node: a.First + a.Count - 1, HWM: ahead}); err != nil {
		t.Fatal(err)
	}
	floor, err := ledger.ReleaseSite(ctx, regA, a, space)
	if err != nil {
		t.Fatalf("release eu: %v", err)
	}
	stopped := false
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if live.Ready() != nil {
			stopped = true
			break
		}
	}
	if !stopped {
		t.Fatal("a process of a released site still ready 10 s after the release")
	}
	var last int64
	for id, name := range seen {
		if name == "eu" {
			p, _ := layout.Decompose(uint64(id))
			last = max(last, p.Time.UnixMilli())
		}
	}
	if floor <= last || floor < ahead {
		t.Fatalf("floor %d not above eu's last ID's time %d and HWM %d", floor, last, ahead)
	}

	// The third site takes eu's value: its first ID lies above the floor.
	if _, err := ledger.ClaimSite(ctx, regC, siteOf(t, "third", 1), space); err != nil {
		t.Fatalf("claim of the released value: %v", err)
	}
	third, err := source(t, regC.Store, "third", 1)
	if err != nil {
		t.Fatal(err)
	}
	id, err := third.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if p, _ := layout.Decompose(uint64(id)); p.Time.UnixMilli() < floor {
		at := p.Time.UnixMilli()
		t.Fatalf("the third site's ID %d at %d, below the floor %d", id, at, floor)
	}

	// An etcd ledger has no clock to bound what a destroyed site issued.
	if _, err := ledger.ReleaseDestroyed(ctx, b); !errors.Is(err, site.ErrRefused) || !strings.Contains(err.Error(), "no clock") {
		t.Fatalf("release of us on an etcd ledger without its registry: %v; want refused", err)
	}
}

// TestPromote: a site's registry copied so that it carries the original's
// identity (as a promoted replica does: here another prefix of the same
// etcd cluster) cannot be told from the original. The site moves onto a
// value claimed ahead of time: a process started against the copy with
// the old value is refused, one with the standby value serves on it, and
// the old value stays the site's in the ledger until it is released.
func TestPromote(t *testing.T) {
	ctx := context.Background()
	ledgerCluster, eu := testserver.Etcd(t, 1), testserver.Etcd(t, 1)
	old, standby := siteOf(t, "eu", 1), siteOf(t, "eu", 3)
	ledger := ledgerOn(t, ledgerCluster.Client(), old.Count)
	space := node.LayoutID(layout)
	orig := site.Registry{Store: etcdstore.New(eu.Client(), "/firn/ids/"), Where: "etcd eu /firn/ids/"}
	if _, err := ledger.ClaimSite(ctx, orig, old, space); err != nil {
		t.Fatal(err)
	}
	if _, err := source(t, orig.Store, "eu", 1); err != nil {
		t.Fatal(err)
	}
	// The replica: the original's record and HWMs, the same identity.
	replica := site.Registry{Store: etcdstore.New(eu.Client(), "/firn/replica/"), Where: "etcd eu /firn/replica/"}
	rec, _ := orig.Store.Record(ctx)
	if err := replica.Store.Rerecord(ctx, nodeid.LayoutID{}, rec); err != nil {
		t.Fatal(err)
	}
	hwms, _ := orig.Store.HWMs(ctx)
	for n, h := range hwms {
		if _, err := replica.Store.Advance(ctx, nodeid.AdvanceRequest{Node: n, HWM: h}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := ledger.Promote(ctx, replica, standby, space); !errors.Is(err, site.ErrRefused) || !strings.Contains(err.Error(), "standby") {
		t.Fatalf("promote onto a value not claimed as a standby: %v; want refused", err)
	}
	if err := ledger.Standby(ctx, standby); err != nil {
		t.Fatal(err)
	}
	if _, err := ledger.ClaimSite(ctx, regOf(t, ledgerCluster), siteOf(t, "us", 3), space); !errors.Is(err, site.ErrRefused) || !strings.Contains(err.Error(), `held by site "eu"`) {
		t.Fatalf("another site's claim of eu's standby: %v; want refused naming eu", err)
	}
	if _, err := ledger.Promote(ctx, replica, standby, space); err != nil {
		t.Fatalf("promote: %v", err)
	}
	if _, err := source(t, replica.Store, "eu", 1); err == nil || !strings.Contains(err.Error(), "belongs to") {
		t.Fatalf("a process with the old value on the promoted replica: %v; want refused", err)
	}
	src, err := source(t, replica.Store, "eu", 3)
	if err != nil {
		t.Fatalf("a process with the standby value on the promoted replica: %v", err)
	}
	id, _ := src.Next(ctx)
	if p, _ := layout.Decompose(uint64(id)); p.Node>>3 != 3 {
		t.Fatalf("the promoted site issued on node %d; want datacenter 3", p.Node)
	}
	if c, _, _, _ := ledger.Claim(ctx, 1); c.Site != "eu" || c.Released {
		t.Fatalf("the old value in the ledger after the promotion: %+v; want still eu's until released", c)
	}
}

// regOf is a registry of its own on cluster c.
func regOf(t *testing.T, c *testserver.EtcdCluster) site.Registry {
	t.Helper()
	p := prefix()
	return site.Registry{Store: etcdstore.New(c.Client(), p), Where: "etcd " + p}
}
