package zkstore

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/firn-id/firn/internal/testserver"
	"github.com/firn-id/firn/nodeid"
)

// loseNext makes the store's next Multi end with a lost connection: after
// the server took it (landed) or without sending it. Later Multis pass.
func loseNext(s *Store, landed bool) {
	var lost atomic.Bool
	s.multi = func(ctx context.Context, conn *zk.Conn, ops ...any) ([]zk.MultiResponse, error) {
		if lost.Swap(true) {
			return multi(ctx, conn, ops...)
		}
		if landed {
			if _, err := multi(ctx, conn, ops...); err != nil {
				return nil, err
			}
		}
		return nil, zk.ErrConnectionClosed
	}
}

// TestLostAnswers loses the answer of a claim's or an extension's Multi,
// after the write landed or before it was sent. The store reads back
// after a Sync and decides from what it finds, never from a guess: a
// landed claim holds the node with the HWM it checked; one that did not
// land is abandoned (its session closed) and leaves the node free; an
// extension is confirmed only once the stored HWM shows it.
func TestLostAnswers(t *testing.T) {
	zks := testserver.ZooKeeper(t)
	req := nodeid.ClaimRequest{Node: 0, Pool: 1, Layout: layout, TTL: time.Minute}
	prepared := func(t *testing.T) (*Store, *Store) {
		ns := testNamespace()
		s, other := mustNew(t, zks.Servers(), ns), mustNew(t, zks.Servers(), ns)
		if _, err := other.Advance(testCtx(t), nodeid.AdvanceRequest{Node: 0, HWM: 1}); !errors.Is(err, nodeid.ErrUnknownNamespace) {
			t.Fatalf("advance in a new namespace: %v", err)
		}
		c, err := other.Claim(testCtx(t), req) // records the layout
		if err != nil {
			t.Fatal(err)
		}
		if _, err := other.Renew(testCtx(t), c, 1000); err != nil {
			t.Fatal(err)
		}
		if err := other.Release(testCtx(t), c); err != nil {
			t.Fatal(err)
		}
		return s, other
	}

	t.Run("claim landed", func(t *testing.T) {
		s, other := prepared(t)
		loseNext(s, true)
		c, err := s.Claim(testCtx(t), req)
		if err != nil || c.HWM != 1000 {
			t.Fatalf("claim whose answer was lost after it landed = HWM %d, %v; want the claim, HWM 1000", c.HWM, err)
		}
		if _, err := other.Claim(testCtx(t), req); !errors.Is(err, nodeid.ErrNodeHeld) {
			t.Fatalf("second claim: %v, want ErrNodeHeld", err)
		}
		if got, err := s.Renew(testCtx(t), c, 2000); err != nil || got != 2000 {
			t.Fatalf("renew of the read-back claim = %d, %v; want 2000", got, err)
		}
	})
	t.Run("claim not sent", func(t *testing.T) {
		s, other := prepared(t)
		loseNext(s, false)
		if _, err := s.Claim(testCtx(t), req); !errors.Is(err, ErrOutcomeUnknown) {
			t.Fatalf("claim whose Multi was never sent: %v, want ErrOutcomeUnknown", err)
		}
		if c, err := other.Claim(testCtx(t), req); err != nil || c.HWM != 1000 {
			t.Fatalf("claim after the abandoned one = HWM %d, %v; want the node free, HWM 1000", c.HWM, err)
		}
	})
	for _, landed := range []bool{true, false} {
		name := map[bool]string{true: "extension landed", false: "extension not sent"}[landed]
		t.Run(name, func(t *testing.T) {
			s, other := prepared(t)
			c, err := s.Claim(testCtx(t), req)
			if err != nil {
				t.Fatal(err)
			}
			loseNext(s, landed)
			if got, err := s.Renew(testCtx(t), c, 3000); err != nil || got != 3000 {
				t.Fatalf("renew whose answer was lost = %d, %v; want 3000, confirmed by the read-back", got, err)
			}
			if err := s.Release(testCtx(t), c); err != nil {
				t.Fatal(err)
			}
			if next, err := other.Claim(testCtx(t), req); err != nil || next.HWM != 3000 {
				t.Fatalf("next claim = HWM %d, %v; want 3000", next.HWM, err)
			}
		})
	}
}
