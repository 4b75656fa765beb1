package site_test

// Provisioning commands cut short, and the way out of each: a re-run
// finishes what was started, on the registry it was started on, and
// releasing a standby needs neither a registry nor a clock. Helpers
// (siteSite, siteStore, siteCfg, siteAcquire, siteCopy, overlap,
// mustRecord) are site_faults_test.go's.

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/firn-id/firn/nodeid"
	"github.com/firn-id/firn/nodeid/nodeidtest"
	"github.com/firn-id/firn/site"
)

// cutStore is a Recorder whose next Rerecord is cut short: with lost
// set, it fails before anything is written; with landed set, it is
// written and its reply is lost. before, when set, runs once before the
// next Rerecord: another command's steps that a race interleaves there.
type cutStore struct {
	nodeid.Recorder
	mu           sync.Mutex
	lost, landed bool
	before       func()
}

func (c *cutStore) cut(landed bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lost, c.landed = !landed, landed
}

func (c *cutStore) Rerecord(ctx context.Context, old, new nodeid.LayoutID) error {
	c.mu.Lock()
	lost, landed, before := c.lost, c.landed, c.before
	c.lost, c.landed, c.before = false, false, nil
	c.mu.Unlock()
	if before != nil {
		before()
	}
	if lost {
		return errors.New("connection reset (the write did not land)")
	}
	err := c.Recorder.Rerecord(ctx, old, new)
	if landed && err == nil {
		return errors.New("connection reset (the write landed, its reply was lost)")
	}
	return err
}

// cutLedger opens a ledger on MemStores and returns it with the store of
// each of its namespaces, so that a test can cut a write to one short.
func cutLedger(t *testing.T) (*site.Ledger, func(ns string) *cutStore) {
	t.Helper()
	var mu sync.Mutex
	stores := map[string]*cutStore{}
	open := func(ns string) (nodeid.Recorder, error) {
		mu.Lock()
		defer mu.Unlock()
		if stores[ns] == nil {
			stores[ns] = &cutStore{Recorder: nodeidtest.NewMemStore()}
		}
		return stores[ns], nil
	}
	l, err := site.OpenLedger(context.Background(), open, "ledger", siteLayout, site.Spec{Count: 4}, true)
	if err != nil {
		t.Fatal(err)
	}
	return l, func(ns string) *cutStore {
		s, _ := open(ns)
		return s.(*cutStore)
	}
}

// promoted sets up a promotion: site eu claims value 0 on the original
// registry, which serves (the returned lease); the replica is a copy that
// carries the original's identity (a promoted physical replica); value 1
// is eu's standby.
func promoted(t *testing.T, l *site.Ledger) (orig, replica site.Registry, live *nodeid.Lease) {
	t.Helper()
	ctx := context.Background()
	a := siteStore("pg-1")
	orig = site.Registry{Store: a, Where: "orig"}
	if _, err := l.ClaimSite(ctx, orig, siteSite("eu", 0), siteLayout); err != nil {
		t.Fatal(err)
	}
	live, err := siteAcquire(t, a, siteCfg(siteSite("eu", 0)))
	if err != nil {
		t.Fatal(err)
	}
	replica = site.Registry{Store: siteCopy(t, a, "pg-1"), Where: "replica"}
	if err := l.Standby(ctx, siteSite("eu", 1)); err != nil {
		t.Fatal(err)
	}
	return orig, replica, live
}

// TestPromoteCutShort: a promotion cut short at the ledger's write (the
// write lost, or landed with its reply lost) leaves the replica's record
// pending under the standby value; a re-run of promote, or of claim,
// finishes it under the pending record's registry ID. The old value stays
// the site's, and the original keeps serving it on other nodes.
func TestPromoteCutShort(t *testing.T) {
	for _, tc := range []struct {
		name   string
		landed bool
		rerun  string
	}{
		{"lost, promote again", false, "promote"},
		{"lost, claim again", false, "claim"},
		{"reply lost, promote again", true, "promote"},
		{"reply lost, claim again", true, "claim"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			l, ns := cutLedger(t)
			eu, standby := siteSite("eu", 0), siteSite("eu", 1)
			_, replica, live := promoted(t, l)
			ns("ledger/value/1").cut(tc.landed)
			if _, err := l.Promote(ctx, replica, standby, siteLayout); err == nil {
				t.Fatal("the promotion cut short at the ledger's write succeeded")
			}
			rec, _, _ := nodeid.ParseSiteRecord(mustRecord(t, replica.Store))
			if !rec.Pending || rec.Site != standby {
				t.Fatalf("the replica's record after the cut: %+v; want pending under the standby", rec)
			}
			if _, err := siteAcquire(t, replica.Store, siteCfg(standby)); !errors.Is(err, nodeid.ErrSite) {
				t.Fatalf("a process on the pending replica: %v; want refused", err)
			}
			rerun := l.Promote
			if tc.rerun == "claim" {
				rerun = l.ClaimSite
			}
			res, err := rerun(ctx, replica, standby, siteLayout)
			if err != nil {
				t.Fatalf("STUCK: the re-run of %s after a promotion cut short: %v", tc.rerun, err)
			}
			if res.Record.Registry != rec.Registry || res.Record.Pending || len(res.Record.Moved) != 1 || !res.Record.Moved[0] {
				t.Fatalf("the finished record %+v; want live, registry %s, moved from value 0", res.Record, rec.Registry)
			}
			c, _, _, _ := l.Claim(ctx, 1)
			if c.Standby || c.Registry != rec.Registry || c.Native != "pg-1" || c.Released {
				t.Fatalf("the standby in the ledger after the re-run: %+v; want claimed for registry %s", c, rec.Registry)
			}
			if c, _, _, _ := l.Claim(ctx, 0); c.Site != "eu" || c.Released {
				t.Fatalf("the old value after the promotion: %+v; want still eu's", c)
			}
			moved, err := siteAcquire(t, replica.Store, siteCfg(standby))
			if err != nil {
				t.Fatalf("a process of the promoted site: %v", err)
			}
			if !standby.Holds(moved.Node()) || eu.Holds(moved.Node()) || !eu.Holds(live.Node()) || live.Err() != nil {
				t.Fatalf("the promoted process on node %d, the original's on %d (%v)", moved.Node(), live.Node(), live.Err())
			}
			if _, err := siteAcquire(t, replica.Store, siteCfg(eu)); !errors.Is(err, nodeid.ErrSite) {
				t.Fatalf("a process with the old value on the promoted replica: %v; want refused", err)
			}
			if _, err := rerun(ctx, replica, standby, siteLayout); err != nil {
				t.Fatalf("a second re-run: %v", err)
			}
		})
	}
}

// TestPromoteCutShortOnCopy: the replica's pending record restored into
// another server (another identity) is not the registry the promotion
// started on: a re-run there is refused whichever registry runs first,
// and the standby ends claimed for the one whose identity the pending
// record names, never for both.
func TestPromoteCutShortOnCopy(t *testing.T) {
	for _, copyFirst := range []bool{true, false} {
		ctx := context.Background()
		l, ns := cutLedger(t)
		standby := siteSite("eu", 1)
		_, replica, _ := promoted(t, l)
		ns("ledger/value/1").cut(false)
		if _, err := l.Promote(ctx, replica, standby, siteLayout); err == nil {
			t.Fatal("the promotion cut short succeeded")
		}
		cp := site.Registry{Store: siteCopy(t, replica.Store.(*nodeidtest.MemStore), "pg-2"), Where: "copy"}
		order := []site.Registry{replica, cp}
		if copyFirst {
			order = []site.Registry{cp, replica}
		}
		var live []*nodeid.Lease
		for _, reg := range order {
			if _, err := l.Promote(ctx, reg, standby, siteLayout); err != nil {
				t.Logf("copy first %v: re-run on %s refused: %v", copyFirst, reg.Where, err)
				continue
			}
			lease, err := siteAcquire(t, reg.Store, siteCfg(standby))
			if err != nil {
				t.Fatalf("a process on %s: %v", reg.Where, err)
			}
			live = append(live, lease)
		}
		if len(live) != 1 {
			t.Fatalf("copy first %v: %d registries serve the standby; want 1", copyFirst, len(live))
		}
		if c, _, _, _ := l.Claim(ctx, 1); c.Native != "pg-1" {
			t.Errorf("copy first %v: the standby claimed on %q; want the replica's pg-1", copyFirst, c.Native)
		}
	}
}

// TestPromoteCutShortFloorRises: while a promotion is cut short, the
// standby is released, another site takes the value and serves on it,
// releases it, and eu claims it as a standby again, now with a higher
// floor. The re-run finishes the promotion on the floor the ledger
// records now, not the one the pending record was written with.
func TestPromoteCutShortFloorRises(t *testing.T) {
	ctx := context.Background()
	l, ns := cutLedger(t)
	standby, us := siteSite("eu", 1), siteSite("us", 1)
	_, replica, _ := promoted(t, l)
	ns("ledger/value/1").cut(false)
	if _, err := l.Promote(ctx, replica, standby, siteLayout); err == nil {
		t.Fatal("the promotion cut short succeeded")
	}
	if _, err := l.ReleaseStandby(ctx, standby); err != nil {
		t.Fatal(err)
	}
	other := site.Registry{Store: siteStore("pg-3"), Where: "us"}
	if _, err := l.ClaimSite(ctx, other, us, siteLayout); err != nil {
		t.Fatal(err)
	}
	cfg := siteCfg(us)
	cfg.Window = 5 * time.Second
	usLease, err := siteAcquire(t, other.Store, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Promote(ctx, replica, standby, siteLayout); !errors.Is(err, site.ErrRefused) {
		t.Fatalf("the re-run while us holds the value: %v; want refused", err)
	}
	floor, err := l.ReleaseSite(ctx, other, us, siteLayout)
	if err != nil {
		t.Fatal(err)
	}
	if floor < usLease.Limit() {
		t.Fatalf("us released with floor %d below its reservation %d", floor, usLease.Limit())
	}
	if err := l.Standby(ctx, standby); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Promote(ctx, replica, standby, siteLayout); err != nil {
		t.Fatalf("STUCK: the re-run of promote: %v", err)
	}
	lease, err := siteAcquire(t, replica.Store, siteCfg(standby))
	if err != nil {
		t.Fatal(err)
	}
	if lease.Start() < floor {
		t.Errorf("DUPLICATE: us issued on value 1 up to %d; the promoted site's node %d starts at %d, below it", floor, lease.Node(), lease.Start())
	}
}

// TestCutShortClaimOnRestoredCopy: a claim cut short at the ledger's
// write leaves a pending record; a backup of the registry taken then and
// restored into another server carries it. The copy's claim takes the
// value under the pending record's registry ID; a re-run on the original
// must not then finish too, or two registries serve one value.
func TestCutShortClaimOnRestoredCopy(t *testing.T) {
	ctx := context.Background()
	l, ns := cutLedger(t)
	eu := siteSite("eu", 0)
	a := siteStore("pg-1")
	ns("ledger/value/0").cut(false)
	if _, err := l.ClaimSite(ctx, site.Registry{Store: a, Where: "a"}, eu, siteLayout); err == nil {
		t.Fatal("the claim cut short succeeded")
	}
	b := siteCopy(t, a, "pg-2")
	if _, err := l.ClaimSite(ctx, site.Registry{Store: b, Where: "b"}, eu, siteLayout); err != nil {
		t.Fatalf("the claim on the copy: %v", err)
	}
	first, err := siteAcquire(t, b, siteCfg(eu))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.ClaimSite(ctx, site.Registry{Store: a, Where: "a"}, eu, siteLayout); err != nil {
		t.Logf("the re-run on the original refused: %v", err)
		return
	}
	second, err := siteAcquire(t, a, siteCfg(eu))
	if err != nil {
		t.Logf("a process on the original refused: %v", err)
		return
	}
	overlap(t, first, second)
}

// TestReleaseStandby: a standby claimed on a ledger with no clock of its
// own (etcd's) was stuck: release needs its registry, and it has none;
// --site-destroyed needs the ledger's clock. A standby no registry ever
// served is released with the floor it was claimed with. A standby a
// promotion took, or one a promotion cut short is finishing, is not.
func TestReleaseStandby(t *testing.T) {
	ctx := context.Background()
	l, ns := cutLedger(t)
	eu, standby := siteSite("eu", 0), siteSite("eu", 1)
	if _, err := l.ReleaseStandby(ctx, eu); !errors.Is(err, site.ErrRefused) {
		t.Fatalf("release as a standby of a value no site holds: %v; want refused", err)
	}
	_, replica, _ := promoted(t, l)
	if _, err := l.ReleaseStandby(ctx, eu); !errors.Is(err, site.ErrRefused) {
		t.Fatalf("release as a standby of a value claimed on a registry: %v; want refused", err)
	}
	if _, err := l.ReleaseStandby(ctx, siteSite("us", 1)); !errors.Is(err, site.ErrRefused) {
		t.Fatalf("release of eu's standby by another site: %v; want refused", err)
	}
	if _, err := l.ReleaseSite(ctx, replica, standby, siteLayout); !errors.Is(err, site.ErrRefused) {
		t.Fatalf("release of a standby through a registry: %v; want refused", err)
	}
	before, _, _, _ := l.Claim(ctx, 1)
	floor, err := l.ReleaseStandby(ctx, standby)
	if err != nil {
		t.Fatalf("STUCK: release of a standby: %v", err)
	}
	c, _, _, _ := l.Claim(ctx, 1)
	if !c.Released || c.Standby || c.Floor != before.Floor || floor != c.Floor {
		t.Fatalf("the standby after its release: %+v, floor %d; want released at the floor %d it had", c, floor, before.Floor)
	}
	if again, err := l.ReleaseStandby(ctx, standby); err != nil || again != floor {
		t.Fatalf("a second release: %d, %v; want %d", again, err, floor)
	}

	// A promotion onto the released standby is refused; once claimed as a
	// standby again, a promotion whose ledger write lands (its reply
	// lost) names the replica: the value is not a standby any more.
	if _, err := l.Promote(ctx, replica, standby, siteLayout); !errors.Is(err, site.ErrRefused) {
		t.Fatalf("promote onto a released standby: %v; want refused", err)
	}
	if err := l.Standby(ctx, standby); err != nil {
		t.Fatal(err)
	}
	ns("ledger/value/1").cut(true)
	if _, err := l.Promote(ctx, replica, standby, siteLayout); err == nil {
		t.Fatal("the promotion cut short succeeded")
	}
	if _, err := l.ReleaseStandby(ctx, standby); !errors.Is(err, site.ErrRefused) {
		t.Fatalf("release as a standby of a value a promotion claimed: %v; want refused", err)
	}
}

// TestReleaseStandbyRacingPromote: the release of a standby lands between
// a promotion's pending record and its ledger write. The promotion's
// ledger write then fails; its re-run claims the released value anew, at
// its floor; nothing serves the value until then.
func TestReleaseStandbyRacingPromote(t *testing.T) {
	ctx := context.Background()
	l, ns := cutLedger(t)
	standby := siteSite("eu", 1)
	_, replica, _ := promoted(t, l)
	var floor int64
	var relErr error
	ns("ledger/value/1").before = func() { // the pending record is written; the ledger's write comes next
		floor, relErr = l.ReleaseStandby(ctx, standby)
	}
	_, err := l.Promote(ctx, replica, standby, siteLayout)
	if relErr != nil {
		t.Fatalf("release of the standby during the promotion: %v", relErr)
	}
	if err == nil {
		t.Fatal("a promotion onto a standby released under it succeeded")
	}
	if _, err := siteAcquire(t, replica.Store, siteCfg(standby)); !errors.Is(err, nodeid.ErrSite) {
		t.Fatalf("a process on the replica: %v; want refused", err)
	}
	if _, err := l.Promote(ctx, replica, standby, siteLayout); err != nil {
		t.Fatalf("the re-run of the promotion: %v", err)
	}
	lease, err := siteAcquire(t, replica.Store, siteCfg(standby))
	if err != nil {
		t.Fatal(err)
	}
	if lease.Start() < floor {
		t.Errorf("the promoted site starts at %d, below the released standby's floor %d", lease.Start(), floor)
	}
}
