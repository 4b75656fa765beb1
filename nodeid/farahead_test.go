package nodeid_test

import (
	"errors"
	"testing"
	"time"

	"github.com/firn-id/firn/nodeid"
	"github.com/firn-id/firn/nodeid/nodeidtest"
)

// TestAcquirePassesOverANodeCenturiesAhead: a node whose HWM is 300
// years ahead (its first extension ran under a clock once set to 2326; a
// typo in firn admin advance) is passed over for a free node: how far
// behind the clock is must not wrap past 292 years of nanoseconds, or
// one such node blocks the pool.
func TestAcquirePassesOverANodeCenturiesAhead(t *testing.T) {
	l := bubbleLayout()
	store := nodeidtest.NewMemStore()
	store.SetHWM(0, time.Now().AddDate(300, 0, 0).UnixMilli())
	lease, err := nodeid.Acquire(t.Context(), store, config(l))
	var be *nodeid.BehindHWMError
	var ae *nodeid.AheadError
	switch {
	case errors.As(err, &ae) || errors.As(err, &be):
		t.Fatalf("unexpected refusal of the pool: %v", err)
	case err != nil:
		t.Fatal(err)
	}
	defer lease.Close(t.Context())
	if lease.Node() == 0 {
		t.Fatalf("took node 0, whose HWM is %s (300 years ahead), instead of passing over it; skipped %v",
			time.UnixMilli(lease.Start()).UTC().Format(time.RFC3339), lease.Skipped())
	}
}
