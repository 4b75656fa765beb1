// Package nodeidtest holds the conformance suite every nodeid.Store
// passes, and an in-memory store for tests of code that uses one.
package nodeidtest

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/firn-id/firn/nodeid"
)

// Options tunes the suite to a store.
type Options struct {
	// TTL for claims that the suite lets expire: the store's minimum
	// lease (etcd: about 2 s). Default 1 s.
	TTL time.Duration
	// NoExpiry skips the tests that need a lease to expire by time: a
	// store whose claims live as long as the process (localstore).
	NoExpiry bool
	// Unconfirmed, when set, is the store's error for a write whose
	// outcome is unknown (zkstore.ErrOutcomeUnknown: the claim's session
	// closed under it as the lease ended): a renewal it answers confirms
	// nothing, as ErrLeaseLost does.
	Unconfirmed error
}

// Layout is the layout identity the suite claims with.
var Layout = nodeid.LayoutID{Fingerprint: "v1:suite", Description: "suite: 41 time + 10 node + 12 sequence", Bits: "bits1:suite"}

// RunStoreTests runs the conformance suite. newStore returns an empty
// store in a namespace of its own; the suite calls it once per subtest.
func RunStoreTests(t *testing.T, newStore func(t *testing.T) nodeid.Store, opt Options) {
	if opt.TTL == 0 {
		opt.TTL = time.Second
	}
	long := time.Minute
	tests := []struct {
		name   string
		expiry bool
		run    func(t *testing.T, s nodeid.Store)
	}{
		{name: "claims the lowest free node", run: func(t *testing.T, s nodeid.Store) {
			a := mustClaim(t, s, anyNode(4, long))
			b := mustClaim(t, s, anyNode(4, long))
			if a.Node != 0 || b.Node != 1 {
				t.Fatalf("nodes %d, %d; want 0, 1", a.Node, b.Node)
			}
			if a.Token == "" || a.Token == b.Token {
				t.Fatalf("tokens %q, %q: want two distinct tokens", a.Token, b.Token)
			}
		}},
		{name: "a held node is a conflict", run: func(t *testing.T, s nodeid.Store) {
			mustClaim(t, s, oneNode(3, 8, long))
			_, err := s.Claim(ctx(t), oneNode(3, 8, long))
			var ce *nodeid.ConflictError
			if !errors.As(err, &ce) || ce.Node != 3 || !errors.Is(err, nodeid.ErrNodeHeld) {
				t.Fatalf("second claim of node 3: %v, want *ConflictError for node 3", err)
			}
		}},
		{name: "a full pool says how many are held", run: func(t *testing.T, s nodeid.Store) {
			req := anyNode(4, long)
			req.Reserved = []uint64{1}
			for range 3 {
				mustClaim(t, s, req)
			}
			_, err := s.Claim(ctx(t), req)
			var pf *nodeid.PoolFullError
			if !errors.As(err, &pf) || pf.Held != 3 || pf.Pool != 4 || pf.Reserved != 1 {
				t.Fatalf("claim from a full pool: %v, want *PoolFullError{Pool 4, Held 3, Reserved 1}", err)
			}
		}},
		{name: "reserved nodes are never handed out", run: func(t *testing.T, s nodeid.Store) {
			req := anyNode(8, long)
			req.Reserved = []uint64{0, 1, 5}
			var got []uint64
			for range 5 {
				got = append(got, mustClaim(t, s, req).Node)
			}
			want := []uint64{2, 3, 4, 6, 7}
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("claimed %v, want %v", got, want)
				}
			}
		}},
		{name: "renew raises the HWM and never lowers it", run: func(t *testing.T, s nodeid.Store) {
			c := mustClaim(t, s, anyNode(4, long))
			for _, step := range []struct{ give, want int64 }{{1000, 1000}, {500, 1000}, {2000, 2000}, {2000, 2000}} {
				got, err := s.Renew(ctx(t), c, step.give)
				if err != nil || got != step.want {
					t.Fatalf("Renew(%d) = %d, %v; want %d", step.give, got, err, step.want)
				}
			}
		}},
		{name: "a restart reuses the node and keeps its HWM", run: func(t *testing.T, s nodeid.Store) {
			a := mustClaim(t, s, anyNode(4, long))
			if _, err := s.Renew(ctx(t), a, 5000); err != nil {
				t.Fatal(err)
			}
			if err := s.Release(ctx(t), a); err != nil {
				t.Fatal(err)
			}
			b := mustClaim(t, s, anyNode(4, long))
			if b.Node != a.Node || b.HWM != 5000 {
				t.Fatalf("after release: node %d HWM %d; want node %d HWM 5000", b.Node, b.HWM, a.Node)
			}
			if b.Token == a.Token {
				t.Fatal("a new acquisition reused the old token")
			}
			if _, err := s.Renew(ctx(t), a, 9000); !errors.Is(err, nodeid.ErrLeaseLost) {
				t.Fatalf("renew with the released token: %v, want ErrLeaseLost", err)
			}
		}},
		{name: "a forged token cannot write", run: func(t *testing.T, s nodeid.Store) {
			c := mustClaim(t, s, anyNode(4, long))
			forged := c
			forged.Token = "not-the-token"
			if _, err := s.Renew(ctx(t), forged, 1<<40); !errors.Is(err, nodeid.ErrLeaseLost) {
				t.Fatalf("renew with a forged token: %v, want ErrLeaseLost", err)
			}
			if err := s.Release(ctx(t), forged); err != nil {
				t.Fatalf("release with a forged token: %v", err)
			}
			if _, err := s.Claim(ctx(t), oneNode(c.Node, 4, long)); !errors.Is(err, nodeid.ErrNodeHeld) {
				t.Fatalf("a forged release freed the node: claim = %v", err)
			}
		}},
		{name: "another layout is refused", run: func(t *testing.T, s nodeid.Store) {
			mustClaim(t, s, anyNode(4, long))
			req := anyNode(4, long)
			req.Layout = nodeid.LayoutID{Fingerprint: "v1:other", Description: "other"}
			_, err := s.Claim(ctx(t), req)
			var lm *nodeid.LayoutMismatchError
			if !errors.As(err, &lm) || lm.Stored != Layout.Description {
				t.Fatalf("claim with another layout: %v, want *LayoutMismatchError naming %q", err, Layout.Description)
			}
		}},
		{name: "advance raises and never lowers", run: func(t *testing.T, s nodeid.Store) {
			mustRelease(t, s, mustClaim(t, s, oneNode(0, 4, long))) // records the layout
			for _, step := range []struct{ give, want int64 }{{7000, 7000}, {3000, 7000}} {
				got, err := s.Advance(ctx(t), nodeid.AdvanceRequest{Node: 2, HWM: step.give})
				if err != nil || got != step.want {
					t.Fatalf("Advance(2, %d) = %d, %v; want %d", step.give, got, err, step.want)
				}
			}
			if c := mustClaim(t, s, oneNode(2, 4, long)); c.HWM != 7000 {
				t.Fatalf("claim after advance: HWM %d, want 7000", c.HWM)
			}
		}},
		{name: "16 goroutines race for a pool of 4", run: func(t *testing.T, s nodeid.Store) {
			var mu sync.Mutex
			got := map[uint64]int{}
			full := 0
			var wg sync.WaitGroup
			for range 16 {
				wg.Go(func() {
					c, err := s.Claim(ctx(t), anyNode(4, long))
					mu.Lock()
					defer mu.Unlock()
					switch {
					case err == nil:
						got[c.Node]++
					case errors.Is(err, nodeid.ErrPoolFull):
						full++
					default:
						t.Errorf("claim: %v", err)
					}
				})
			}
			wg.Wait()
			if len(got) != 4 || full != 12 {
				t.Fatalf("claims %v, %d pool-full errors; want nodes 0..3 once each and 12 errors", got, full)
			}
			for n, k := range got {
				if k != 1 {
					t.Fatalf("node %d claimed %d times", n, k)
				}
			}
		}},
		{name: "48 goroutines race for a pool of 64: each takes its own node", run: func(t *testing.T, s nodeid.Store) {
			var mu sync.Mutex
			got := map[uint64]int{}
			var wg sync.WaitGroup
			for range 48 {
				wg.Go(func() {
					c, err := s.Claim(ctx(t), anyNode(64, long))
					mu.Lock()
					defer mu.Unlock()
					if err != nil {
						t.Errorf("claim with nodes free: %v", err)
						return
					}
					got[c.Node]++
				})
			}
			wg.Wait()
			for n, k := range got {
				if k != 1 || n >= 64 {
					t.Fatalf("node %d claimed %d times (pool 64)", n, k)
				}
			}
			if len(got) != 48 {
				t.Fatalf("%d nodes taken by 48 claims", len(got))
			}
		}},
		{name: "an expired lease is taken over past its HWM", expiry: true, run: func(t *testing.T, s nodeid.Store) {
			old := mustClaim(t, s, oneNode(1, 4, opt.TTL))
			if _, err := s.Renew(ctx(t), old, 4000); err != nil {
				t.Fatal(err)
			}
			time.Sleep(opt.TTL + opt.TTL/2)
			if _, err := s.Renew(ctx(t), old, 6000); !errors.Is(err, nodeid.ErrLeaseLost) {
				t.Fatalf("renew after expiry: %v, want ErrLeaseLost", err)
			}
			next := mustClaim(t, s, anyNode(2, long))
			if next.Node != 0 {
				t.Fatalf("claimed node %d, want 0", next.Node)
			}
			taken := mustClaim(t, s, oneNode(1, 4, long))
			if taken.HWM != 4000 {
				t.Fatalf("takeover HWM %d, want the old owner's 4000", taken.HWM)
			}
			if err := s.Release(ctx(t), old); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Claim(ctx(t), oneNode(1, 4, long)); !errors.Is(err, nodeid.ErrNodeHeld) {
				t.Fatalf("the old owner's release freed the new owner's node: %v", err)
			}
		}},
		{name: "advance passes an expired lease", expiry: true, run: func(t *testing.T, s nodeid.Store) {
			mustClaim(t, s, oneNode(1, 4, opt.TTL))
			time.Sleep(opt.TTL + opt.TTL/2)
			if got, err := s.Advance(ctx(t), nodeid.AdvanceRequest{Node: 1, HWM: 7000, Layout: Layout}); err != nil || got != 7000 {
				t.Fatalf("Advance past an expired lease = %d, %v; want 7000", got, err)
			}
		}},
		{name: "an extension racing a takeover", expiry: true, run: func(t *testing.T, s nodeid.Store) {
			raceExtensionAndClaim(t, s, opt.TTL, opt.Unconfirmed)
		}},
	}
	for _, tt := range tests {
		if tt.expiry && opt.NoExpiry {
			continue
		}
		t.Run(tt.name, func(t *testing.T) { tt.run(t, newStore(t)) })
	}
	t.Run("advance", func(t *testing.T) { runAdvanceTests(t, newStore) })
	t.Run("advance refuses a node outside the layout", func(t *testing.T) { runAdvanceRangeTests(t, newStore) })
	runLeaseTests(t, newStore)
}

// runAdvanceTests checks what Advance refuses: a node a live lease holds,
// whose holder keeps issuing below any new HWM, and an HWM computed with
// a layout other than the namespace's, and a namespace never used.
func runAdvanceTests(t *testing.T, newStore func(t *testing.T) nodeid.Store) {
	const node, before, target = 2, 1000, 7000
	other := nodeid.LayoutID{Fingerprint: "v1:other", Description: "other"}
	tests := []struct {
		name     string
		recorded bool            // a claim recorded Layout and HWM before first
		held     bool            // and still holds the node during the advance
		layout   nodeid.LayoutID // the request's
		wantErr  error           // nodeid.ErrNodeHeld, ErrLayoutMismatch or ErrUnknownNamespace
	}{
		{name: "a held node is a conflict until released", recorded: true, held: true, layout: Layout, wantErr: nodeid.ErrNodeHeld},
		{name: "a held node is a conflict with no layout given", recorded: true, held: true, wantErr: nodeid.ErrNodeHeld},
		{name: "the recorded layout is accepted", recorded: true, layout: Layout},
		{name: "another layout is refused", recorded: true, layout: other, wantErr: nodeid.ErrLayoutMismatch},
		{name: "an empty layout is accepted", recorded: true},
		{name: "a namespace never used is refused", wantErr: nodeid.ErrUnknownNamespace},
		{name: "a namespace never used is refused whatever the layout", layout: other, wantErr: nodeid.ErrUnknownNamespace},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newStore(t)
			start := int64(0)
			var holder nodeid.Claim
			if tt.recorded {
				holder = mustClaim(t, s, oneNode(node, 4, time.Minute))
				start = mustRenew(t, s, holder, before)
				if !tt.held {
					mustRelease(t, s, holder)
				}
			}
			req := nodeid.AdvanceRequest{Node: node, HWM: target, Layout: tt.layout}
			if tt.layout == Layout {
				req.Pool = 4
			}
			got, err := s.Advance(ctx(t), req)
			checkAdvanceErr(t, err, tt.wantErr, node)
			if err == nil && got != target {
				t.Fatalf("Advance = %d, want %d", got, target)
			}
			want := int64(target)
			if err != nil {
				want = start
			}
			if tt.held {
				if hwm := mustRenew(t, s, holder, 0); hwm != before {
					t.Fatalf("the holder's HWM is %d after a refused advance, want %d", hwm, before)
				}
				mustRelease(t, s, holder)
				if got, err := s.Advance(ctx(t), req); err != nil || got != target {
					t.Fatalf("Advance after the holder released = %d, %v; want %d", got, err, target)
				}
				want = target
			}
			// A claim with Layout succeeds: Advance records no layout.
			if c := mustClaim(t, s, oneNode(node, 4, time.Minute)); c.HWM != want {
				t.Fatalf("claim after the advance: HWM %d, want %d", c.HWM, want)
			}
		})
	}
}

// runAdvanceRangeTests checks that Advance refuses, and writes nothing
// for, a node outside the recorded layout's pool.
func runAdvanceRangeTests(t *testing.T, newStore func(t *testing.T) nodeid.Store) {
	s := newStore(t)
	mustRelease(t, s, mustClaim(t, s, oneNode(0, 4, time.Minute)))
	for _, node := range []uint64{4, 5000} {
		_, err := s.Advance(ctx(t), nodeid.AdvanceRequest{Node: node, HWM: 7000, Layout: Layout, Pool: 4})
		var re *nodeid.NodeRangeError
		if !errors.As(err, &re) || re.Node != node || re.Pool != 4 || !errors.Is(err, nodeid.ErrNodeOutOfRange) {
			t.Fatalf("Advance of node %d in a pool of 4: %v, want *NodeRangeError", node, err)
		}
	}
	if got, err := s.Advance(ctx(t), nodeid.AdvanceRequest{Node: 3, HWM: 7000, Layout: Layout, Pool: 4}); err != nil || got != 7000 {
		t.Fatalf("Advance of node 3 in a pool of 4 = %d, %v; want 7000", got, err)
	}
}

// checkAdvanceErr wants err to be nil, a *nodeid.ConflictError for node,
// or a *nodeid.LayoutMismatchError naming Layout, as want (nil,
// ErrNodeHeld or ErrLayoutMismatch) says.
func checkAdvanceErr(t *testing.T, err, want error, node uint64) {
	t.Helper()
	var ce *nodeid.ConflictError
	var lm *nodeid.LayoutMismatchError
	switch want {
	case nil:
		if err != nil {
			t.Fatalf("Advance: %v, want success", err)
		}
	case nodeid.ErrNodeHeld:
		if !errors.As(err, &ce) || ce.Node != node || !errors.Is(err, nodeid.ErrNodeHeld) {
			t.Fatalf("Advance of a held node: %v, want *ConflictError for node %d", err, node)
		}
	case nodeid.ErrUnknownNamespace:
		var un *nodeid.UnknownNamespaceError
		if !errors.As(err, &un) || !errors.Is(err, nodeid.ErrUnknownNamespace) {
			t.Fatalf("Advance in a namespace never used: %v, want *UnknownNamespaceError", err)
		}
	case nodeid.ErrLayoutMismatch:
		if !errors.As(err, &lm) || lm.Stored != Layout.Description || !errors.Is(err, nodeid.ErrLayoutMismatch) {
			t.Fatalf("Advance with another layout: %v, want *LayoutMismatchError naming %q", err, Layout.Description)
		}
	}
}

// raceExtensionAndClaim has an owner hammer extensions of its HWM across
// the instant its lease expires while a second owner hammers claims of the
// node. Whichever wins, every HWM the store confirmed to the old owner
// must be at or below the HWM the new owner starts from.
func raceExtensionAndClaim(t *testing.T, s nodeid.Store, ttl time.Duration, unconfirmed error) {
	const margin = 30 * time.Millisecond
	old := mustClaim(t, s, oneNode(0, 1, ttl))
	confirmed, err := s.Renew(ctx(t), old, 1000)
	if err != nil {
		t.Fatal(err)
	}
	expiry := time.Now().Add(ttl)
	done := make(chan struct{})
	go func() {
		defer close(done)
		time.Sleep(time.Until(expiry.Add(-margin)))
		for hwm := int64(2); time.Now().Before(expiry.Add(margin)); hwm++ {
			got, err := s.Renew(context.Background(), old, hwm*1000)
			if err != nil {
				if !errors.Is(err, nodeid.ErrLeaseLost) && (unconfirmed == nil || !errors.Is(err, unconfirmed)) {
					t.Errorf("renew: %v", err)
				}
				return
			}
			confirmed = got
		}
	}()
	time.Sleep(time.Until(expiry.Add(-margin)))
	var taken nodeid.Claim
	for {
		c, err := s.Claim(context.Background(), oneNode(0, 1, time.Minute))
		if err == nil {
			taken = c
			break
		}
		if !errors.Is(err, nodeid.ErrNodeHeld) {
			t.Fatalf("claim: %v", err)
		}
		if time.Since(expiry) > 5*ttl {
			t.Fatal("the node was never taken over")
		}
		time.Sleep(time.Millisecond)
	}
	<-done
	if confirmed > taken.HWM {
		t.Fatalf("old owner was confirmed HWM %d, new owner starts at %d", confirmed, taken.HWM)
	}
}

func anyNode(pool uint64, ttl time.Duration) nodeid.ClaimRequest {
	return nodeid.ClaimRequest{AnyNode: true, Pool: pool, Layout: Layout, TTL: ttl}
}

func oneNode(node, pool uint64, ttl time.Duration) nodeid.ClaimRequest {
	return nodeid.ClaimRequest{Node: node, Pool: pool, Layout: Layout, TTL: ttl}
}

func mustClaim(t *testing.T, s nodeid.Store, req nodeid.ClaimRequest) nodeid.Claim {
	t.Helper()
	c, err := s.Claim(ctx(t), req)
	if err != nil {
		t.Fatalf("claim: %v", err)
	}
	return c
}

func mustRenew(t *testing.T, s nodeid.Store, c nodeid.Claim, hwm int64) int64 {
	t.Helper()
	got, err := s.Renew(ctx(t), c, hwm)
	if err != nil {
		t.Fatalf("renew: %v", err)
	}
	return got
}

func mustRelease(t *testing.T, s nodeid.Store, c nodeid.Claim) {
	t.Helper()
	if err := s.Release(ctx(t), c); err != nil {
		t.Fatalf("release: %v", err)
	}
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return c
}
