package nodeidtest

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/firn-id/firn/nodeid"
)

// runLeaseTests runs nodeid.Acquire and Lease.Retire against the store:
// the availability rules that rest on each store's Claim, Release and
// Advance behaving alike.
func runLeaseTests(t *testing.T, newStore func(t *testing.T) nodeid.Store) {
	t.Run("a free node far ahead is passed over", func(t *testing.T) { skipNodesAhead(t, newStore(t)) })
	t.Run("a lost claim is released and its node claimed again at once", func(t *testing.T) { retireLostClaim(t, newStore(t)) })
}

// leaseConfig is a lease on a pool of 4 nodes with the suite's layout.
func leaseConfig(ttl time.Duration) nodeid.Config {
	return nodeid.Config{NodeBits: 2, Layout: Layout, TTL: ttl}
}

func mustAcquire(t *testing.T, s nodeid.Store, cfg nodeid.Config) *nodeid.Lease {
	t.Helper()
	l, err := nodeid.Acquire(ctx(t), s, cfg)
	if err != nil {
		t.Fatalf("Acquire: %v", err)
	}
	t.Cleanup(func() { _ = l.Close(context.Background()) })
	return l
}

// skipNodesAhead advances nodes 0 and 2 an hour past the clock: Acquire
// takes 1, then 3, naming the nodes it passed over, and with no other
// node free names both in an *AheadError, leaving them free.
func skipNodesAhead(t *testing.T, s nodeid.Store) {
	mustRelease(t, s, mustClaim(t, s, oneNode(0, 4, time.Minute))) // records the layout
	ahead := time.Now().Add(time.Hour).UnixMilli()
	for _, n := range []uint64{0, 2} {
		if _, err := s.Advance(ctx(t), nodeid.AdvanceRequest{Node: n, HWM: ahead, Layout: Layout, Pool: 4}); err != nil {
			t.Fatal(err)
		}
	}
	cfg := leaseConfig(time.Minute)
	for _, want := range []struct {
		node    uint64
		skipped []uint64
	}{{1, []uint64{0}}, {3, []uint64{0, 2}}} {
		l := mustAcquire(t, s, cfg)
		if l.Node() != want.node || !sameNodes(l.Skipped(), want.skipped) {
			t.Fatalf("Acquire took node %d passing over %v; want node %d passing over %v", l.Node(), nodesOf(l.Skipped()), want.node, want.skipped)
		}
		for _, cb := range l.Skipped() {
			if cb.HWM.UnixMilli() != ahead {
				t.Fatalf("node %d passed over with HWM %d, want the stored %d", cb.Node, cb.HWM.UnixMilli(), ahead)
			}
		}
	}
	_, err := nodeid.Acquire(ctx(t), s, cfg)
	var ae *nodeid.AheadError
	var cb *nodeid.BehindHWMError
	if !errors.As(err, &ae) || !sameNodes(ae.Nodes, []uint64{0, 2}) || ae.Held != 2 || ae.Pool != 4 || !errors.As(err, &cb) {
		t.Fatalf("Acquire with every free node ahead: %v, want an *AheadError naming nodes 0 and 2, 2 of 4 held", err)
	}
	for _, n := range []uint64{0, 2} {
		mustClaim(t, s, oneNode(n, 4, time.Minute)) // passed over, not kept
	}
}

func nodesOf(cbs []*nodeid.BehindHWMError) []uint64 {
	var ns []uint64
	for _, cb := range cbs {
		ns = append(ns, cb.Node)
	}
	return ns
}

func sameNodes(cbs []*nodeid.BehindHWMError, want []uint64) bool {
	got := nodesOf(cbs)
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if got[i] != want[i] {
			return false
		}
	}
	return true
}

// lostAnswers passes every call to the store, and while lose is set
// answers each renewal with an error although the store took it.
type lostAnswers struct {
	nodeid.Store
	lose atomic.Bool
}

func (s *lostAnswers) Renew(ctx context.Context, c nodeid.Claim, hwm int64) (int64, error) {
	stored, err := s.Store.Renew(ctx, c, hwm)
	if err == nil && s.lose.Load() {
		return 0, errors.New("answer lost")
	}
	return stored, err
}

// retireLostClaim loses every renewal's answer until the lease is
// declared lost, while the store keeps its claim alive. Retire releases
// the claim by its token; the node is then claimed at once, with a new
// token, past every HWM the old life wrote, and the old token writes no
// more.
func retireLostClaim(t *testing.T, store nodeid.Store) {
	const ttl = 3 * time.Second // the claim outlives the loss by about two of them
	s := &lostAnswers{Store: store}
	node := uint64(1)
	cfg := leaseConfig(ttl)
	cfg.Node = &node
	old := mustAcquire(t, s, cfg)
	s.lose.Store(true)
	<-old.Done()
	if !errors.Is(old.Err(), nodeid.ErrLeaseLost) {
		t.Fatalf("lease error %v, want ErrLeaseLost", old.Err())
	}
	s.lose.Store(false)
	_, err := store.Claim(ctx(t), oneNode(node, 4, ttl))
	if !errors.Is(err, nodeid.ErrNodeHeld) {
		t.Fatalf("claim beside the lost lease: %v, want ErrNodeHeld (the store still holds its claim)", err)
	}
	start := time.Now()
	if err := old.Retire(ctx(t)); err != nil {
		t.Fatalf("Retire: %v", err)
	}
	next, err := nodeid.Acquire(ctx(t), store, cfg)
	if err != nil {
		t.Fatalf("Acquire right after Retire: %v", err)
	}
	t.Logf("Retire and a new Acquire of the node took %s (the store held the old claim up to a %s TTL more)", time.Since(start).Round(time.Millisecond), ttl)
	t.Cleanup(func() { _ = next.Close(context.Background()) })
	if next.Token() == old.Token() {
		t.Fatal("the new acquisition reuses the lost lease's token")
	}
	if next.Start() < old.Limit() {
		t.Fatalf("new acquisition starts at %d, below the old limit %d", next.Start(), old.Limit())
	}
	claim := nodeid.Claim{Node: node, Token: old.Token(), TTL: ttl}
	if _, err := store.Renew(ctx(t), claim, next.Start()+time.Hour.Milliseconds()); !errors.Is(err, nodeid.ErrLeaseLost) {
		t.Fatalf("renewal with the retired token: %v, want ErrLeaseLost", err)
	}
}
