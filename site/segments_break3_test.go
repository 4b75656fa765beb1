package site_test

// Segments under sites, third break-it review: the segment floor's
// claim key (site name and value) shared by two claims.

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/firn-id/firn/segment"
	"github.com/firn-id/firn/segment/segmenttest"
	"github.com/firn-id/firn/site"
)

// tagsHook runs fn once, on the first Tags (a claim's checkSegments).
type tagsHook struct {
	*segmenttest.MemStore
	once sync.Once
	fn   func()
}

func (h *tagsHook) Tags(ctx context.Context) ([]segment.TagInfo, error) {
	h.once.Do(h.fn)
	return h.MemStore.Tags(ctx)
}

// reclassHook runs fn once, before the first Reclass (segments' Adopt).
type reclassHook struct {
	*segmenttest.MemStore
	once sync.Once
	fn   func()
}

func (h *reclassHook) Reclass(ctx context.Context, tag string, from segment.TagInfo, delta, remainder, next int64) error {
	h.once.Do(h.fn)
	return h.MemStore.Reclass(ctx, tag, from, delta, remainder, next)
}

// TestSiteSegmentsSameKeyRaisesSettledFloor: the first claim of a ledger,
// eu on value 0 (registry A, whose store served "orders" before sites up
// to 10), fixes the floor at 11. A second claim of eu on value 0 (registry
// B, a copied configuration, whose store served "orders" up to 50) read
// the value free before A's ledger write; its checkSegments runs while A
// is in segments() (after A computed its record's floor 11): it has the
// same segments key (eu/0), so pastFrom lets it raise SegmentsFrom to 51.
// B is then refused (the value is A's), and A settles with its record at
// 11 and the ledger's SegmentsFrom at 51. Site us then claims with B's
// store (its IDs up to 50 were issued before sites): pastFrom compares 51
// with 51 and lets it in — but eu issues "orders" from 12 in its class,
// IDs B's store issued before sites.
func TestSiteSegmentsSameKeyRaisesSettledFloor(t *testing.T) {
	ctx := context.Background()
	l := siteLedger(t)
	before := map[int64]string{}
	sa, sb := segmenttest.NewMemStore(), segmenttest.NewMemStore()
	for _, s := range []struct {
		st   *segmenttest.MemStore
		step int64
	}{{sa, 10}, {sb, 50}} {
		if err := s.st.CreateTag(ctx, "orders", 1, s.step, ""); err != nil {
			t.Fatal(err)
		}
		r, err := s.st.Reserve(ctx, "orders", s.step)
		if err != nil {
			t.Fatal(err)
		}
		if s.st == sb {
			for id := r.Start; id < r.End; id += r.Delta {
				before[id] = "B's store before sites"
			}
		}
	}
	eu, us := siteSite("eu", 0), siteSite("us", 1)
	bAtCheck, aAtReclass, bDone := make(chan struct{}), make(chan struct{}), make(chan struct{})
	hb := &tagsHook{MemStore: sb, fn: func() { close(bAtCheck); <-aAtReclass }}
	ha := &reclassHook{MemStore: sa, fn: func() { close(aAtReclass); <-bDone }}
	regA := site.Registry{Store: siteStore("pg-a"), Where: "a", Segments: []segment.Store{ha}}
	regB := site.Registry{Store: siteStore("pg-b"), Where: "b", Segments: []segment.Store{hb}}
	var bErr error
	go func() {
		defer close(bDone)
		_, bErr = l.ClaimSite(ctx, regB, eu, siteLayout)
	}()
	<-bAtCheck
	resA, aErr := l.ClaimSite(ctx, regA, eu, siteLayout)
	<-bDone
	t.Logf("A's claim: %v (segments from %d); B's claim: %v", aErr, resA.Record.Segments, bErr)
	if aErr != nil {
		t.Fatalf("A's claim: %v", aErr)
	}
	// Site us serves B's store: its rows served before sites.
	regUS := site.Registry{Store: siteStore("pg-us"), Where: "us", Segments: []segment.Store{sb}}
	_, usErr := l.ClaimSite(ctx, regUS, us, siteLayout)
	t.Logf("us's claim with B's store: %v", usErr)
	if usErr != nil {
		return // refused: what B's store issued cannot collide with a site
	}
	m, rec := segsOf(t, regA.Store, eu, sa)
	t.Logf("eu's segment floor: %d", rec.Segments)
	draw(t, m, "orders", "eu", 3, before)
}

// TestSiteSegmentsAbandonedFirstClaimWedgesLedger: the first claim of a
// ledger, west on value 0, fixes the segment floor (segmentsKey west/0)
// in checkSegments, before its first write. Before its ledger write, a
// standby of site north takes value 0 (Standby reads no floor): west's
// ledger write fails. West's claim can never run again (value 0 is
// north's), so the floor is never settled, and every other claim of the
// ledger — us on value 1, with no segment store at all — is refused
// ("has not finished") for good, as is north's promotion onto value 0,
// after it wrote its pending record (which ends the registry's leases).
func TestSiteSegmentsAbandonedFirstClaimWedgesLedger(t *testing.T) {
	ctx := context.Background()
	l := siteLedger(t)
	west, north0, us := siteSite("west", 0), siteSite("north", 0), siteSite("us", 1)
	var standbyErr error
	regW := site.Registry{Store: &rerecordHook{MemStore: siteStore("pg-w"), fn: func(ctx context.Context) {
		standbyErr = l.Standby(ctx, north0)
	}}, Where: "w", Segments: []segment.Store{segmenttest.NewMemStore()}}
	_, wErr := l.ClaimSite(ctx, regW, west, siteLayout)
	t.Logf("north's standby: %v; west's claim: %v", standbyErr, wErr)
	if wErr == nil {
		t.Skip("west's claim finished: the floor settled")
	}
	if _, err := l.ClaimSite(ctx, regW, west, siteLayout); err == nil {
		t.Skip("west's claim finished on a re-run")
	} else {
		t.Logf("west's re-run: %v", err)
	}
	regUS := site.Registry{Store: siteStore("pg-us"), Where: "us"}
	if _, err := l.ClaimSite(ctx, regUS, us, siteLayout); err != nil {
		t.Fatalf("us's claim (no segment stores), once west's claim was refused and cannot run again: %v", err)
	}
}

// setStepFails is a segment store whose first SetStep fails (the
// database went away between Adopt's two writes).
type setStepFails struct {
	*segmenttest.MemStore
	once sync.Once
}

func (s *setStepFails) SetStep(ctx context.Context, tag string, step int64) error {
	var err error
	s.once.Do(func() { err = errors.New("connection reset") })
	if err != nil {
		return err
	}
	return s.MemStore.SetStep(ctx, tag, step)
}

// TestSiteSegmentsStepKeptAfterFailedSetStep: a claim's Adopt moves
// "orders" (step 10, served before sites) into eu's class, then its
// SetStep fails; the claim fails and is run again. The re-run finds the
// row in eu's class above the floor and adopts nothing: the step stays
// 10, five IDs per range of delta 2 instead of the ten the docs promise
// (and a step below the delta, one ID per range).
func TestSiteSegmentsStepKeptAfterFailedSetStep(t *testing.T) {
	ctx := context.Background()
	l := siteLedger(t)
	segs := &setStepFails{MemStore: segmenttest.NewMemStore()}
	if err := segs.CreateTag(ctx, "orders", 1, 10, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := segs.Reserve(ctx, "orders", 10); err != nil {
		t.Fatal(err)
	}
	eu := siteSite("eu", 0)
	reg := site.Registry{Store: siteStore("pg-eu"), Where: "eu", Segments: []segment.Store{segs}}
	_, err := l.ClaimSite(ctx, reg, eu, siteLayout)
	t.Logf("eu's claim: %v", err)
	if _, err := l.ClaimSite(ctx, reg, eu, siteLayout); err != nil {
		t.Fatalf("eu's claim, run again: %v", err)
	}
	info, err := segs.Tag(ctx, "orders")
	if err != nil {
		t.Fatal(err)
	}
	if info.Step != 10*info.Delta {
		t.Fatalf("orders after the claim's re-run: %+v; want step %d (its 10 IDs per range)", info, 10*info.Delta)
	}
}
