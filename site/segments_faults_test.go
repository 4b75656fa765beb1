package site_test

// Segments under sites under the sequences a break-it review named: a
// promotion after the site served segments, a row that moves during the
// claim, a tag served before sites by a set whose other stores are
// elsewhere.

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/firn-id/firn/nodeid"
	"github.com/firn-id/firn/nodeid/nodeidtest"
	"github.com/firn-id/firn/segment"
	"github.com/firn-id/firn/segment/segmenttest"
	"github.com/firn-id/firn/site"
)

// segsOf is the segment store a process of s serves from, as firn
// serve builds it from the site record in st.
func segsOf(t *testing.T, st nodeid.Store, s nodeid.Site, segs ...segment.Store) (*segment.Multi, nodeid.SiteRecord) {
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

// TestSiteSegmentsPromote: a site that served a segment range is
// promoted onto its standby value (the registry's replica, the same
// segment store): the old value's rows, the site's own IDs above the
// floor, move into the standby's classes above their counters; they are
// never taken for rows served before sites (which would refuse the
// promotion on every run).
func TestSiteSegmentsPromote(t *testing.T) {
	ctx := context.Background()
	l := siteLedger(t)
	segs := segmenttest.NewMemStore()
	a := siteStore("pg-1")
	orig := site.Registry{Store: a, Where: "orig", Segments: []segment.Store{segs}}
	eu0, eu1 := siteSite("eu", 0), siteSite("eu", 1)
	if _, err := l.ClaimSite(ctx, orig, eu0, siteLayout); err != nil {
		t.Fatal(err)
	}
	m, _ := segsOf(t, a, eu0, segs)
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
	info, err := segs.Tag(ctx, "orders")
	if err != nil {
		t.Fatal(err)
	}
	if info.Delta != 2 || info.Remainder != 1 || info.Next < 11 {
		t.Fatalf("the row after the promotion: %+v; want 1 mod 2 (the standby value's class), above 11 (the old value's range)", info)
	}
}

// reclassRace is a segment store on which a process of the registry's
// past (before sites) reserves once more just before the claim's first
// Reclass: the race segments' retry loop is there for.
type reclassRace struct {
	*segmenttest.MemStore
	once sync.Once
}

func (r *reclassRace) Reclass(ctx context.Context, tag string, from segment.TagInfo, delta, remainder, next, step int64) error {
	r.once.Do(func() { _, _ = r.Reserve(ctx, tag, 10) })
	return r.MemStore.Reclass(ctx, tag, from, delta, remainder, next, step)
}

// TestSiteSegmentsRowMovesDuringClaim: the first site's store served
// "orders" before sites; a process of that past reserves once between
// the claim's read of the rows and its Reclass. The first claim may
// raise the floor it fixed until it settles it, so the retry finishes,
// and the row starts above the range reserved meanwhile.
func TestSiteSegmentsRowMovesDuringClaim(t *testing.T) {
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
	if _, err := l.ClaimSite(ctx, reg, eu, siteLayout); err != nil {
		t.Fatalf("claim with the row moving once: %v", err)
	}
	info, err := segs.Tag(ctx, "orders")
	if err != nil {
		t.Fatal(err)
	}
	if info.Delta != 2 || info.Remainder != 0 || info.Next < 21 || info.Step != 20 {
		t.Fatalf("the row after the claim: %+v; want 0 mod 2 at or above 21, past the range reserved during the claim, step 20 (its 10 IDs a range kept)", info)
	}
}

// TestSiteSegmentsPartOfASet: before sites, "orders" was served by a set
// of two stores, P and Q (delta 2: Tinyid's usual pair of databases); the
// sites' delta is 2 as well. Site eu claims with P alone, whose row looks
// like one of eu's own; Q's counter is nowhere the claim can read, so the
// claim is refused, naming the missing row. Following the advice — P made
// one store's tag past the pair's largest counter — the claim passes, and
// site us, on a new database, never issues an ID the pair issued.
func TestSiteSegmentsPartOfASet(t *testing.T) {
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
	_, err = l.ClaimSite(ctx, regEU, eu, siteLayout)
	if !errors.Is(err, segment.ErrResidues) || !strings.Contains(err.Error(), "is missing") {
		t.Fatalf("claim with one store of a pair served before sites: %v; want refused naming the missing row", err)
	}
	top := int64(0)
	for id := range before {
		top = max(top, id)
	}
	p.EditResidue("orders", 1, 0)
	if _, err := p.Advance(ctx, "orders", top+1); err != nil {
		t.Fatal(err)
	}
	if _, err := l.ClaimSite(ctx, regEU, eu, siteLayout); err != nil {
		t.Fatalf("claim after the row was made one store's, past the pair: %v", err)
	}
	r := segmenttest.NewMemStore()
	regUS := site.Registry{Store: siteStore("pg-us"), Where: "us", Segments: []segment.Store{r}}
	if _, err := l.ClaimSite(ctx, regUS, us, siteLayout); err != nil {
		t.Fatal(err)
	}
	m, rec := segsOf(t, regUS.Store, us, r)
	t.Logf("us's segment floor: %d", rec.Segments)
	if err := m.CreateTag(ctx, "orders", 1, 10, ""); err != nil {
		t.Fatal(err)
	}
	draw(t, m, "orders", "us", 3, before)
}

// TestLedgerOtherLayoutSaysWhich: a claim under another layout than the
// ledger's is refused naming the ledger's layout in words, and, when the
// words are the same (other node fields of the same widths), saying so.
func TestLedgerOtherLayoutSaysWhich(t *testing.T) {
	ctx := context.Background()
	stores := map[string]*nodeidtest.MemStore{}
	var mu sync.Mutex
	open := func(ns string) (nodeid.Recorder, error) {
		mu.Lock()
		defer mu.Unlock()
		if stores[ns] == nil {
			stores[ns] = nodeidtest.NewMemStore()
		}
		return stores[ns], nil
	}
	if _, err := site.OpenLedger(ctx, open, "ledger", siteLayout, site.Spec{Count: 4}, true); err != nil {
		t.Fatal(err)
	}
	other := siteLayout
	other.Fingerprint = "v1:other"
	_, err := site.OpenLedger(ctx, open, "ledger", other, site.Spec{Count: 4}, false)
	if !errors.Is(err, site.ErrRefused) || !strings.Contains(err.Error(), "other node fields") || !strings.Contains(err.Error(), siteLayout.Description) {
		t.Fatalf("a ledger opened under another layout of the same words: %v; want refused saying the node fields differ", err)
	}
	other.Description = "another: 40 time + 11 node + 12 sequence"
	_, err = site.OpenLedger(ctx, open, "ledger", other, site.Spec{Count: 4}, false)
	if !errors.Is(err, site.ErrRefused) || !strings.Contains(err.Error(), "serves layout "+siteLayout.Description) {
		t.Fatalf("a ledger opened under another layout: %v; want refused naming the ledger's", err)
	}
}

// TestSiteSegmentsHistoryOnAReleasedValue: a registry whose segment store
// served "orders" before sites claims a value another site held and
// released. It serves no segments there, but the IDs its rows issued are
// in the world all the same: they count against the floor other sites
// issue from, so the claim is refused, before anything is written.
func TestSiteSegmentsHistoryOnAReleasedValue(t *testing.T) {
	ctx := context.Background()
	l := siteLedger(t)
	eu := siteSite("eu", 0)
	first := site.Registry{Store: siteStore("pg-eu"), Where: "eu"}
	if _, err := l.ClaimSite(ctx, first, eu, siteLayout); err != nil {
		t.Fatal(err)
	}
	if _, err := l.ReleaseSite(ctx, first, eu, siteLayout); err != nil {
		t.Fatal(err)
	}
	old := segmenttest.NewMemStore()
	if err := old.CreateTag(ctx, "orders", 1, 10, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := old.Reserve(ctx, "orders", 10); err != nil {
		t.Fatal(err)
	}
	reg := site.Registry{Store: siteStore("pg-eu2"), Where: "eu2", Segments: []segment.Store{old}}
	_, err := l.ClaimSite(ctx, reg, siteSite("eu2", 0), siteLayout)
	if !errors.Is(err, site.ErrRefused) || !strings.Contains(err.Error(), "before sites") {
		t.Fatalf("claim of a released value by a registry whose store issued IDs before sites: %v; want refused", err)
	}
	if rec, err := reg.Store.Record(ctx); err != nil || rec.Fingerprint != "" {
		t.Fatalf("the refused claim wrote the registry's record: %+v, %v", rec, err)
	}
}
