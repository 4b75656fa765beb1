package site_test

// Segments under sites, second break-it review: claims that race the
// first claim of a ledger, which fixes the sites' segment floor.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/firn-id/firn/nodeid"
	"github.com/firn-id/firn/nodeid/nodeidtest"
	"github.com/firn-id/firn/segment"
	"github.com/firn-id/firn/segment/segmenttest"
	"github.com/firn-id/firn/site"
)

// claimDuring is a segment store served before sites on which, just
// before the claim's first Reclass, another site's claim runs to its end
// (it reads the ledger's floor), and then a process of the registry's
// past (before sites, still within its lease) reserves once more: the
// Reclass fails and the claim reads the row again.
type claimDuring struct {
	*segmenttest.MemStore
	once   sync.Once
	during func(ctx context.Context)
}

func (c *claimDuring) Reclass(ctx context.Context, tag string, from segment.TagInfo, delta, remainder, next, step int64) error {
	c.once.Do(func() { c.during(ctx) })
	return c.MemStore.Reclass(ctx, tag, from, delta, remainder, next, step)
}

// TestSiteSegmentsSecondClaimReadsFloorMidClaim: site eu's store served
// "orders" before sites, up to 10; eu claims first (the order the docs
// ask for), and fixes the floor at 11. Before its Reclass, site us (a new
// database) claims, and a process of eu's past reserves [11, 21) of
// every class. us is refused: no claim reads the floor until the first
// claim has taken every row it found into its classes (settled). eu's
// retry raises the floor past the range and settles; us's claim then
// starts above it, and none of its IDs repeats one eu's store issued.
func TestSiteSegmentsSecondClaimReadsFloorMidClaim(t *testing.T) {
	ctx := context.Background()
	l := siteLedger(t)
	before := map[int64]string{}
	past := segmenttest.NewMemStore()
	if err := past.CreateTag(ctx, "orders", 1, 10, ""); err != nil {
		t.Fatal(err)
	}
	reserve := func() {
		r, err := past.Reserve(ctx, "orders", 10)
		if err != nil {
			t.Fatal(err)
		}
		for id := r.Start; id < r.End; id += r.Delta {
			before[id] = "eu's store before sites"
		}
	}
	reserve()
	eu, us := siteSite("eu", 0), siteSite("us", 1)
	usSegs := segmenttest.NewMemStore()
	regUS := site.Registry{Store: siteStore("pg-us"), Where: "us", Segments: []segment.Store{usSegs}}
	var usErr error
	segs := &claimDuring{MemStore: past, during: func(ctx context.Context) {
		_, usErr = l.ClaimSite(ctx, regUS, us, siteLayout)
		reserve() // a process of eu's past, its lease not yet ended
	}}
	regEU := site.Registry{Store: siteStore("pg-eu"), Where: "eu", Segments: []segment.Store{segs}}
	_, euErr := l.ClaimSite(ctx, regEU, eu, siteLayout)
	t.Logf("eu's claim: %v; us's claim: %v", euErr, usErr)
	usAfterEU(t, l, euErr, usErr, regUS, us, usSegs, before)
}

// rerecordHook is a registry on which fn runs once, just before its first
// Rerecord (the claim's pending record): after the claim's checks, before
// its writes.
type rerecordHook struct {
	*nodeidtest.MemStore
	once sync.Once
	fn   func(ctx context.Context)
}

func (r *rerecordHook) Rerecord(ctx context.Context, old, id nodeid.LayoutID) error {
	r.once.Do(func() { r.fn(ctx) })
	return r.MemStore.Rerecord(ctx, old, id)
}

// TestSiteSegmentsClaimsStartedInOrder: eu's store served "orders"
// before sites, up to 10; eu's claim starts first and fixes the floor in
// the ledger before its first write. Before its pending record, us (a
// new database) claims: it is refused, since eu's claim has not settled
// the floor; once eu's finished, us's claim starts above what eu's store
// issued before sites.
func TestSiteSegmentsClaimsStartedInOrder(t *testing.T) {
	ctx := context.Background()
	l := siteLedger(t)
	before := map[int64]string{}
	past := segmenttest.NewMemStore()
	if err := past.CreateTag(ctx, "orders", 1, 10, ""); err != nil {
		t.Fatal(err)
	}
	r, err := past.Reserve(ctx, "orders", 10)
	if err != nil {
		t.Fatal(err)
	}
	for id := r.Start; id < r.End; id += r.Delta {
		before[id] = "eu's store before sites"
	}
	eu, us := siteSite("eu", 0), siteSite("us", 1)
	usSegs := segmenttest.NewMemStore()
	regUS := site.Registry{Store: siteStore("pg-us"), Where: "us", Segments: []segment.Store{usSegs}}
	var usErr error
	euReg := &rerecordHook{MemStore: siteStore("pg-eu"), fn: func(ctx context.Context) {
		_, usErr = l.ClaimSite(ctx, regUS, us, siteLayout)
	}}
	regEU := site.Registry{Store: euReg, Where: "eu", Segments: []segment.Store{past}}
	_, euErr := l.ClaimSite(ctx, regEU, eu, siteLayout)
	t.Logf("eu's claim: %v; us's claim: %v", euErr, usErr)
	if euErr != nil {
		if rec, err := euReg.Record(ctx); err == nil && rec.Fingerprint != "" {
			t.Errorf("eu's claim was refused after it wrote its registry's record (%s): the docs promise the refusal before anything is written", rec.Description)
		}
	}
	usAfterEU(t, l, euErr, usErr, regUS, us, usSegs, before)
}

// usAfterEU checks the end of a race of us's claim against eu's, the
// ledger's first: eu's claim finished, us's was refused while eu's had not
// settled the segment floor, and us's claim run again passes, its "orders"
// repeating none of the IDs issued before (before).
func usAfterEU(t *testing.T, l *site.Ledger, euErr, usErr error, regUS site.Registry, us nodeid.Site, usSegs segment.Store, before map[int64]string) {
	t.Helper()
	ctx := context.Background()
	if euErr != nil {
		t.Fatalf("eu's claim, the first: %v", euErr)
	}
	if !errors.Is(usErr, site.ErrRefused) || !strings.Contains(fmt.Sprint(usErr), "has not finished") {
		t.Fatalf("us's claim while eu's is under way: %v; want refused until eu's settled the floor", usErr)
	}
	if _, err := l.ClaimSite(ctx, regUS, us, siteLayout); err != nil {
		t.Fatalf("us's claim once eu's finished: %v", err)
	}
	m, rec := segsOf(t, regUS.Store, us, usSegs)
	t.Logf("us's segment floor: %d", rec.Segments)
	if err := m.CreateTag(ctx, "orders", 1, 10, ""); err != nil {
		t.Fatal(err)
	}
	draw(t, m, "orders", "us", 3, before)
}
