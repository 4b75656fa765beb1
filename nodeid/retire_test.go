package nodeid_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/firn-id/firn/nodeid"
	"github.com/firn-id/firn/nodeid/nodeidtest"
)

// gatedStore is a MemStore whose Renew answers can be held until a gate
// opens, ignoring their context (the write lands, its answer arrives
// late), or lost (the write lands, the answer never arrives), and whose
// Release can be made to fail.
type gatedStore struct {
	*nodeidtest.MemStore
	mu         sync.Mutex
	gate       chan struct{} // nil: Renew answers at once
	lose       bool          // Renew writes and answers with an error
	releaseErr error
}

func (s *gatedStore) loseAnswers(lose bool) {
	s.mu.Lock()
	s.lose = lose
	s.mu.Unlock()
}

func (s *gatedStore) hold() {
	s.mu.Lock()
	s.gate = make(chan struct{})
	s.mu.Unlock()
}

func (s *gatedStore) open() {
	s.mu.Lock()
	close(s.gate)
	s.gate = nil
	s.mu.Unlock()
}

func (s *gatedStore) Renew(ctx context.Context, c nodeid.Claim, hwm int64) (int64, error) {
	s.mu.Lock()
	gate, lose := s.gate, s.lose
	s.mu.Unlock()
	stored, err := s.MemStore.Renew(ctx, c, hwm)
	if gate != nil {
		<-gate
	}
	if lose && err == nil {
		return 0, errors.New("answer lost")
	}
	return stored, err
}

func (s *gatedStore) Release(ctx context.Context, c nodeid.Claim) error {
	s.mu.Lock()
	err := s.releaseErr
	s.mu.Unlock()
	if err != nil {
		return err
	}
	return s.MemStore.Release(ctx, c)
}

// TestLateAnswerCannotRaiseAFrozenLimit: a renewal hangs past the TTL.
// The lease is declared lost when the TTL runs out, not when the answer
// comes; the answer, a confirmed HWM past the limit, then leaves the
// limit where it was frozen.
func TestLateAnswerCannotRaiseAFrozenLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &gatedStore{MemStore: nodeidtest.NewMemStore()}
		lay := bubbleLayout()
		cfg := config(lay)
		lease := acquire(t, s, cfg)
		generator(t, lay, lease)
		time.Sleep(2 * time.Second)
		synctest.Wait()
		s.hold()
		held := time.Now()
		<-lease.Done()
		if !errors.Is(lease.Err(), nodeid.ErrLeaseLost) {
			t.Fatalf("lease error %v, want ErrLeaseLost", lease.Err())
		}
		if waited := time.Since(held); waited > nodeid.DefaultTTL {
			t.Fatalf("lease declared lost %s after renewals hung, past its TTL of %s", waited, nodeid.DefaultTTL)
		}
		frozen := lease.Limit()
		s.open() // the hung renewal completes: the store confirms a higher HWM
		synctest.Wait()
		if stored := s.HWM(lease.Node()); stored <= frozen {
			t.Fatalf("stored HWM %d not past the frozen limit %d: the late answer was not a raise", stored, frozen)
		}
		if got := lease.Limit(); got != frozen {
			t.Fatalf("limit %d after the late answer, want it frozen at %d", got, frozen)
		}
	})
}

// TestRetireReleasesALostClaim: the store takes every renewal but its
// answers are lost, so the lease is declared lost while the store still
// holds its claim (as after an etcd leader change, which restores leases
// to a full TTL). Retire releases the claim, and the node is claimed
// again at once, with a new token, past every HWM the old life wrote.
func TestRetireReleasesALostClaim(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &gatedStore{MemStore: nodeidtest.NewMemStore()}
		lay := bubbleLayout()
		cfg := config(lay)
		node := uint64(2)
		cfg.Node = &node
		old := acquire(t, s, cfg)
		generator(t, lay, old)
		s.loseAnswers(true)
		<-old.Done()
		s.loseAnswers(false)
		written := s.HWM(node)
		if written <= old.Limit() {
			t.Fatalf("stored HWM %d, limit %d: the unanswered renewals wrote nothing", written, old.Limit())
		}
		if _, err := nodeid.Acquire(context.Background(), s, cfg); !errors.Is(err, nodeid.ErrNodeHeld) {
			t.Fatalf("Acquire beside the lost claim: %v, want ErrNodeHeld (the store still holds it)", err)
		}
		if err := old.Retire(context.Background()); err != nil {
			t.Fatalf("Retire: %v", err)
		}
		next, err := nodeid.Acquire(context.Background(), s, cfg)
		if err != nil {
			t.Fatalf("Acquire after Retire: %v", err)
		}
		defer next.Close(context.Background())
		if next.Token() == old.Token() {
			t.Fatal("the new acquisition reuses the lost lease's token")
		}
		if next.Start() < written {
			t.Fatalf("new acquisition starts at %d, below the HWM %d the old claim wrote", next.Start(), written)
		}
		claim := nodeid.Claim{Node: node, Token: old.Token(), TTL: nodeid.DefaultTTL}
		if _, err := s.Renew(context.Background(), claim, written+5000); !errors.Is(err, nodeid.ErrLeaseLost) {
			t.Fatalf("a renewal of the old claim after Retire: %v, want ErrLeaseLost", err)
		}
	})
}

// TestRetireWaitsOutAFailedRelease: when the store does not take the
// release, Retire returns its error only once the claim has expired, and
// the node can then be claimed.
func TestRetireWaitsOutAFailedRelease(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &gatedStore{MemStore: nodeidtest.NewMemStore()}
		lay := bubbleLayout()
		cfg := config(lay)
		node := uint64(1)
		cfg.Node = &node
		old := acquire(t, s, cfg)
		s.loseAnswers(true)
		<-old.Done()
		s.loseAnswers(false)
		lost := time.Now()
		down := errors.New("store down")
		s.mu.Lock()
		s.releaseErr = down
		s.mu.Unlock()
		err := old.Retire(context.Background())
		if !errors.Is(err, down) {
			t.Fatalf("Retire = %v, want the release's error", err)
		}
		if waited := time.Since(lost); waited < nodeid.DefaultTTL {
			t.Fatalf("Retire returned %s after the loss, before the claim's TTL of %s", waited, nodeid.DefaultTTL)
		}
		s.mu.Lock()
		s.releaseErr = nil
		s.mu.Unlock()
		next := acquire(t, s, cfg)
		if next.Token() == old.Token() {
			t.Fatal("the new acquisition reuses the lost lease's token")
		}
	})
}

// TestRetireEndsWithItsContext: the wait for a claim to expire ends with
// the caller's context.
func TestRetireEndsWithItsContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &gatedStore{MemStore: nodeidtest.NewMemStore(), releaseErr: errors.New("store down")}
		lease, err := nodeid.Acquire(context.Background(), s, config(bubbleLayout()))
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		if err := lease.Retire(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Retire = %v, want the context's deadline", err)
		}
	})
}
