package site_test

// Break-it review of segments under sites: sequences the claim, promote
// and re-run paths do not survive.

import (
	"context"
	"sync"
	"testing"

	"github.com/firn-id/firn/nodeid"
	"github.com/firn-id/firn/segment"
	"github.com/firn-id/firn/segment/segmenttest"
	"github.com/firn-id/firn/site"
)

// breakMulti is the segment store a process of s serves from, as firn
// serve builds it from the site record in st.
func breakMulti(t *testing.T, st nodeid.Store, s nodeid.Site, segs ...segment.Store) (*segment.Multi, nodeid.SiteRecord) {
	t.Helper()
	rec, err := nodeid.CheckSite(context.Background(), st, siteLayout, s)
	if err != nil {
		t.Fatal(err)
	}
	m, err := segment.NewSiteMulti(segment.Residues{Values: int64(s.Values), Stores: max(rec.Stores, 1), Value: int64(s.First / s.Count), Floor: rec.Segments}, segs...)
	if err != nil {
		t.Fatal(err)
	}
	return m, rec
}

// TestBreakPromoteAfterSegments: a site that served one segment range
// is promoted onto its standby value (the registry's replica, the same
// segment store). The promotion takes the old value's rows (Moved) into
// the standby's classes, but their counter is above the ledger's
// SegmentsFrom (the site issued above the floor), so raiseSegments'
// pastFrom refuses the promotion, and every re-run of it: the site stays
// pending, serving nothing.
func TestBreakPromoteAfterSegments(t *testing.T) {
	ctx := context.Background()
	l := siteLedger(t)
	segs := segmenttest.NewMemStore()
	a := siteStore("pg-1")
	orig := site.Registry{Store: a, Where: "orig", Segments: []segment.Store{segs}}
	eu0, eu1 := siteSite("eu", 0), siteSite("eu", 1)
	if _, err := l.ClaimSite(ctx, orig, eu0, siteLayout); err != nil {
		t.Fatal(err)
	}
	m, _ := breakMulti(t, a, eu0, segs)
	if err := m.CreateTag(ctx, "orders", 1, 10, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Reserve(ctx, "orders", 10); err != nil {
		t.Fatal(err)
	}
	if err := l.Standby(ctx, eu1); err != nil {
		t.Fatal(err)
	}
	replica := site.Registry{Store: siteCopy(t, a, "pg-1"), Where: "replica", Segments: []segment.Store{segs}}
	if _, err := l.Promote(ctx, replica, eu1, siteLayout); err != nil {
		t.Fatalf("promote of a site that served segments: %v", err)
	}
}

// reclassRace is a segment store on which a process of the registry's
// past (before sites) reserves once more just before the claim's first
// Reclass: the race segments' retry loop is there for.
type reclassRace struct {
	*segmenttest.MemStore
	once sync.Once
}

func (r *reclassRace) Reclass(ctx context.Context, tag string, from segment.TagInfo, delta, remainder, next int64) error {
	r.once.Do(func() { _, _ = r.MemStore.Reserve(ctx, tag, 10) })
	return r.MemStore.Reclass(ctx, tag, from, delta, remainder, next)
}

// TestBreakFirstClaimRowMoves: the first site's store served "orders"
// before sites; a process of that past reserves once between the claim's
// read of the rows and its Reclass. The retry reads the rows again, past
// the SegmentsFrom the first round wrote, and pastFrom refuses: the
// claim fails, and every re-run fails the same way (the ledger's
// SegmentsFrom never rises), with the pre-site process long stopped.
func TestBreakFirstClaimRowMoves(t *testing.T) {
	ctx := context.Background()
	l := siteLedger(t)
	segs := &reclassRace{MemStore: segmenttest.NewMemStore()}
	if err := segs.CreateTag(ctx, "orders", 1, 10, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := segs.Reserve(ctx, "orders", 10); err != nil {
		t.Fatal(err)
	}
	reg := site.Registry{Store: siteStore("pg-1"), Where: "eu", Segments: []segment.Store{segs}}
	eu := siteSite("eu", 0)
	_, err := l.ClaimSite(ctx, reg, eu, siteLayout)
	if err != nil {
		t.Logf("claim with the row moving once: %v", err)
		// The pre-site process is stopped now: a re-run must finish.
		if _, err := l.ClaimSite(ctx, reg, eu, siteLayout); err != nil {
			t.Fatalf("re-run of the claim, nothing reserving any more: %v", err)
		}
	}
}

// TestBreakPreSiteSetInClass: before sites, "orders" was served by a set
// of two stores, P and Q (delta 2: Tinyid's usual pair of databases). The
// sites' ledger has 2 site values and 1 store per site, so the sites'
// delta is 2 as well. Site eu (value 0) claims with P alone; its row,
// delta 2 remainder 0, is "in the site's classes", so Outside skips it
// and its counter never reaches the ledger's floor, which stays 0. Site
// us (value 1) claims with a new database R (Q retired), creates
// "orders", and issues remainder 1 from the floor: the IDs Q issued
// before sites.
func TestBreakPreSiteSetInClass(t *testing.T) {
	ctx := context.Background()
	l := siteLedger(t)
	p, q := segmenttest.NewMemStore(), segmenttest.NewMemStore()
	pair, err := segment.NewMulti(p, q)
	if err != nil {
		t.Fatal(err)
	}
	if err := pair.CreateTag(ctx, "orders", 1, 10, ""); err != nil {
		t.Fatal(err)
	}
	before := map[int64]string{}
	for _, st := range []*segmenttest.MemStore{p, q, p, q} {
		r, err := st.Reserve(ctx, "orders", 10)
		if err != nil {
			t.Fatal(err)
		}
		for id := r.Start; id < r.End; id += r.Delta {
			before[id] = "the pair before sites"
		}
	}
	eu, us := siteSite("eu", 0), siteSite("us", 1)
	regEU := site.Registry{Store: siteStore("pg-eu"), Where: "eu", Segments: []segment.Store{p}}
	if _, err := l.ClaimSite(ctx, regEU, eu, siteLayout); err != nil {
		t.Fatal(err)
	}
	r := segmenttest.NewMemStore()
	regUS := site.Registry{Store: siteStore("pg-us"), Where: "us", Segments: []segment.Store{r}}
	if _, err := l.ClaimSite(ctx, regUS, us, siteLayout); err != nil {
		t.Fatal(err)
	}
	m, rec := breakMulti(t, regUS.Store, us, r)
	t.Logf("us's segment floor: %d", rec.Segments)
	if err := m.CreateTag(ctx, "orders", 1, 10, ""); err != nil {
		t.Fatal(err)
	}
	draw(t, m, "orders", "us", 3, before)
}
