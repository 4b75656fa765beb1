package site_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
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

// TestReleasedSiteSaysSo: firn site release writes the released marker
// in the registry, which ends the serving process's lease. The process
// says its site's value was released and that it stopped issuing for
// good — in its log and in NotReady (/readyz) — rather than that a lease
// was lost and a node is being taken again.
func TestReleasedSiteSaysSo(t *testing.T) {
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
	var log lockedLog
	h, err := node.New(node.Config{Store: reg.Store, Generator: snowflake.Config{Layout: layout}, Log: slog.New(slog.NewTextHandler(&log, nil)),
		Lease: nodeid.Config{NodeBits: layout.NodeBits(), Layout: space, Site: s, TTL: 2 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := h.Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	defer h.Close(context.Background())
	if err := h.Watch(ctx, func(*snowflake.Generator, *nodeid.Lease) {}); err != nil {
		t.Fatal(err)
	}
	if _, err := ledger.ReleaseSite(ctx, reg, s, space); err != nil {
		t.Fatal(err)
	}
	select {
	case <-h.Done():
	case <-time.After(time.Minute):
		t.Fatal("the holder did not end after its site's release")
	}
	why := h.NotReady()
	if why == nil || !strings.Contains(why.Error(), "released its value") || !strings.Contains(why.Error(), "stopped issuing for good") {
		t.Errorf("NotReady = %v; want the site's release, and that the process stopped issuing for good", why)
	}
	if err := h.Revoked(); !errors.Is(err, nodeid.ErrSite) {
		t.Errorf("Revoked = %v; want the site's release", err)
	}
	if got := log.String(); !strings.Contains(got, "stopped issuing for good") || !strings.Contains(got, "released its value") || strings.Contains(got, "acquiring a node again") {
		t.Errorf("the log says:\n%s\nwant the site's release and that issuing stopped for good, not a node taken again", got)
	}
}

// lockedLog is a log destination the holder's goroutines may share.
type lockedLog struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
