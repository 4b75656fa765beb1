package snowflake_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/firn-id/firn/snowflake"
)

// randomLayout returns a random valid layout: up to 64 bits, a random
// epoch and tick, random widths, a random order, and the node bits
// split into one to three fields with random names.
func randomLayout(rng *rand.Rand) snowflake.Layout {
	orders := [][]snowflake.Part{
		nil,
		{snowflake.PartTime, snowflake.PartNode, snowflake.PartSequence},
		{snowflake.PartTime, snowflake.PartSequence, snowflake.PartNode},
		{snowflake.PartNode, snowflake.PartTime, snowflake.PartSequence},
		{snowflake.PartSequence, snowflake.PartNode, snowflake.PartTime},
	}
	ticks := []time.Duration{time.Millisecond, 10 * time.Millisecond, time.Second, 10 * time.Microsecond}
	for {
		l := snowflake.Layout{
			Epoch:        time.UnixMilli(rng.Int64N(2_000_000_000_000)),
			Tick:         ticks[rng.IntN(len(ticks))],
			TimeBits:     1 + rng.IntN(50),
			SequenceBits: rng.IntN(20),
			Order:        orders[rng.IntN(len(orders))],
		}
		l.Node = splitNode(rng, rng.IntN(24))
		if l.Validate() == nil {
			return l
		}
	}
}

// splitNode splits bits node bits into one to three fields with random
// names; no fields for 0 bits.
func splitNode(rng *rand.Rand, bits int) []snowflake.Field {
	var fields []snowflake.Field
	for left := bits; left > 0; {
		n := left
		if len(fields) < 2 && left > 1 && rng.IntN(2) == 0 {
			n = 1 + rng.IntN(left-1)
		}
		fields = append(fields, snowflake.Field{Name: fmt.Sprintf("f%d_%d", len(fields), rng.IntN(100)), Bits: n})
		left -= n
	}
	return fields
}

// TestBitsFingerprintMeansTheSameIDs is a property test. For random valid
// layouts, a copy with the node bits split and named afresh has the same
// BitsFingerprint and composes the same ID from the same random tick,
// node and sequence; and a copy differing in the epoch, the tick, a width
// or the order has another BitsFingerprint.
func TestBitsFingerprintMeansTheSameIDs(t *testing.T) {
	rng := rand.New(rand.NewPCG(34, 6))
	for range 2000 {
		l := randomLayout(rng)
		same := l
		same.Name = "renamed"
		same.Node = splitNode(rng, l.NodeBits())
		if l.Order == nil && rng.IntN(2) == 0 {
			same.Order = l.Parts()
		}
		if same.BitsFingerprint() != l.BitsFingerprint() {
			t.Fatalf("%s and %s (%+v vs %+v) differ only in node fields, yet have bits fingerprints %s and %s",
				l, same, l.Node, same.Node, l.BitsFingerprint(), same.BitsFingerprint())
		}
		for range 20 {
			tick, node, seq := rng.Uint64()&l.MaxTick(), rng.Uint64()&l.MaxNode(), rng.Uint64()&l.MaxSequence()
			a, errA := l.Compose(tick, node, seq)
			b, errB := same.Compose(tick, node, seq)
			if errA != nil || errB != nil || a != b {
				t.Fatalf("one bits fingerprint %s, yet (%d, %d, %d) composes %d (%v) in %s %+v and %d (%v) in %s %+v",
					l.BitsFingerprint(), tick, node, seq, a, errA, l, l.Node, b, errB, same, same.Node)
			}
		}
		for _, other := range differentBits(rng, l) {
			if other.Validate() != nil {
				continue
			}
			if other.BitsFingerprint() == l.BitsFingerprint() {
				t.Fatalf("%s and %s differ in the ID bits, yet share bits fingerprint %s", l, other, l.BitsFingerprint())
			}
		}
	}
}

// differentBits returns copies of l each differing in one component of
// the bits fingerprint.
func differentBits(rng *rand.Rand, l snowflake.Layout) []snowflake.Layout {
	edits := []func(*snowflake.Layout){
		func(o *snowflake.Layout) { o.Epoch = o.Epoch.Add(time.Duration(1+rng.IntN(1000)) * time.Millisecond) },
		func(o *snowflake.Layout) { o.Tick += time.Millisecond },
		func(o *snowflake.Layout) { o.TimeBits++ },
		func(o *snowflake.Layout) { o.SequenceBits++ },
		func(o *snowflake.Layout) { o.Node = splitNode(rng, o.NodeBits()+1) },
		func(o *snowflake.Layout) {
			p := o.Parts()
			i := rng.IntN(3)
			j := (i + 1 + rng.IntN(2)) % 3
			p[i], p[j] = p[j], p[i]
			o.Order = p
		},
	}
	out := make([]snowflake.Layout, len(edits))
	for i, edit := range edits {
		o := l
		o.Node = append([]snowflake.Field(nil), l.Node...)
		edit(&o)
		out[i] = o
	}
	return out
}

// TestBitsFingerprintOfPresets: the layouts of the review that found
// node directories keyed by Fingerprint share their bits.
func TestBitsFingerprintOfPresets(t *testing.T) {
	firn, twitter, sony := preset(t, "firn"), preset(t, "twitter"), preset(t, "sonyflake")
	worker, split := firn, firn
	worker.Node = []snowflake.Field{{Name: "worker", Bits: 10}}
	split.Node = []snowflake.Field{{Name: "node1", Bits: 5}, {Name: "node2", Bits: 5}}
	twitter10 := twitter
	twitter10.Node = []snowflake.Field{{Name: "node", Bits: 10}}
	sonyOut := snowflake.Layout{Epoch: sony.Epoch, Tick: sony.Tick, TimeBits: 39, SequenceBits: 8,
		Node: []snowflake.Field{{Name: "node", Bits: 16}}, Order: []snowflake.Part{"time", "sequence", "node"}}
	for _, pair := range [][2]snowflake.Layout{{firn, worker}, {firn, split}, {twitter, twitter10}, {sony, sonyOut}} {
		if pair[0].BitsFingerprint() != pair[1].BitsFingerprint() {
			t.Errorf("%s %+v and %s %+v: bits fingerprints %s and %s", pair[0], pair[0].Node, pair[1], pair[1].Node,
				pair[0].BitsFingerprint(), pair[1].BitsFingerprint())
		}
		if pair[0].Fingerprint() == pair[1].Fingerprint() {
			t.Errorf("%s %+v and %s %+v: one fingerprint", pair[0], pair[0].Node, pair[1], pair[1].Node)
		}
	}
	if firn.BitsFingerprint() == preset(t, "js53").BitsFingerprint() || firn.BitsFingerprint() == preset(t, "pgedge").BitsFingerprint() {
		t.Error("presets with other epochs or widths share firn's bits fingerprint")
	}
}
