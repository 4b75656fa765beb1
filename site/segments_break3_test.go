package site_test

// Segments under sites, third break-it review: the claim that fixed the
// sites' segment floor (its site, value and registry), a first claim that
// can finish no more, a step kept in the write that moves a row.

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

func (h *reclassHook) Reclass(ctx context.Context, tag string, from segment.TagInfo, delta, remainder, next, step int64) error {
	h.once.Do(h.fn)
	return h.MemStore.Reclass(ctx, tag, from, delta, remainder, next, step)
}

// TestSiteSegmentsSameKeyRaisesSettledFloor: the first claim of a ledger,
// eu on value 0 (registry A, whose store served "orders" before sites up
// to 10), fixes the floor at 11. A second claim of eu on value 0 from
// another registry (B, a copied configuration, whose store served
// "orders" up to 50) is another claim of the floor (its key names its
// registry): it is refused while A's is unsettled, so the floor never
// rises under A's record, and a site claiming with B's store later is
// refused for IDs past the floor.
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
// ledger, west on value 0, fixes the segment floor before its first
// write; before its ledger write, a standby of site north takes value 0,
// so west's claim can finish no more. It settles the floor it fixed as
// it fails (no site recorded a floor below it), and the ledger's other
// claims are not refused for good.
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

// TestSiteSegmentsStepKeptAfterFailedSetStep: a claim moves "orders"
// (step 10, served before sites) into eu's class; the step that keeps its
// ten IDs per range is written in the same compare-and-set write as the
// class (Reclass), never in a second write that may fail after the first
// (a SetStep that fails here is never called).
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
