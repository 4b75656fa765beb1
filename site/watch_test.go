package site_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/firn-id/firn/node"
	"github.com/firn-id/firn/nodeid"
	"github.com/firn-id/firn/nodeid/nodeidtest"
	"github.com/firn-id/firn/site"
	"github.com/firn-id/firn/snowflake"
)

// TestWatchStopsARevokedSite: a serving process of a site re-reads its
// claim from the ledger; while the ledger records it for this registry
// it serves on, and once the value is released without reaching the
// registry (--site-destroyed: the site was believed gone), the process
// stops issuing for good and says why.
func TestWatchStopsARevokedSite(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stores := map[string]*nodeidtest.MemStore{}
	open := func(ns string) (nodeid.Recorder, error) {
		if stores[ns] == nil {
			stores[ns] = nodeidtest.NewMemStore()
		}
		return stores[ns], nil
	}
	s := siteOf(t, "eu", 1)
	space := node.LayoutID(layout)
	ledger, err := site.OpenLedger(ctx, open, "ledger", space, site.Spec{Count: s.Count}, true)
	if err != nil {
		t.Fatal(err)
	}
	reg := site.Registry{Store: nodeidtest.NewMemStore(), Where: "memory"}
	if _, err := ledger.ClaimSite(ctx, reg, s, space); err != nil {
		t.Fatal(err)
	}
	if err := ledger.Check(ctx, reg, s); err != nil {
		t.Fatalf("Check of a live claim: %v", err)
	}
	h, err := node.New(node.Config{Store: reg.Store, Generator: snowflake.Config{Layout: layout},
		Lease: nodeid.Config{NodeBits: layout.NodeBits(), Layout: space, Site: s, TTL: 2 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	g, lease, err := h.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(context.Background())
	if err := h.Watch(ctx, func(*snowflake.Generator, *nodeid.Lease) {}); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Next(ctx); err != nil {
		t.Fatal(err)
	}
	go ledger.Watch(ctx, reg, s, 20*time.Millisecond, h.Revoke, slog.Default())
	time.Sleep(100 * time.Millisecond)
	if err := h.NotReady(); err != nil {
		t.Fatalf("a site whose claim stands is not ready: %v", err)
	}
	if _, err := ledger.ReleaseDestroyed(ctx, s); err != nil {
		t.Fatal(err)
	}
	select {
	case <-lease.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the lease still held 5 s after the ledger released the value")
	}
	why := h.NotReady()
	if why == nil || !errors.Is(why, nodeid.ErrSite) || !strings.Contains(why.Error(), "released") {
		t.Fatalf("NotReady = %v; want the site's release", why)
	}
	select {
	case <-h.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the holder did not end after the revocation: it may take a node again")
	}
}
