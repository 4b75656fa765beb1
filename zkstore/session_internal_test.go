package zkstore

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/firn-id/firn/internal/faultproxy"
	"github.com/firn-id/firn/internal/testserver"
	"github.com/firn-id/firn/nodeid"
)

// TestReplacedSession: a paused owner's session expires and its
// client opens a new one on its own. Before anyone takes the node, its
// extension finds no held/N of its session and is refused; after a
// takeover, releasing the old claim leaves the new owner's held/N and
// owner/N alone.
func TestReplacedSession(t *testing.T) {
	zks := testserver.ZooKeeper(t)
	ctx := testCtx(t)
	ns := testNamespace()
	proxy := faultproxy.New(t, zks.Servers()[0])
	old := mustNew(t, []string{proxy.Addr()}, ns)
	next := mustNew(t, zks.Servers(), ns)
	sess, err := old.open(ctx, 2*testserver.ZooKeeperTick)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sess.conn.Close)
	version, err := old.prepare(ctx, sess.conn, layout)
	if err != nil {
		t.Fatal(err)
	}
	paused, held, err := old.tryNode(ctx, sess, 0, "paused-owner", time.Second, version)
	if err != nil || held {
		t.Fatalf("claim: held %v, %v", held, err)
	}
	if _, err := old.extend(ctx, paused, 1000); err != nil {
		t.Fatal(err)
	}
	proxy.Cut()
	time.Sleep(4 * testserver.ZooKeeperTick) // past the session timeout
	proxy.Restore()
	for paused.conn.SessionID() == paused.id || paused.conn.State() != zk.StateHasSession {
		if ctx.Err() != nil {
			t.Fatal("no new session")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if got, err := old.extend(ctx, paused, 5000); !errors.Is(err, nodeid.ErrLeaseLost) {
		t.Fatalf("extension on the replaced session, nobody else holding = %d, %v; want ErrLeaseLost", got, err)
	}
	taken, err := next.Claim(ctx, nodeid.ClaimRequest{Node: 0, Pool: 1, Layout: layout, TTL: time.Minute})
	if err != nil || taken.HWM != 1000 {
		t.Fatalf("takeover = HWM %d, %v; want 1000", taken.HWM, err)
	}
	old.mu.Lock()
	old.claims[paused.token] = paused
	old.mu.Unlock()
	if err := old.Release(ctx, nodeid.Claim{Node: 0, Token: paused.token}); err != nil {
		t.Fatal(err)
	}
	if got, err := next.Renew(ctx, taken, 2000); err != nil || got != 2000 {
		t.Fatalf("new owner's renew after the old claim's release = %d, %v; want 2000", got, err)
	}
}

// TestEnsembleStaleOwner: a paused owner claims through member 0;
// its session expires and the node is taken over through member 2; its
// client then reconnects through member 1 alone and extends. Member 1
// may not have the takeover yet, but the extension is a write the leader
// checks: it is refused and the new owner's HWM stands.
func TestEnsembleStaleOwner(t *testing.T) {
	zks := testserver.ZooKeeperEnsemble(t, 3)
	m := zks.Members()
	ctx := testCtx(t)
	ns := testNamespace()
	p0, p1 := faultproxy.New(t, m[0].Addr), faultproxy.New(t, m[1].Addr)
	p1.Cut()
	old := mustNew(t, []string{p0.Addr(), p1.Addr()}, ns)
	next := mustNew(t, []string{m[2].Addr}, ns)
	sess, err := old.open(ctx, 2*testserver.ZooKeeperTick)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sess.conn.Close)
	version, err := old.prepare(ctx, sess.conn, layout)
	if err != nil {
		t.Fatal(err)
	}
	paused, held, err := old.tryNode(ctx, sess, 0, "paused-owner", time.Second, version)
	if err != nil || held {
		t.Fatalf("claim: held %v, %v", held, err)
	}
	if _, err := old.extend(ctx, paused, 1000); err != nil {
		t.Fatal(err)
	}
	p0.Cut()
	var taken nodeid.Claim
	for {
		taken, err = next.Claim(ctx, nodeid.ClaimRequest{Node: 0, Pool: 1, Layout: layout, TTL: time.Minute})
		if err == nil {
			break
		}
		if !errors.Is(err, nodeid.ErrNodeHeld) || ctx.Err() != nil {
			t.Fatalf("takeover: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if got, err := next.Renew(ctx, taken, 3000); err != nil || got != 3000 || taken.HWM != 1000 {
		t.Fatalf("takeover at %d, renew = %d, %v; want 1000, then 3000", taken.HWM, got, err)
	}
	p1.Restore()
	for paused.conn.State() != zk.StateHasSession {
		if ctx.Err() != nil {
			t.Fatal("the paused owner never reconnected")
		}
		time.Sleep(20 * time.Millisecond)
	}
	var got int64
	for {
		got, err = old.extend(ctx, paused, 5000)
		if err == nil || errors.Is(err, nodeid.ErrLeaseLost) || ctx.Err() != nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if !errors.Is(err, nodeid.ErrLeaseLost) {
		t.Fatalf("paused owner's extension through member 1 = %d, %v; want ErrLeaseLost", got, err)
	}
	if got, err := next.Renew(ctx, taken, 0); err != nil || got != 3000 {
		t.Fatalf("new owner's HWM after the refused extension = %d, %v; want 3000", got, err)
	}
}

// TestCloseWithClaimsInFlight closes the store while claims are on their way:
// once every call has returned, no node is held.
func TestCloseWithClaimsInFlight(t *testing.T) {
	zks := testserver.ZooKeeper(t)
	ns := testNamespace()
	s := mustNew(t, zks.Servers(), ns)
	if _, err := s.Claim(testCtx(t), nodeid.ClaimRequest{Node: 9, Pool: 16, Layout: layout, TTL: time.Minute}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for n := range uint64(6) {
		wg.Go(func() {
			_, err := s.Claim(testCtx(t), nodeid.ClaimRequest{Node: n, Pool: 16, Layout: layout, TTL: time.Minute})
			if err != nil && !errors.Is(err, nodeid.ErrClosed) {
				t.Logf("claim %d: %v", n, err)
			}
		})
	}
	time.Sleep(30 * time.Millisecond)
	s.Close()
	wg.Wait()
	conn, _, err := zk.Connect(zks.Servers(), 4*time.Second, zk.WithLogInfo(false))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.Sync(ns)
	kids, _, err := conn.Children(ns + "/held")
	if err != nil || len(kids) != 0 {
		t.Fatalf("held after Close and every claim returned: %v, %v; want none", kids, err)
	}
}
