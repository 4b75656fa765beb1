package nodeid_test

// Adversarial review of i14-avail (branch review-lease): failing tests
// that show where Lease.Retire misses what it documents.

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

// realisticStore is a MemStore that behaves like a store across a
// network: every call takes rtt and honours its context (a call whose
// context ends first fails with the context's error, as etcd's and the
// SQL drivers' do). While stalled, a Renew hangs until its context ends
// and writes nothing (a black-holed connection, a store without a
// leader); a Renew that entered the stall stays stuck even after the
// stall ends. While stalled every Release fails, and releaseFails makes
// that many more fail first.
type realisticStore struct {
	*nodeidtest.MemStore
	rtt time.Duration

	mu           sync.Mutex
	stalled      bool
	releaseFails int
	releases     int
}

func (s *realisticStore) wait(ctx context.Context) error {
	t := time.NewTimer(s.rtt)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

func (s *realisticStore) stall(on bool) {
	s.mu.Lock()
	s.stalled = on
	s.mu.Unlock()
}

func (s *realisticStore) Renew(ctx context.Context, c nodeid.Claim, hwm int64) (int64, error) {
	s.mu.Lock()
	stalled := s.stalled
	s.mu.Unlock()
	if stalled {
		<-ctx.Done()
		return 0, ctx.Err()
	}
	if err := s.wait(ctx); err != nil {
		return 0, err
	}
	return s.MemStore.Renew(ctx, c, hwm)
}

func (s *realisticStore) Release(ctx context.Context, c nodeid.Claim) error {
	if err := s.wait(ctx); err != nil {
		return err
	}
	s.mu.Lock()
	s.releases++
	fail := s.releaseFails > 0 || s.stalled // a store without a leader answers no release
	if s.releaseFails > 0 {
		s.releaseFails--
	}
	s.mu.Unlock()
	if fail {
		return errors.New("release: no leader")
	}
	return s.MemStore.Release(ctx, c)
}

// TestRetireBudgetNotEatenByARenewalInFlight: with a TTL no longer than
// the window (firn serve --lease-ttl 2s, the harness's and the tests'
// setting, with the default 3 s window), the renewal interval is TTL/3,
// the same as Retire's release budget. When renewals hang (the store's
// connection black-holed, a store without a leader), the lease is
// declared lost with a renewal in flight for up to a full interval: the
// ticks fall on lastOK + n·interval and lostAt = lastOK + 3·interval, so
// renewOnce starts a renewal (deadline one interval) at the very moment
// the TTL runs out, and Close must wait for it.
// Retire's TTL/3 deadline starts before Close waits for that renewal, so
// the release is sent with no time left and fails although the store
// answers it in 1 ms; Retire then sleeps the whole TTL instead of
// releasing "within a third of the TTL".
func TestRetireBudgetNotEatenByARenewalInFlight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &realisticStore{MemStore: nodeidtest.NewMemStore(), rtt: time.Millisecond}
		cfg := config(bubbleLayout())
		cfg.TTL = 2 * time.Second
		node := uint64(3)
		cfg.Node = &node
		old := acquire(t, s, cfg)
		time.Sleep(1500 * time.Millisecond) // a few good renewals
		s.stall(true)
		<-old.Done()
		s.stall(false) // the store answers new calls again; the renewal in flight stays stuck
		start := time.Now()
		err := old.Retire(context.Background())
		took := time.Since(start)
		t.Logf("Retire returned %v after %s (TTL %s)", err, took, cfg.TTL)
		if err != nil {
			t.Errorf("Retire = %v, want the claim released: the store answers a release in 1 ms", err)
		}
		if took > cfg.TTL/3 {
			t.Errorf("Retire took %s, documented to release within TTL/3 = %s", took, cfg.TTL/3)
		}
	})
}

// TestRetireRetriesWhileTheClaimIsRestored: etcd loses its leader.
// Without a leader no lease expires; the new leader restores every lease
// to a full TTL (etcd's lessor Promote) — modelled here by keep-alives of
// the old claim made by the store itself, never by the lease. The lease is
// declared lost, Retire's one release fails (no leader yet), and Retire
// then sleeps a fixed TTL from that failure and never tries again. The
// election ends during the sleep and restores the claim, so Retire returns
// ("the caller may claim again") while the old claim still holds the node
// for most of a TTL: a process with --node finds its own node held, and one
// taking any node burns another. A release retried during the wait would
// have freed it the moment the store answered.
func TestRetireRetriesWhileTheClaimIsRestored(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &realisticStore{MemStore: nodeidtest.NewMemStore(), rtt: time.Millisecond}
		cfg := config(bubbleLayout())
		node := uint64(1)
		cfg.Node = &node
		old := acquire(t, s, cfg) // default TTL 10 s: Retire's release budget is not the issue here
		claim := nodeid.Claim{Node: node, Token: old.Token(), TTL: nodeid.DefaultTTL}
		time.Sleep(1500 * time.Millisecond)
		// The election: renewals hang, and the store expires no lease.
		s.stall(true)
		s.mu.Lock()
		s.releaseFails = 1 // a release sent during the election fails
		s.mu.Unlock()
		elected := make(chan struct{})
		kept := make(chan struct{})
		go func() {
			defer close(kept)
			tick := time.NewTicker(500 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-elected:
					// The new leader: every lease gets a full TTL (unless
					// a release reached it first).
					if _, err := s.MemStore.Renew(context.Background(), claim, 0); err != nil && !errors.Is(err, nodeid.ErrLeaseLost) {
						t.Errorf("restore: %v", err)
					}
					return
				case <-tick.C:
					if _, err := s.MemStore.Renew(context.Background(), claim, 0); err != nil {
						t.Errorf("no leader, no expiry: %v", err)
						return
					}
				}
			}
		}()
		<-old.Done()
		lost := time.Now()
		retired := make(chan error, 1)
		go func() { retired <- old.Retire(context.Background()) }()
		time.Sleep(3 * time.Second) // the election ends during Retire's wait
		s.stall(false)
		close(elected)
		<-kept
		err := <-retired
		t.Logf("Retire = %v, %s after the loss; releases tried: %d", err, time.Since(lost).Round(time.Millisecond), s.releases)
		next, err := nodeid.Acquire(context.Background(), s, cfg)
		if err != nil {
			t.Fatalf("Acquire of node %d right after Retire returned: %v (the store still holds the lost claim)", node, err)
		}
		if err := next.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
	})
}
