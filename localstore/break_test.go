package localstore_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/firn-id/firn/localstore"
	"github.com/firn-id/firn/nodeid"
)

// TestUnlinkedNodeLockLosesTheLease: directory A holds node 0 and has
// confirmed HWM h1; its node-0.lock is deleted (an operator clearing a
// "stale" lock file), so directory B creates a new file and locks it:
// B holds node 0 too, from h1. A's next extension must not be confirmed,
// or A issues ticks in [h1, h2) that B issues as well.
func TestUnlinkedNodeLockLosesTheLease(t *testing.T) {
	ctx := context.Background()
	a, b := twoDirs(t)
	ca := claim(t, a, oneNode(0))
	const h1, h2 = 1_700_000_000_000, 1_700_000_005_000
	if got, err := a.Renew(ctx, ca, h1); err != nil || got != h1 {
		t.Fatalf("renew: %d, %v", got, err)
	}
	if err := os.Remove(nodeLock(t, a, 0)); err != nil {
		t.Fatal(err)
	}
	cb, err := b.Claim(ctx, oneNode(0))
	if err != nil {
		return // refusing B is safe too
	}
	if cb.HWM < h1 {
		t.Fatalf("B's claim starts at %d, below A's confirmed %d", cb.HWM, h1)
	}
	got, err := a.Renew(ctx, ca, h2)
	if err == nil && got > cb.HWM {
		t.Fatalf("A's lock file was replaced and B holds node 0 from %d, yet A's renewal confirmed %d: both issue [%d, %d)", cb.HWM, got, cb.HWM, got)
	}
	if err != nil && !errors.Is(err, nodeid.ErrLeaseLost) {
		t.Fatalf("A's renewal after its lock file was replaced: %v; want ErrLeaseLost", err)
	}
}

// TestCorruptHWMFilesAreRefused: an empty, torn or garbage HWM file in
// either place refuses the claim rather than reading 0.
func TestCorruptHWMFilesAreRefused(t *testing.T) {
	for _, body := range []string{"", "\n", "17000000", "garbage\n", "1700000000000x"} {
		for _, where := range []string{"shared", "own"} {
			dir, nodes := t.TempDir(), t.TempDir()
			writeHWM(t, filepath.Join(nodes, "node-0.hwm"), 9000)
			writeHWM(t, filepath.Join(dir, "nodes", "0.hwm"), 9000)
			p := filepath.Join(nodes, "node-0.hwm")
			if where == "own" {
				p = filepath.Join(dir, "nodes", "0.hwm")
			}
			if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
				t.Fatal(err)
			}
			s := openConfig(t, localstore.Config{Dir: dir, NodeDir: nodes})
			c, err := s.Claim(context.Background(), oneNode(0))
			if err == nil && c.HWM < 9000 {
				t.Errorf("%s HWM %q: claim starts at %d, below 9000", where, body, c.HWM)
			}
		}
	}
}

// TestUnlinkedNodeLockIsNotKept: A's claim of node 0 expired unreleased
// (it keeps the lock); the lock file is removed and B locks a new one.
// A's next claim of node 0 must not reuse its lock on the removed file.
func TestUnlinkedNodeLockIsNotKept(t *testing.T) {
	ctx := context.Background()
	a, b := twoDirs(t)
	req := oneNode(0)
	req.TTL = time.Millisecond
	claim(t, a, req)
	time.Sleep(5 * time.Millisecond)
	if err := os.Remove(nodeLock(t, a, 0)); err != nil {
		t.Fatal(err)
	}
	claim(t, b, oneNode(0))
	if c, err := a.Claim(ctx, oneNode(0)); !errors.Is(err, nodeid.ErrNodeHeld) {
		t.Fatalf("A's claim of node 0 while B holds the new lock file: %+v, %v; want ErrNodeHeld", c, err)
	}
	if _, err := a.Advance(ctx, nodeid.AdvanceRequest{Node: 0, HWM: 1 << 41}); !errors.Is(err, nodeid.ErrNodeHeld) {
		t.Fatalf("A's advance of node 0 while B holds the new lock file: %v; want ErrNodeHeld", err)
	}
}
