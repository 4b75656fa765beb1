package nodeidtest

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/firn-id/firn/nodeid"
)

// RunRecorderTests runs the conformance suite of nodeid.Recorder: the
// namespace record that sites and ledgers rest on, and the claims of a
// site's nodes. newStore returns an empty store in a namespace of its
// own.
func RunRecorderTests(t *testing.T, newStore func(t *testing.T) nodeid.Recorder) {
	long := time.Minute
	site := LayoutID2()
	tests := []struct {
		name string
		run  func(t *testing.T, s nodeid.Recorder)
	}{
		{name: "the first claim's layout is the record", run: func(t *testing.T, s nodeid.Recorder) {
			if id, err := s.Record(ctx(t)); err != nil || id.Fingerprint != "" {
				t.Fatalf("Record of a new namespace = %+v, %v; want none", id, err)
			}
			mustClaim(t, s, anyNode(4, long))
			id, err := s.Record(ctx(t))
			if err != nil || id.Fingerprint != Layout.Fingerprint || id.Description != Layout.Description {
				t.Fatalf("Record = %+v, %v; want %+v", id, err, Layout)
			}
		}},
		{name: "a rerecord compares the whole old record", run: func(t *testing.T, s nodeid.Recorder) {
			if err := s.Rerecord(ctx(t), nodeid.LayoutID{}, site); err != nil {
				t.Fatalf("Rerecord of a new namespace: %v", err)
			}
			var rc *nodeid.RecordChangedError
			if err := s.Rerecord(ctx(t), nodeid.LayoutID{}, Layout); !errors.As(err, &rc) || rc.Stored.Description != site.Description {
				t.Fatalf("second Rerecord from none: %v; want *RecordChangedError naming the record", err)
			}
			stale := nodeid.LayoutID{Fingerprint: site.Fingerprint, Description: site.Description + " (older)"}
			if err := s.Rerecord(ctx(t), stale, Layout); !errors.As(err, &rc) {
				t.Fatalf("Rerecord from a record with another description: %v; want *RecordChangedError", err)
			}
			if id, _ := s.Record(ctx(t)); id.Description != site.Description {
				t.Fatalf("record after refused rerecords = %+v; want %+v", id, site)
			}
		}},
		{name: "a rerecord ends every lease at once", run: func(t *testing.T, s nodeid.Recorder) {
			a := mustClaim(t, s, anyNode(4, long))
			b := mustClaim(t, s, anyNode(4, long))
			if _, err := s.Renew(ctx(t), a, 1000); err != nil {
				t.Fatalf("renew before: %v", err)
			}
			if err := s.Rerecord(ctx(t), Layout, site); err != nil {
				t.Fatalf("Rerecord: %v", err)
			}
			for _, c := range []nodeid.Claim{a, b} {
				if _, err := s.Renew(ctx(t), c, 5000); !errors.Is(err, nodeid.ErrLeaseLost) {
					t.Fatalf("renew of node %d after a rerecord: %v; want ErrLeaseLost", c.Node, err)
				}
			}
			if _, err := s.Claim(ctx(t), anyNode(4, long)); !errors.Is(err, nodeid.ErrLayoutMismatch) {
				t.Fatalf("claim under the old record: %v; want ErrLayoutMismatch", err)
			}
			hwms, err := s.HWMs(ctx(t))
			if err != nil || hwms[a.Node] != 1000 {
				t.Fatalf("HWMs = %v, %v; want node %d at 1000", hwms, err, a.Node)
			}
		}},
		{name: "renewals racing a rerecord never raise an HWM after it", run: func(t *testing.T, s nodeid.Recorder) {
			var claims []nodeid.Claim
			for range 3 {
				claims = append(claims, mustClaim(t, s, anyNode(4, long)))
			}
			var (
				wg        sync.WaitGroup
				after     atomic.Bool
				mu        sync.Mutex
				confirmed = map[uint64]int64{}
				late      []int64
			)
			for _, c := range claims {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for h := int64(1); ; h++ {
						sentAfter := after.Load()
						got, err := s.Renew(ctx(t), c, h)
						if err != nil {
							return
						}
						mu.Lock()
						confirmed[c.Node] = max(confirmed[c.Node], got)
						if sentAfter {
							late = append(late, got)
						}
						mu.Unlock()
						if sentAfter {
							return
						}
					}
				}()
			}
			time.Sleep(50 * time.Millisecond)
			if err := s.Rerecord(ctx(t), Layout, site); err != nil {
				t.Fatalf("Rerecord: %v", err)
			}
			after.Store(true)
			floor, err := s.HWMs(ctx(t))
			if err != nil {
				t.Fatal(err)
			}
			wg.Wait()
			mu.Lock()
			defer mu.Unlock()
			if len(late) > 0 {
				t.Fatalf("%d renewals sent after the rerecord succeeded (HWMs %v)", len(late), late)
			}
			again, _ := s.HWMs(ctx(t))
			for _, c := range claims {
				if confirmed[c.Node] > floor[c.Node] || again[c.Node] != floor[c.Node] {
					t.Fatalf("node %d: confirmed %d, HWM read after the rerecord %d, later %d: an HWM rose after it",
						c.Node, confirmed[c.Node], floor[c.Node], again[c.Node])
				}
			}
		}},
		{name: "a site's claims take only its nodes", run: func(t *testing.T, s nodeid.Recorder) {
			req := anyNode(16, long)
			req.First = 8
			for want := uint64(8); want < 16; want++ {
				if c := mustClaim(t, s, req); c.Node != want {
					t.Fatalf("claim = node %d; want %d", c.Node, want)
				}
			}
			var pf *nodeid.PoolFullError
			if _, err := s.Claim(ctx(t), req); !errors.As(err, &pf) || pf.Pool != 8 || pf.Held != 8 {
				t.Fatalf("claim of a full site: %v; want *PoolFullError, 8 of 8 held", err)
			}
			if c, err := s.Claim(ctx(t), anyNode(16, long)); err != nil || c.Node != 0 {
				t.Fatalf("claim of the whole pool = %+v, %v; want node 0", c, err)
			}
		}},
		{name: "the identity is stable", run: func(t *testing.T, s nodeid.Recorder) {
			a, err := s.Identity(ctx(t))
			if err != nil {
				t.Fatal(err)
			}
			if b, _ := s.Identity(ctx(t)); a != b {
				t.Fatalf("Identity = %q, then %q", a, b)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, newStore(t)) })
	}
}

// LayoutID2 is a second record, such as a site's, for rerecord tests.
func LayoutID2() nodeid.LayoutID {
	return nodeid.LayoutID{Fingerprint: "s1:suite", Description: "suite; site \"a\" (dc=1)", Bits: Layout.Bits}
}
