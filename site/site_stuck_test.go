package site_test

// Provisioning commands cut short, and the way out of each: a re-run
// finishes what was started, on the registry it was started on. Helpers (siteSite, siteStore, siteCfg,
// siteAcquire, siteCopy, overlap, mustRecord) are site_faults_test.go's.

import (
	"context"
	"errors"
	"sync"
	"testing"

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
