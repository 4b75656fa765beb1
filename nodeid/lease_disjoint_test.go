package nodeid_test

import (
	"cmp"
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/firn-id/firn/nodeid"
	"github.com/firn-id/firn/nodeid/nodeidtest"
)

// chaosStore applies each call after a random delay, whatever its context
// (a request in flight lands late, even after its caller gave up), and
// answers after another random delay, or never if the context ended first
// (answer lost). Some answers of applied writes are lost outright, and
// some releases fail without being applied.
type chaosStore struct {
	*nodeidtest.MemStore
	mu  sync.Mutex
	rnd *rand.Rand
}

func (s *chaosStore) delay(max time.Duration) time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.rnd.IntN(4) == 0 {
		return time.Duration(s.rnd.Int64N(int64(max)))
	}
	return time.Duration(s.rnd.Int64N(int64(5 * time.Millisecond)))
}

func (s *chaosStore) coin(n int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rnd.IntN(n) == 0
}

func (s *chaosStore) answer(ctx context.Context) error {
	t := time.NewTimer(s.delay(3 * time.Second))
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

func (s *chaosStore) Renew(ctx context.Context, c nodeid.Claim, hwm int64) (int64, error) {
	type res struct {
		v   int64
		err error
	}
	ch := make(chan res, 1)
	go func() { // the request travels and lands whatever the caller does
		time.Sleep(s.delay(4 * time.Second))
		v, err := s.MemStore.Renew(context.Background(), c, hwm)
		ch <- res{v, err}
	}()
	select {
	case <-ctx.Done():
		return 0, ctx.Err()
	case r := <-ch:
		if err := s.answer(ctx); err != nil {
			return 0, err
		}
		if r.err == nil && s.coin(10) {
			return 0, errors.New("answer lost")
		}
		return r.v, r.err
	}
}

func (s *chaosStore) Release(ctx context.Context, c nodeid.Claim) error {
	if s.coin(3) {
		return errors.New("release failed")
	}
	time.Sleep(s.delay(time.Second))
	return s.MemStore.Release(ctx, c)
}

// TestChaosLeasesDisjoint: three processes share a pool of two
// nodes over a store that delays, reorders and loses answers, lands writes
// late (after their caller gave up, after a release), and fails releases.
// Each holds a node until its lease is lost, then retires it and acquires
// again, as firn serve does. Safety at the lease level: for each node, the
// acquisitions ordered by the HWM they started from never overlap — each
// one's final (frozen) limit is at or below the next one's start. (The
// generators are left out: their sub-2 ms waits spin with Gosched, which
// a synctest bubble cannot advance past.)
func TestChaosLeasesDisjoint(t *testing.T) {
	for seed := range uint64(20) {
		synctest.Test(t, func(t *testing.T) {
			s := &chaosStore{MemStore: nodeidtest.NewMemStore(), rnd: rand.New(rand.NewPCG(seed, 7))}
			cfg := config(bubbleLayout())
			cfg.NodeBits = 1
			cfg.TTL = 2 * time.Second
			type life struct {
				who          string
				node         uint64
				start, limit int64
				lost         error
			}
			var mu sync.Mutex
			var lives []life
			end := time.Now().Add(120 * time.Second)
			var wg sync.WaitGroup
			for p := range 3 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					who := string(rune('a' + p))
					for time.Now().Before(end) {
						ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
						l, err := nodeid.Acquire(ctx, s, cfg)
						cancel()
						if err != nil {
							time.Sleep(100 * time.Millisecond)
							continue
						}
						select {
						case <-l.Done():
						case <-time.After(time.Until(end)):
						}
						rctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
						_ = l.Retire(rctx)
						cancel()
						mu.Lock()
						lives = append(lives, life{who, l.Node(), l.Start(), l.Limit(), l.Err()})
						mu.Unlock()
					}
				}()
			}
			wg.Wait()
			time.Sleep(10 * time.Second) // late writes land
			byNode := map[uint64][]life{}
			for _, lf := range lives {
				byNode[lf.node] = append(byNode[lf.node], lf)
			}
			for n, ls := range byNode {
				slices.SortFunc(ls, func(a, b life) int { return cmp.Compare(a.start, b.start) })
				for i := 1; i < len(ls); i++ {
					if ls[i-1].limit > ls[i].start {
						t.Errorf("seed %d node %d: %s's life [%d, %d) overlaps %s's starting at %d", seed, n, ls[i-1].who, ls[i-1].start, ls[i-1].limit, ls[i].who, ls[i].start)
					}
				}
				if last := ls[len(ls)-1]; s.HWM(n) < last.limit {
					t.Errorf("seed %d node %d: stored HWM %d below the last limit %d", seed, n, s.HWM(n), last.limit)
				}
			}
			t.Logf("seed %d: %d acquisitions", seed, len(lives))
		})
	}
}
