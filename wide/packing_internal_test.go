package wide

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/oklog/ulid/v2"

	"github.com/firn-id/firn/snowflake"
)

// randomLayout returns a valid layout of 2 to 64 bits with random widths,
// node fields, order, tick length and an epoch that leaves ticks below
// the 48-bit timestamp.
func randomLayout(r *rand.Rand) snowflake.Layout {
	for {
		if l := anyLayout(r); l.Validate() == nil {
			return l
		}
	}
}

// anyLayout returns a layout that may be invalid: its time part may
// overflow Unix milliseconds.
func anyLayout(r *rand.Rand) snowflake.Layout {
	total := 2 + r.IntN(63)
	l := snowflake.Layout{Name: "random", TimeBits: 1 + r.IntN(min(total, 63))}
	rest := total - l.TimeBits
	l.SequenceBits = r.IntN(min(rest, 62) + 1)
	nodeBits := rest - l.SequenceBits
	for i := 0; nodeBits > 0; i++ {
		b := 1 + r.IntN(nodeBits)
		l.Node = append(l.Node, snowflake.Field{Name: string(rune('a' + i)), Bits: b})
		nodeBits -= b
	}
	parts := []snowflake.Part{snowflake.PartTime, snowflake.PartNode, snowflake.PartSequence}
	r.Shuffle(3, func(i, j int) { parts[i], parts[j] = parts[j], parts[i] })
	l.Order = parts
	l.Tick = time.Duration(1+r.IntN(1000)) * time.Millisecond
	l.Epoch = time.UnixMilli(r.Int64N(1 << 42)) // to 2109: a later epoch has no nanosecond Unix time
	return l
}

// slot is a (tick, node, sequence) triple of a layout.
type slot struct{ tick, node, seq uint64 }

func randomSlot(r *rand.Rand, p packing) slot {
	return slot{tick: r.Uint64N(p.lastTick + 1), node: r.Uint64() & p.layout.MaxNode(), seq: r.Uint64() & p.layout.MaxSequence()}
}

// TestPackingInjective proves the map from slots to 128 bits injective for
// random layouts: decoding gives back every slot, whatever the random
// bits, so two slots never give one UUID or ULID.
func TestPackingInjective(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 3000 {
		l := randomLayout(r)
		p, err := newPacking(l)
		if err != nil {
			t.Fatalf("%s: %v", l, err)
		}
		for range 40 {
			s := randomSlot(r, p)
			var u, v [16]byte
			if err := p.uuid(&u, s.tick, s.node, s.seq, r.Uint64(), r.Uint64()); err != nil {
				t.Fatalf("%s: uuid of %+v: %v", l, s, err)
			}
			if err := p.ulid(&v, s.tick, s.node, s.seq, r.Uint64(), r.Uint64()); err != nil {
				t.Fatalf("%s: ulid of %+v: %v", l, s, err)
			}
			if uu := uuid.UUID(u); uu.Version() != 7 || uu.Variant() != uuid.RFC4122 {
				t.Fatalf("%s: %s is version %d variant %s", l, uu, uu.Version(), uu.Variant())
			}
			for _, dec := range []struct {
				form string
				fn   func(*[16]byte) (snowflake.Parts, error)
				b    *[16]byte
			}{{"uuid", p.fromUUID, &u}, {"ulid", p.fromULID, &v}} {
				got, err := dec.fn(dec.b)
				if err != nil {
					t.Fatalf("%s: %s of %+v: decode: %v", l, dec.form, s, err)
				}
				if (slot{got.Tick, got.Node, got.Sequence}) != s {
					t.Fatalf("%s: %s of %+v decodes to tick %d node %d sequence %d", l, dec.form, s, got.Tick, got.Node, got.Sequence)
				}
			}
		}
	}
}

// TestPackingIncreasing: for one node, a later slot gives a larger UUID and
// ULID — as bytes and as strings — whatever the random bits, for every
// order of the layout's parts.
func TestPackingIncreasing(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 3000 {
		l := randomLayout(r)
		p, err := newPacking(l)
		if err != nil {
			t.Fatal(err)
		}
		for range 40 {
			a, b := randomSlot(r, p), randomSlot(r, p)
			b.node = a.node
			if r.IntN(2) == 0 {
				b.tick = a.tick // often within one tick
			}
			if a.tick > b.tick || a.tick == b.tick && a.seq > b.seq {
				a, b = b, a
			}
			if a == b {
				continue
			}
			var ua, ub, la, lb [16]byte
			_ = p.uuid(&ua, a.tick, a.node, a.seq, r.Uint64(), r.Uint64())
			_ = p.uuid(&ub, b.tick, b.node, b.seq, r.Uint64(), r.Uint64())
			_ = p.ulid(&la, a.tick, a.node, a.seq, r.Uint64(), r.Uint64())
			_ = p.ulid(&lb, b.tick, b.node, b.seq, r.Uint64(), r.Uint64())
			if bytes.Compare(ua[:], ub[:]) >= 0 || uuid.UUID(ua).String() >= uuid.UUID(ub).String() {
				t.Fatalf("%s: slot %+v gives UUID %s, not below %s of later slot %+v", l, a, uuid.UUID(ua), uuid.UUID(ub), b)
			}
			if bytes.Compare(la[:], lb[:]) >= 0 || ulid.ULID(la).String() >= ulid.ULID(lb).String() {
				t.Fatalf("%s: slot %+v gives ULID %s, not below %s of later slot %+v", l, a, ulid.ULID(la), ulid.ULID(lb), b)
			}
		}
	}
}

// epoch0 is a layout whose ticks are Unix milliseconds, with 10 node and
// 12 sequence bits: the spec vectors below are read through it.
func epoch0() snowflake.Layout {
	return snowflake.Layout{Name: "unix", Epoch: time.UnixMilli(0), Tick: time.Millisecond, TimeBits: 41,
		Node: []snowflake.Field{{Name: "node", Bits: 10}}, SequenceBits: 12}
}

// TestPackingRFC9562Vector packs the fields of RFC 9562 Appendix A.6's
// UUIDv7, 017F22E2-79B0-7CC3-98C4-DC0C0C07398F: unix_ts_ms 0x017F22E279B0,
// rand_a 0xCC3, rand_b 0x18C4DC0C0C07398F. Read with 12 sequence and 10
// node bits, rand_a is the sequence and the top 10 bits of rand_b the node;
// the 52 bits below are the random part.
func TestPackingRFC9562Vector(t *testing.T) {
	want := uuid.MustParse("017F22E2-79B0-7CC3-98C4-DC0C0C07398F")
	p, err := newPacking(epoch0())
	if err != nil {
		t.Fatal(err)
	}
	const randB = 0x18C4DC0C0C07398F
	var got [16]byte
	if err := p.uuid(&got, 0x017F22E279B0, randB>>52, 0xCC3, randB&(1<<52-1), 0); err != nil {
		t.Fatal(err)
	}
	if uuid.UUID(got) != want {
		t.Fatalf("packed %s, want %s", uuid.UUID(got), want)
	}
	parts, err := p.fromUUID((*[16]byte)(&want))
	if err != nil {
		t.Fatal(err)
	}
	if parts.Tick != 0x017F22E279B0 || parts.Sequence != 0xCC3 || parts.Node != randB>>52 {
		t.Fatalf("decoded tick %#x sequence %#x node %#x", parts.Tick, parts.Sequence, parts.Node)
	}
}

// TestPackingULIDVector packs the ULID of alizain/ulid's reference
// implementation at 1469918176385 ms with zero randomness,
// 01ARYZ6S410000000000000000 (oklog/ulid v2.1.0 ulid_test.go,
// TestAlizainCompatibility).
func TestPackingULIDVector(t *testing.T) {
	p, err := newPacking(epoch0())
	if err != nil {
		t.Fatal(err)
	}
	var got [16]byte
	if err := p.ulid(&got, 1469918176385, 0, 0, 0, 0); err != nil {
		t.Fatal(err)
	}
	if want := ulid.MustParse("01ARYZ6S410000000000000000"); ulid.ULID(got) != want {
		t.Fatalf("packed %s, want %s", ulid.ULID(got), want)
	}
}

func TestPackingTimeRange(t *testing.T) {
	l := epoch0()
	l.TimeBits, l.Node = 50, nil // ticks past 2^48 ms exist in the layout
	p, err := newPacking(l)
	if err != nil {
		t.Fatal(err)
	}
	var b [16]byte
	if err := p.uuid(&b, 1<<48-1, 0, 0, 0, 0); err != nil {
		t.Fatalf("the last 48-bit millisecond: %v", err)
	}
	if err := p.uuid(&b, 1<<48, 0, 0, 0, 0); !errors.Is(err, ErrTimeRange) {
		t.Fatalf("a tick past the 48-bit timestamp: %v, want ErrTimeRange", err)
	}
}

// FuzzDecodeAnyLayout: any layout that validates — ticks of microseconds
// (decode-only presets) or milliseconds, any widths and order — decodes
// or refuses any 128 bits as a UUIDv7 and as a ULID with an error, never
// a panic; and an ID it decodes lies inside the layout.
func FuzzDecodeAnyLayout(f *testing.F) {
	f.Add(uint64(1), uint16(10), true, make([]byte, 16))
	f.Add(uint64(7), uint16(1), false, []byte("0123456789abcdef"))
	f.Fuzz(func(t *testing.T, seed uint64, tickUnits uint16, micro bool, raw []byte) {
		var b [16]byte
		copy(b[:], raw)
		l := anyLayout(rand.New(rand.NewPCG(seed, seed>>1)))
		unit := time.Millisecond
		if micro {
			unit = time.Microsecond
		}
		l.Tick = time.Duration(1+int(tickUnits)%1000) * unit
		if l.Validate() != nil {
			return
		}
		for _, decode := range []func() (snowflake.Parts, error){
			func() (snowflake.Parts, error) { return DecodeUUID(l, uuid.UUID(b)) },
			func() (snowflake.Parts, error) { return DecodeULID(l, ulid.ULID(b)) },
		} {
			p, err := decode()
			if err == nil && (l.Tick%time.Millisecond != 0 || p.Tick > l.MaxTick() || p.Sequence > l.MaxSequence()) {
				t.Fatalf("layout %s decoded %x to %+v", l, b, p)
			}
		}
	})
}
