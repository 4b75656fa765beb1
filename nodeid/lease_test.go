package nodeid_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/firn-id/firn/internal/idtest"
	"github.com/firn-id/firn/nodeid"
	"github.com/firn-id/firn/nodeid/nodeidtest"
	"github.com/firn-id/firn/snowflake"
)

// bubbleLayout has an epoch before 2000-01-01, where a synctest bubble's
// clock starts.
func bubbleLayout() snowflake.Layout {
	return snowflake.Layout{Name: "bubble", Epoch: time.Date(1990, 1, 1, 0, 0, 0, 0, time.UTC), Tick: time.Millisecond,
		TimeBits: 41, Node: []snowflake.Field{{Name: "node", Bits: 4}}, SequenceBits: 12}
}

func config(l snowflake.Layout) nodeid.Config {
	return nodeid.Config{NodeBits: l.NodeBits(), Layout: nodeid.LayoutID{Fingerprint: l.Fingerprint(), Description: l.String()}}
}

func acquire(t *testing.T, s nodeid.Store, cfg nodeid.Config) *nodeid.Lease {
	t.Helper()
	l, err := nodeid.Acquire(context.Background(), s, cfg)
	if err != nil {
		t.Fatalf("Acquire: %v", err)
	}
	t.Cleanup(func() { l.Close(context.Background()) })
	return l
}

func generator(t *testing.T, l snowflake.Layout, lease *nodeid.Lease) *snowflake.Generator {
	t.Helper()
	g, err := snowflake.New(snowflake.Config{Layout: l, Node: lease.Node(), Reservation: lease})
	if err != nil {
		t.Fatalf("snowflake.New: %v", err)
	}
	return g
}

// TestLeaseKeepsHWMAhead runs a lease for ten minutes of bubble time: the
// HWM stays ahead of the generator by at least half the window, with at
// most two store writes per second whatever the ID rate.
func TestLeaseKeepsHWMAhead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := nodeidtest.NewMemStore()
		lay := bubbleLayout()
		lease := acquire(t, s, config(lay))
		g := generator(t, lay, lease)
		start := time.Now()
		dst := make([]int64, 4096)
		for range 600 {
			if _, err := g.NextN(context.Background(), dst); err != nil {
				t.Fatal(err)
			}
			time.Sleep(time.Second)
			synctest.Wait()
			if ahead := lease.Limit() - g.Now().UnixMilli(); ahead < 1500 {
				t.Fatalf("HWM ahead of the generator by %d ms, want at least 1500", ahead)
			}
		}
		if secs := time.Since(start).Seconds(); float64(lease.Renewals()) > 2*secs {
			t.Fatalf("%d store writes in %.0f s, want at most 2 per second", lease.Renewals(), secs)
		}
		if s.HWM(lease.Node()) != lease.Limit() {
			t.Fatalf("store HWM %d, lease limit %d: the limit must be what the store confirmed", s.HWM(lease.Node()), lease.Limit())
		}
	})
}

// TestOutageShorterThanTTL: the store is down for 2 s; the lease holds,
// the generator serves from its headroom, RenewalError says why renewals
// fail, then extension resumes and it says nothing.
func TestOutageShorterThanTTL(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := nodeidtest.NewMemStore()
		lay := bubbleLayout()
		lease := acquire(t, s, config(lay))
		g := generator(t, lay, lease)
		if err := lease.RenewalError(); err != nil {
			t.Fatalf("RenewalError before the outage: %v", err)
		}
		s.Fail(errors.New("store down"))
		time.Sleep(2 * time.Second)
		if _, err := g.Next(context.Background()); err != nil {
			t.Fatalf("Next during a short outage: %v", err)
		}
		if err := lease.RenewalError(); err == nil || !strings.Contains(err.Error(), "store down") {
			t.Fatalf("RenewalError during the outage: %v; want the store's error", err)
		}
		s.Fail(nil)
		time.Sleep(2 * time.Second)
		synctest.Wait()
		if lease.Err() != nil {
			t.Fatalf("lease ended after a 2 s outage: %v", lease.Err())
		}
		if err := lease.RenewalError(); err != nil {
			t.Fatalf("RenewalError after renewals came back: %v; want nil", err)
		}
		if ahead := lease.Limit() - g.Now().UnixMilli(); ahead < 1500 {
			t.Fatalf("HWM ahead by %d ms after the outage", ahead)
		}
	})
}

// TestOutageLongerThanTTL: the generator stops at its HWM with
// ErrNotServing, the lease reports lost, and nothing is issued past the
// HWM the store confirmed.
func TestOutageLongerThanTTL(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := nodeidtest.NewMemStore()
		lay := bubbleLayout()
		lease := acquire(t, s, config(lay))
		g := generator(t, lay, lease)
		s.Fail(errors.New("store down"))
		var last int64
		var err error
		for err == nil {
			last, err = g.Next(context.Background())
			time.Sleep(time.Millisecond)
		}
		if !errors.Is(err, snowflake.ErrNotServing) {
			t.Fatalf("Next past the HWM: %v, want ErrNotServing", err)
		}
		p, _ := lay.Decompose(uint64(last))
		if end := p.Time.Add(lay.Tick).UnixMilli(); end > lease.Limit() {
			t.Fatalf("last ID's tick ends %d, past the confirmed HWM %d", end, lease.Limit())
		}
		<-lease.Done()
		if !errors.Is(lease.Err(), nodeid.ErrLeaseLost) {
			t.Fatalf("lease error %v, want ErrLeaseLost", lease.Err())
		}
	})
}

// TestPausedHolderAndNewOwner: the holder is cut off from the store (a
// pause, a partition) while a second process takes its node after the
// TTL. Both keep issuing as long as they may; no tick is issued by both.
func TestPausedHolderAndNewOwner(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := nodeidtest.NewMemStore()
		lay := bubbleLayout()
		cfg := config(lay)
		node := uint64(3)
		cfg.Node = &node
		rec := idtest.NewRecorder(t)
		a := acquire(t, s, cfg)
		ga := generator(t, lay, a)
		s.Cut(a.Token(), errors.New("paused"))

		var b *nodeid.Lease
		for b == nil {
			l, err := nodeid.Acquire(context.Background(), s, cfg)
			switch {
			case err == nil:
				b = l
			case errors.Is(err, nodeid.ErrNodeHeld):
				time.Sleep(100 * time.Millisecond)
			default:
				t.Fatal(err)
			}
		}
		defer b.Close(context.Background())
		if b.Start() < a.Limit() {
			t.Fatalf("new owner starts at %d, below the old owner's confirmed HWM %d", b.Start(), a.Limit())
		}
		gb := generator(t, lay, b)
		// The old owner is still running and issuing: it must stop at
		// its HWM while the new owner serves.
		for i := range 5000 {
			if id, err := ga.Next(context.Background()); err == nil {
				rec.Add("a", id)
			} else if !errors.Is(err, snowflake.ErrNotServing) {
				t.Fatal(err)
			}
			id, err := gb.Next(context.Background())
			if err != nil {
				t.Fatalf("new owner, call %d: %v", i, err)
			}
			rec.Add("b", id)
			time.Sleep(time.Millisecond)
		}
	})
}

func TestClockBehindStoredHWM(t *testing.T) {
	tests := []struct {
		name       string
		behind     time.Duration
		startAhead bool
		wantErr    bool
	}{
		{name: "5s behind starts at the HWM", behind: 5 * time.Second},
		{name: "30s behind is refused", behind: 30 * time.Second, wantErr: true},
		{name: "30s behind starts at the HWM when allowed", behind: 30 * time.Second, startAhead: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := nodeidtest.NewMemStore()
				lay := bubbleLayout()
				hwm := time.Now().Add(tt.behind).UnixMilli()
				s.SetHWM(0, hwm)
				cfg := config(lay)
				zero := uint64(0)
				cfg.Node = &zero // a free node ahead is passed over (TestAcquireSkipsNodesAhead)
				cfg.StartAhead = tt.startAhead
				lease, err := nodeid.Acquire(context.Background(), s, cfg)
				if tt.wantErr {
					var cb *nodeid.BehindHWMError
					if !errors.As(err, &cb) || cb.HWM.UnixMilli() != hwm {
						t.Fatalf("Acquire = %v, want *BehindHWMError naming the HWM", err)
					}
					// The node was released: a correctly configured
					// process can take it.
					cfg.StartAhead = true
					l2 := acquire(t, s, cfg)
					if l2.Node() != 0 {
						t.Fatalf("after a refused start node 0 is still held (got node %d)", l2.Node())
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				defer lease.Close(context.Background())
				g, err := snowflake.New(snowflake.Config{Layout: lay, Reservation: lease, StartAhead: tt.startAhead})
				if err != nil {
					t.Fatal(err)
				}
				id, err := g.Next(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				if p, _ := lay.Decompose(uint64(id)); p.Time.UnixMilli() < hwm {
					t.Fatalf("first ID at %d, before the stored HWM %d", p.Time.UnixMilli(), hwm)
				}
			})
		})
	}
}

func TestSecondGeneratorRefused(t *testing.T) {
	s := nodeidtest.NewMemStore()
	lay := bubbleLayout()
	lease := acquire(t, s, config(lay))
	generator(t, lay, lease)
	_, err := snowflake.New(snowflake.Config{Layout: lay, Reservation: lease})
	if !errors.Is(err, nodeid.ErrAlreadyBound) {
		t.Fatalf("second generator on one lease: %v, want ErrAlreadyBound", err)
	}
}

// TestGeneratorOfAnotherNodeOrLayoutRefused: a lease protects one node
// of one layout; a generator of another node, or of another layout, over
// it is refused and leaves the lease unbound.
func TestGeneratorOfAnotherNodeOrLayoutRefused(t *testing.T) {
	s := nodeidtest.NewMemStore()
	lay := bubbleLayout()
	lease := acquire(t, s, config(lay))
	other := lay
	other.SequenceBits = 11
	for _, cfg := range []snowflake.Config{
		{Layout: lay, Node: lease.Node() + 1, Reservation: lease},
		{Layout: other, Node: lease.Node(), Reservation: lease},
	} {
		if _, err := snowflake.New(cfg); !errors.Is(err, snowflake.ErrReservationMismatch) {
			t.Fatalf("node %d, layout %s over a lease of node %d, layout %s: %v; want ErrReservationMismatch",
				cfg.Node, cfg.Layout, lease.Node(), lay, err)
		}
	}
	generator(t, lay, lease) // still free to bind
	// An ID space that records more than its layout (opaque mode's
	// permutation, after ";") is still the layout's.
	cfg := config(lay)
	cfg.Layout.Fingerprint += ";ff1:a625aaf7abba7733:421815628052"
	generator(t, lay, acquire(t, nodeidtest.NewMemStore(), cfg))
}

func TestCloseReleasesAndKeepsHWM(t *testing.T) {
	s := nodeidtest.NewMemStore()
	lay := bubbleLayout()
	lease := acquire(t, s, config(lay))
	limit := lease.Limit()
	for range 2 { // idempotent
		if err := lease.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if !errors.Is(lease.Err(), nodeid.ErrClosed) {
		t.Fatalf("Err after Close = %v", lease.Err())
	}
	again := acquire(t, s, config(lay))
	if again.Node() != lease.Node() || again.Start() != limit {
		t.Fatalf("after Close: node %d start %d, want node %d start %d (no node burned per restart)",
			again.Node(), again.Start(), lease.Node(), limit)
	}
}

func TestAcquireRejectsConfig(t *testing.T) {
	lay := bubbleLayout()
	big := uint64(16)
	tests := []struct {
		name string
		edit func(c *nodeid.Config)
		want string
	}{
		{"node outside pool", func(c *nodeid.Config) { c.Node = &big }, "node 16 is outside the namespace's layout \"bubble"},
		{"short TTL", func(c *nodeid.Config) { c.TTL = time.Millisecond }, "TTL 1ms outside 1s to 10m0s"},
		{"long TTL", func(c *nodeid.Config) { c.TTL = time.Hour }, "TTL 1h0m0s outside 1s to 10m0s"},
		{"window over bound", func(c *nodeid.Config) { c.Window, c.MaxBehind = 20*time.Second, 10*time.Second }, "must exceed the window"},
		{"window over MaxWindow", func(c *nodeid.Config) { c.Window = nodeid.MaxWindow + time.Millisecond }, "over 10m0s"},
		{"tick not whole ms", func(c *nodeid.Config) { c.Tick = 1500 * time.Microsecond }, "whole number of milliseconds"},
		{"no layout", func(c *nodeid.Config) { c.Layout = nodeid.LayoutID{} }, "no layout fingerprint"},
		{"newline in fingerprint", func(c *nodeid.Config) { c.Layout.Fingerprint += "\nextra" }, "holds a control character"},
		{"long fingerprint", func(c *nodeid.Config) { c.Layout.Fingerprint = strings.Repeat("f", nodeid.MaxFingerprint+1) }, "want at most 64"},
		{"node bits", func(c *nodeid.Config) { c.NodeBits = 40 }, "node bits 40 outside 0..32"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := config(lay)
			tt.edit(&cfg)
			if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Validate = %v, want an error containing %q", err, tt.want)
			}
			_, err := nodeid.Acquire(context.Background(), nodeidtest.NewMemStore(), cfg)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Acquire = %v, want an error containing %q", err, tt.want)
			}
			var re *nodeid.NodeRangeError
			if (cfg.Node != nil && *cfg.Node >= 16) != (errors.As(err, &re) && errors.Is(err, nodeid.ErrNodeOutOfRange)) {
				t.Fatalf("Acquire = %#v: a node outside the pool, and only it, is a *NodeRangeError", err)
			}
		})
	}
}

// BenchmarkExtensions draws one million IDs per second for three seconds
// per iteration and reports the store writes per second: the lease's
// writes follow time, not the ID rate.
func BenchmarkExtensions(b *testing.B) {
	lay := snowflake.DefaultLayout()
	var writes, secs float64
	for range b.N {
		s := nodeidtest.NewMemStore()
		lease, err := nodeid.Acquire(context.Background(), s, config(lay))
		if err != nil {
			b.Fatal(err)
		}
		g, err := snowflake.New(snowflake.Config{Layout: lay, Node: lease.Node(), Reservation: lease})
		if err != nil {
			b.Fatal(err)
		}
		dst := make([]int64, 1000)
		start := time.Now()
		for ms := range 3000 { // 1,000 IDs per millisecond
			if _, err := g.NextN(context.Background(), dst); err != nil {
				b.Fatal(err)
			}
			time.Sleep(time.Until(start.Add(time.Duration(ms+1) * time.Millisecond)))
		}
		secs += time.Since(start).Seconds()
		writes += float64(s.Writes())
		lease.Close(context.Background())
	}
	b.ReportMetric(writes/secs, "writes/s")
}
