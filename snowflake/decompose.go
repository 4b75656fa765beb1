package snowflake

import (
	"math/big"
	"time"
)

// FieldValue is the value of one named node field in a decoded ID.
type FieldValue struct {
	Name  string
	Value uint64
}

// Parts is an ID taken apart by Layout.Decompose.
type Parts struct {
	ID       uint64
	Tick     uint64
	Time     time.Time // start of the tick, UTC
	Node     uint64    // the whole node part
	Fields   []FieldValue
	Sequence uint64
}

// Decompose takes an ID apart. It returns a *RangeError if the ID has bits
// set above the layout's width. The layout must be valid.
func (l Layout) Decompose(id uint64) (Parts, error) {
	if bits := l.Bits(); bits < 64 && id>>uint(bits) != 0 {
		return Parts{}, &RangeError{What: "ID", Value: id, Max: 1<<uint(bits) - 1, Layout: l.Name, Bits: bits}
	}
	p := Parts{ID: id}
	p.Tick, p.Node, p.Sequence = l.Splitter().Split(id)
	p.Time = l.TickTime(p.Tick)
	p.Fields = l.NodeFields(p.Node)
	return p, nil
}

// FormatTime writes t, a decoded time, in RFC 3339 UTC to the layout's
// precision: microseconds for a tick shorter than a millisecond
// (CockroachDB's 10 µs), milliseconds otherwise.
func (l Layout) FormatTime(t time.Time) string {
	if !l.wholeMS() {
		return t.UTC().Format("2006-01-02T15:04:05.000000Z")
	}
	return t.UTC().Format("2006-01-02T15:04:05.000Z")
}

// Splitter takes IDs of one layout apart into tick, node and sequence,
// with the shifts and masks worked out once: Split neither allocates nor
// checks the ID's width.
type Splitter struct {
	timeShift, nodeShift, seqShift uint
	timeMask, nodeMask, seqMask    uint64
}

// Splitter returns the splitter of the layout, which must be valid.
func (l Layout) Splitter() Splitter {
	ts, ns, ss := l.shifts()
	return Splitter{timeShift: ts, nodeShift: ns, seqShift: ss,
		timeMask: l.MaxTick(), nodeMask: l.MaxNode(), seqMask: l.MaxSequence()}
}

// Split returns the tick, node and sequence of id. Bits above the
// layout's width are ignored: Decompose is the checked form.
func (s Splitter) Split(id uint64) (tick, node, sequence uint64) {
	return id >> s.timeShift & s.timeMask, id >> s.nodeShift & s.nodeMask, id >> s.seqShift & s.seqMask
}

// Capacity is what a layout can hold.
type Capacity struct {
	// Last is the start of the last representable tick; an ID can be
	// made until Last plus one tick.
	Last time.Time
	// Span is the time the time part covers from the epoch. It saturates
	// at the largest time.Duration (about 292 years).
	Span time.Duration
	// PerTick is the number of IDs one node can make in one tick.
	PerTick uint64
	// PerSecond is the number of IDs one node can make in one second.
	PerSecond float64
	// Nodes is the number of distinct node values.
	Nodes uint64
}

// Capacity returns what the layout can hold. The layout must be valid.
func (l Layout) Capacity() Capacity {
	ticks := new(big.Int).Lsh(big.NewInt(1), uint(l.TimeBits))
	span := new(big.Int).Mul(ticks, big.NewInt(int64(l.Tick)))
	c := Capacity{
		Last:      l.TickTime(l.MaxTick()),
		Span:      time.Duration(1<<63 - 1),
		PerTick:   l.MaxSequence() + 1,
		PerSecond: float64(l.MaxSequence()+1) * float64(time.Second) / float64(l.Tick),
		Nodes:     l.MaxNode() + 1,
	}
	if span.IsInt64() {
		c.Span = time.Duration(span.Int64())
	}
	return c
}

// ExhaustedAt reports whether the layout can no longer issue an ID at
// now, and when it ran out (or will): the end of its last representable
// tick. Decoding its IDs keeps working; generating them cannot. The
// layout must be valid.
func (l Layout) ExhaustedAt(now time.Time) (since time.Time, exhausted bool) {
	since = time.UnixMilli(l.lastTickEndMS()).UTC()
	return since, !now.Before(since)
}
