package peers

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	bwmarrin "github.com/bwmarrin/snowflake"
	"github.com/sony/sonyflake/v2"
	"github.com/yitter/idgenerator-go/idgen"

	"github.com/firn-id/firn/ids"
	_ "github.com/firn-id/firn/localstore" // the "local" store of the ids peer
	"github.com/firn-id/firn/snowflake"
)

// generator is one ID generator under test.
type generator interface {
	next() (int64, error)
}

type firnGen struct{ g *snowflake.Generator }

func (f firnGen) next() (int64, error) { return f.g.Next(context.Background()) }

// idsGen is firn embedded as an application embeds it (package ids): a
// node leased from a store, its HWM kept ahead, calls checked for Close.
type idsGen struct{ s *ids.Source }

func (f idsGen) next() (int64, error) { return f.s.Next(context.Background()) }

// newIDs opens an ids.Source on a local data directory of its own (a
// database's renewals do not touch the call path) and waits for its node.
func newIDs(tb testing.TB, l snowflake.Layout) generator {
	tb.Setenv("XDG_STATE_HOME", tb.TempDir())
	s, err := ids.Open(context.Background(), "local", tb.TempDir(), ids.Options{Layout: l})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Close(context.Background()) })
	if _, err := s.Next(context.Background()); err != nil {
		tb.Fatal(err)
	}
	return idsGen{s}
}

type sonyGen struct{ s *sonyflake.Sonyflake }

func (s sonyGen) next() (int64, error) { return s.s.NextID() }

type bwGen struct{ n *bwmarrin.Node }

func (b bwGen) next() (int64, error) { return b.n.Generate().Int64(), nil }

type yitterGen struct{}

func (yitterGen) next() (int64, error) { return idgen.NextId(), nil }

var (
	yitterOnce sync.Once
	bwMu       sync.Mutex
)

// peer builds a fresh generator and states its cap in IDs per second
// (0: not capped by its layout).
type peer struct {
	name string
	cap  float64
	make func(tb testing.TB) generator
}

func wide() snowflake.Layout {
	return snowflake.Layout{Name: "wide", Epoch: time.UnixMilli(1767225600000), Tick: time.Millisecond,
		TimeBits: 41, SequenceBits: 22}
}

func newFirn(tb testing.TB, l snowflake.Layout) generator {
	g, err := snowflake.New(snowflake.Config{Layout: l, Node: 1 % (l.MaxNode() + 1), Reservation: snowflake.Unreserved()})
	if err != nil {
		tb.Fatal(err)
	}
	return firnGen{g}
}

var peers = []peer{
	{"firn", 4_096_000, func(tb testing.TB) generator {
		l, _ := snowflake.Preset("twitter")
		return newFirn(tb, l)
	}},
	{"firn-wide", 0, func(tb testing.TB) generator { return newFirn(tb, wide()) }},
	// firn's default layout, 41 time, 10 node and 12 sequence bits: the
	// widths of "firn" above and of the capped peers.
	{"firn-ids", 4_096_000, func(tb testing.TB) generator { return newIDs(tb, snowflake.DefaultLayout()) }},
	{"firn-ids-wide", 0, func(tb testing.TB) generator { return newIDs(tb, wide()) }},
	{"sonyflake", 4_096_000, func(tb testing.TB) generator {
		s, err := sonyflake.New(sonyflake.Settings{TimeUnit: time.Millisecond, BitsSequence: 12, BitsMachineID: 10,
			StartTime: time.UnixMilli(1288834974657), MachineID: func() (int, error) { return 1, nil }})
		if err != nil {
			tb.Fatal(err)
		}
		return sonyGen{s}
	}},
	{"bwmarrin", 4_096_000, func(tb testing.TB) generator {
		n, err := bwmarrin.NewNode(1)
		if err != nil {
			tb.Fatal(err)
		}
		return bwGen{n}
	}},
	// The -wide peers give 22 bits to the sequence, as firn-wide does, so
	// that a single goroutine never fills a millisecond.
	{"sonyflake-wide", 0, func(tb testing.TB) generator {
		s, err := sonyflake.New(sonyflake.Settings{TimeUnit: time.Millisecond, BitsSequence: 21, BitsMachineID: 1,
			StartTime: time.UnixMilli(1288834974657), MachineID: func() (int, error) { return 1, nil }})
		if err != nil {
			tb.Fatal(err)
		}
		return sonyGen{s}
	}},
	{"bwmarrin-wide", 0, func(tb testing.TB) generator {
		// NewNode reads the widths from package variables.
		bwMu.Lock()
		defer bwMu.Unlock()
		bwmarrin.NodeBits, bwmarrin.StepBits = 1, 21
		defer func() { bwmarrin.NodeBits, bwmarrin.StepBits = 10, 12 }()
		n, err := bwmarrin.NewNode(1)
		if err != nil {
			tb.Fatal(err)
		}
		return bwGen{n}
	}},
	{"yitter", 0, func(testing.TB) generator {
		yitterOnce.Do(func() {
			o := idgen.NewIdGeneratorOptions(1)
			o.WorkerIdBitLength, o.SeqBitLength = 10, 12
			idgen.SetIdGenerator(o)
		})
		return yitterGen{}
	}},
}

var sink atomic.Int64

// BenchmarkTimeSince is the baseline: one monotonic clock read.
func BenchmarkTimeSince(b *testing.B) {
	start := time.Now()
	var d time.Duration
	for b.Loop() {
		d += time.Since(start)
	}
	sink.Store(int64(d))
}

func BenchmarkNext(b *testing.B) {
	for _, p := range peers {
		b.Run(p.name, func(b *testing.B) {
			g := p.make(b)
			b.ReportAllocs()
			var last int64
			for b.Loop() {
				id, err := g.next()
				if err != nil {
					b.Fatal(err)
				}
				last = id
			}
			sink.Store(last)
		})
	}
}

func BenchmarkNextParallel(b *testing.B) {
	for _, p := range peers {
		b.Run(p.name, func(b *testing.B) {
			g := p.make(b)
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				var last int64
				for pb.Next() {
					id, err := g.next()
					if err != nil {
						b.Error(err)
						return
					}
					last = id
				}
				sink.Store(last)
			})
		})
	}
}

// BenchmarkSustained draws IDs for one second per iteration from one
// goroutine and reports IDs per second and, for capped layouts, the share
// of the cap reached.
func BenchmarkSustained(b *testing.B) {
	for _, p := range peers {
		b.Run(p.name, func(b *testing.B) {
			var n int64
			var elapsed time.Duration
			for range b.N {
				g := p.make(b)
				start := time.Now()
				for time.Since(start) < time.Second {
					for range 256 {
						if _, err := g.next(); err != nil {
							b.Fatal(err)
						}
					}
					n += 256
				}
				elapsed += time.Since(start)
			}
			rate := float64(n) / elapsed.Seconds()
			b.ReportMetric(rate, "ids/s")
			if p.cap > 0 {
				b.ReportMetric(100*rate/p.cap, "%cap")
			}
		})
	}
}

// TestPeersUnique checks the adapters: 100,000 IDs from each generator
// are unique and increasing.
func TestPeersUnique(t *testing.T) {
	for _, p := range peers {
		t.Run(p.name, func(t *testing.T) {
			g := p.make(t)
			ids := make([]int64, 100_000)
			for i := range ids {
				id, err := g.next()
				if err != nil {
					t.Fatal(err)
				}
				ids[i] = id
				if i > 0 && id <= ids[i-1] {
					t.Fatalf("ID %d at %d does not exceed %d", id, i, ids[i-1])
				}
			}
			if len(slices.Compact(ids)) != len(ids) {
				t.Fatal("duplicates")
			}
		})
	}
}
