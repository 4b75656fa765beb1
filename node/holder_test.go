package node_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/firn-id/firn/node"
	"github.com/firn-id/firn/nodeid"
	"github.com/firn-id/firn/nodeid/nodeidtest"
	"github.com/firn-id/firn/snowflake"
)

// layout starts before a synctest bubble's clock (2000-01-01): a pool of
// four nodes.
var layout = snowflake.Layout{Name: "test", Epoch: time.Date(1990, 1, 1, 0, 0, 0, 0, time.UTC), Tick: time.Millisecond,
	TimeBits: 41, Node: []snowflake.Field{{Name: "node", Bits: 2}}, SequenceBits: 12}

const ttl = 3 * time.Second

func config(store nodeid.Store) node.Config {
	return node.Config{
		Store:     store,
		Lease:     nodeid.Config{NodeBits: 2, TTL: ttl, Layout: nodeid.LayoutID{Fingerprint: layout.Fingerprint(), Description: layout.String()}},
		Generator: snowflake.Config{Layout: layout},
		StoreName: "memory",
		Log:       slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
}

func newHolder(t *testing.T, cfg node.Config) *node.Holder {
	t.Helper()
	h, err := node.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close(context.Background()) })
	return h
}

// served is a replace function that hands each new generator to the test.
type served struct {
	gen   *snowflake.Generator
	lease *nodeid.Lease
}

func replacer() (chan served, func(*snowflake.Generator, *nodeid.Lease)) {
	ch := make(chan served, 8)
	return ch, func(g *snowflake.Generator, l *nodeid.Lease) { ch <- served{g, l} }
}

// drain issues IDs from g until it refuses, and returns the largest. It
// must refuse with ErrNotServing: a generator whose lease was lost stops
// at the lease's HWM.
func drain(t *testing.T, g *snowflake.Generator) int64 {
	t.Helper()
	var last int64
	for {
		id, err := g.Next(context.Background())
		if err != nil {
			if !errors.Is(err, snowflake.ErrNotServing) {
				t.Fatalf("the old generator ended with %v, want ErrNotServing", err)
			}
			return last
		}
		last = max(last, id)
		time.Sleep(time.Millisecond)
	}
}

// TestLostLeaseTakesANewOne cuts the holder's lease off the store until it
// is lost: the old generator stops below the lease's frozen HWM, the lost
// lease is retired, and a new lease with a new token and a new generator
// starting past everything the old one issued replaces it.
func TestLostLeaseTakesANewOne(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := nodeidtest.NewMemStore()
		h := newHolder(t, config(store))
		g1, l1, err := h.Acquire(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		ch, replace := replacer()
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		if err := h.Watch(ctx, replace); err != nil {
			t.Fatal(err)
		}
		if _, err := g1.Next(ctx); err != nil {
			t.Fatal(err)
		}
		store.Cut(l1.Token(), errors.New("cut off"))
		<-l1.Done()
		if !errors.Is(l1.Err(), nodeid.ErrLeaseLost) {
			t.Fatalf("the old lease ended with %v, want ErrLeaseLost", l1.Err())
		}
		frozen := l1.Limit()
		last := drain(t, g1)
		p, err := layout.Decompose(uint64(last))
		if err != nil {
			t.Fatal(err)
		}
		if end := layout.TickTime(p.Tick + 1).UnixMilli(); end > frozen {
			t.Fatalf("the old generator issued a tick ending at %d, past its lease's HWM %d", end, frozen)
		}
		next := <-ch
		if next.lease == l1 || next.lease.Token() == l1.Token() {
			t.Fatal("the lost lease was revived: the new one has its token")
		}
		if next.gen == g1 {
			t.Fatal("the old generator was handed out again")
		}
		if l1.Limit() != frozen {
			t.Fatalf("the lost lease's HWM moved from %d to %d", frozen, l1.Limit())
		}
		if next.lease.Start() < frozen {
			t.Fatalf("the new lease starts at %d, below the lost one's HWM %d", next.lease.Start(), frozen)
		}
		id, err := next.gen.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if next.gen.Node() == g1.Node() && id <= last {
			t.Fatalf("the new generator's first ID %d is not past the old one's last %d on node %d", id, last, g1.Node())
		}
		if err := h.NotReady(); err != nil {
			t.Fatalf("serving again, yet not ready: %v", err)
		}
		if h.Err() != nil {
			t.Fatalf("the holder ended: %v", h.Err())
		}
	})
}

// firstID is the ID g would issue first, as firn serve's floor check
// computes it.
func firstID(g *snowflake.Generator) uint64 {
	l := g.Layout()
	id, _ := l.Compose(uint64(g.Now().Sub(l.Epoch)/l.Tick), g.Node(), 0)
	return id
}

// TestFloorRefusedOnReacquisition sets a floor above every ID a new
// generator could issue after the first acquisition, then loses the
// lease: every generator a re-acquisition builds is refused before it
// serves, the holder keeps waiting and says why, and once the floor is
// behind it serves again.
func TestFloorRefusedOnReacquisition(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := nodeidtest.NewMemStore()
		var floor atomic.Uint64
		var refused atomic.Int64
		cfg := config(store)
		cfg.Check = func(g *snowflake.Generator) error {
			if f := floor.Load(); firstID(g) <= f {
				refused.Add(1)
				return errors.New("snowflake floor: the first ID would not exceed it")
			}
			return nil
		}
		h := newHolder(t, cfg)
		_, l1, err := h.Acquire(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		ch, replace := replacer()
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		if err := h.Watch(ctx, replace); err != nil {
			t.Fatal(err)
		}
		// A previous system issued IDs up to an hour from now.
		ahead, _ := layout.Compose(uint64(time.Now().Add(time.Hour).Sub(layout.Epoch)/layout.Tick), layout.MaxNode(), 0)
		floor.Store(ahead)
		store.Cut(l1.Token(), errors.New("cut off"))
		<-l1.Done()
		time.Sleep(time.Minute)
		select {
		case s := <-ch:
			t.Fatalf("a generator below the floor was handed out: node %d, first ID %d, floor %d", s.gen.Node(), firstID(s.gen), ahead)
		default:
		}
		if refused.Load() < 2 {
			t.Fatalf("%d generators refused, want the re-acquisition to keep trying", refused.Load())
		}
		if err := h.NotReady(); err == nil || !strings.Contains(err.Error(), "snowflake floor") {
			t.Fatalf("NotReady = %v, want the floor", err)
		}
		if h.Err() != nil {
			t.Fatalf("the holder gave up: %v", h.Err())
		}
		floor.Store(0)
		next := <-ch
		if next.lease.Token() == l1.Token() {
			t.Fatal("the lost lease was revived")
		}
		if err := h.NotReady(); err != nil {
			t.Fatalf("serving again, yet not ready: %v", err)
		}
	})
}

// TestFloorRefusedAtStart: the first acquisition's generator is checked
// too; Acquire returns the check's error and releases the node.
func TestFloorRefusedAtStart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := nodeidtest.NewMemStore()
		cfg := config(store)
		refuse := errors.New("below the floor")
		cfg.Check = func(*snowflake.Generator) error { return refuse }
		h := newHolder(t, cfg)
		if _, _, err := h.Acquire(t.Context()); !errors.Is(err, refuse) {
			t.Fatalf("Acquire = %v, want the check's error", err)
		}
		n := uint64(0)
		lcfg := cfg.Lease
		lcfg.Node = &n
		l, err := nodeid.Acquire(t.Context(), store, lcfg)
		if err != nil {
			t.Fatalf("node 0 was not released after its generator was refused: %v", err)
		}
		_ = l.Close(t.Context())
	})
}

// TestAcquireWaitsForAFreeNode: with every node held, Acquire waits and
// NotReady says why; once a node is released it takes it.
func TestAcquireWaitsForAFreeNode(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := nodeidtest.NewMemStore()
		cfg := config(store)
		var held []*nodeid.Lease
		for range 4 {
			l, err := nodeid.Acquire(t.Context(), store, cfg.Lease)
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close(context.Background())
			held = append(held, l)
		}
		h := newHolder(t, cfg)
		type result struct {
			lease *nodeid.Lease
			err   error
		}
		got := make(chan result, 1)
		go func() {
			_, l, err := h.Acquire(t.Context())
			got <- result{l, err}
		}()
		time.Sleep(5 * time.Second)
		synctest.Wait()
		if err := h.NotReady(); err == nil || !strings.Contains(err.Error(), "no free node in memory: 4 of 4 held; retrying") {
			t.Fatalf("NotReady while every node is held = %v", err)
		}
		if err := held[2].Close(t.Context()); err != nil {
			t.Fatal(err)
		}
		r := <-got
		if r.err != nil || r.lease.Node() != held[2].Node() {
			t.Fatalf("Acquire = %v, %v; want the freed node %d", r.lease, r.err, held[2].Node())
		}
		if err := h.NotReady(); err != nil {
			t.Fatalf("NotReady once held = %v", err)
		}
	})
}

// TestCloseReleasesAfterTheServersStop: the end of the watch's context
// (SIGTERM in firn serve) releases nothing: the generator still issues
// and the node stays held while the servers finish. Close, called after
// they stopped, releases it.
func TestCloseReleasesAfterTheServersStop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := nodeidtest.NewMemStore()
		cfg := config(store)
		h := newHolder(t, cfg)
		g, l, err := h.Acquire(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		_, replace := replacer()
		ctx, cancel := context.WithCancel(t.Context())
		if err := h.Watch(ctx, replace); err != nil {
			t.Fatal(err)
		}
		cancel() // SIGTERM: the servers start shutting down
		<-h.Done()
		if !errors.Is(h.Err(), context.Canceled) {
			t.Fatalf("Err = %v, want the watch's context's", h.Err())
		}
		node := l.Node()
		lcfg := cfg.Lease
		lcfg.Node = &node
		for range 3 { // requests in flight finish, past a renewal or two
			time.Sleep(time.Second)
			if _, err := g.Next(t.Context()); err != nil {
				t.Fatalf("a request finishing after the stop began: %v", err)
			}
			if _, err := nodeid.Acquire(t.Context(), store, lcfg); !errors.Is(err, nodeid.ErrNodeHeld) {
				t.Fatalf("node %d while the servers finish: %v, want ErrNodeHeld", node, err)
			}
		}
		if err := h.Close(t.Context()); err != nil {
			t.Fatal(err)
		}
		next, err := nodeid.Acquire(t.Context(), store, lcfg)
		if err != nil {
			t.Fatalf("node %d after Close: %v, want it released", node, err)
		}
		defer next.Close(context.Background())
		if err := h.Close(t.Context()); err != nil {
			t.Fatalf("a second Close: %v", err)
		}
	})
}

// TestCloseCutsAReacquisitionShort: Close while the store is down after
// a lost lease ends the retirement and re-acquisition in flight.
func TestCloseCutsAReacquisitionShort(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := nodeidtest.NewMemStore()
		cfg := config(store)
		n := uint64(1)
		cfg.Lease.Node = &n
		h := newHolder(t, cfg)
		_, l, err := h.Acquire(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		ch, replace := replacer()
		if err := h.Watch(t.Context(), replace); err != nil {
			t.Fatal(err)
		}
		store.Cut(l.Token(), errors.New("cut off"))
		// The store stops answering before the lease is lost, so the
		// retirement and the acquisition after it wait: failed after the
		// loss, the watch could release and take the node again first.
		store.Fail(errors.New("store down"))
		<-l.Done()
		time.Sleep(time.Second)
		if err := h.NotReady(); err == nil {
			t.Fatal("ready while no node is held")
		}
		if err := h.Close(t.Context()); err != nil {
			t.Fatal(err)
		}
		if !errors.Is(h.Err(), node.ErrClosed) {
			t.Fatalf("Err = %v, want ErrClosed", h.Err())
		}
		select {
		case <-ch:
			t.Fatal("a generator was handed out after Close")
		default:
		}
	})
}

// TestHolderMisuse: Watch before Acquire, a second Acquire or Watch, and
// either after Close are errors, not a second node.
func TestHolderMisuse(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHolder(t, config(nodeidtest.NewMemStore()))
		_, replace := replacer()
		if err := h.Watch(t.Context(), replace); !errors.Is(err, node.ErrNotHeld) {
			t.Fatalf("Watch before Acquire = %v", err)
		}
		if _, _, err := h.Acquire(t.Context()); err != nil {
			t.Fatal(err)
		}
		if _, _, err := h.Acquire(t.Context()); !errors.Is(err, node.ErrAcquired) {
			t.Fatalf("a second Acquire = %v", err)
		}
		if err := h.Watch(t.Context(), replace); err != nil {
			t.Fatal(err)
		}
		if err := h.Watch(t.Context(), replace); !errors.Is(err, node.ErrWatching) {
			t.Fatalf("a second Watch = %v", err)
		}
		if err := h.Close(t.Context()); err != nil {
			t.Fatal(err)
		}
		if _, _, err := h.Acquire(t.Context()); !errors.Is(err, node.ErrClosed) {
			t.Fatalf("Acquire after Close = %v", err)
		}
	})
	if _, err := node.New(node.Config{}); !errors.Is(err, node.ErrConfig) {
		t.Fatalf("New without a store: %v, want ErrConfig", err)
	}
	if _, err := node.New(node.Config{Store: nodeidtest.NewMemStore(), Attempt: -time.Second}); !errors.Is(err, node.ErrConfig) {
		t.Fatalf("New with a negative attempt bound: %v, want ErrConfig", err)
	}
}
