package snowflake

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Part names one of the three parts of an ID, for Layout.Order.
type Part string

// The parts of an ID.
const (
	PartTime     Part = "time"
	PartNode     Part = "node"
	PartSequence Part = "sequence"
)

// Field is one named field of the node part, such as "datacenter" or
// "worker". Fields are data: firn gives their names no meaning.
type Field struct {
	Name string
	Bits int
}

// Layout describes how an ID is built from time, node and sequence. It is
// plain data: build one by hand, start from a preset (see Preset), or parse
// one from flags or configuration. A Layout must be validated (Validate, or
// New for generators) before use.
type Layout struct {
	// Name is informational (the preset name, say); it is not part of the
	// Fingerprint.
	Name string
	// Epoch is the instant of tick 0. It must be a whole millisecond and
	// not before the Unix epoch.
	Epoch time.Time
	// Tick is the length of one tick: a positive whole number of
	// milliseconds (1 ms, 10 ms, 1 s…). A whole number of microseconds
	// that is not one of milliseconds (CockroachDB's 10 µs) is valid
	// too, but only for decoding: such a layout is DecodeOnly, because
	// the generator and its high-water mark count whole milliseconds.
	Tick time.Duration
	// TimeBits is the width of the time part, 1 to 63 bits.
	TimeBits int
	// Node lists the fields of the node part, most significant first. Their
	// bits add up to the node part's width; no fields means no node part.
	Node []Field
	// SequenceBits is the width of the sequence part, 0 to 62 bits.
	SequenceBits int
	// Order lists the parts from the most significant bits down. Nil means
	// time, node, sequence (Twitter); Sonyflake is time, sequence, node.
	Order []Part
}

// NodeBits returns the width of the node part: the sum of its fields.
func (l Layout) NodeBits() int {
	n := 0
	for _, f := range l.Node {
		n += f.Bits
	}
	return n
}

// Bits returns the total width of the layout.
func (l Layout) Bits() int { return l.TimeBits + l.NodeBits() + l.SequenceBits }

// JavaScriptBits is the widest layout whose IDs JavaScript's Number holds
// exactly: every ID is at most 2^53−1, Number.MAX_SAFE_INTEGER.
const JavaScriptBits = 53

// JavaScriptSafe reports whether every ID of the layout is an exact
// JavaScript Number (at most JavaScriptBits bits), as the js53 preset is.
func (l Layout) JavaScriptSafe() bool { return l.Bits() <= JavaScriptBits }

// DecodeOnly reports whether firn decodes the layout's IDs but does not
// generate them: ValidateForGenerator says why.
func (l Layout) DecodeOnly() bool { return l.ValidateForGenerator() != nil }

// ValidateForGenerator returns nil if the generator may issue IDs of the
// layout, or the *LayoutError New refuses it with: it uses all 64 bits, so
// its IDs do not fit a signed BIGINT (Discord, Instagram), or its tick is
// not a whole number of milliseconds, the unit of the generator and its
// HWM (CockroachDB's 10 µs). The layout must be valid.
func (l Layout) ValidateForGenerator() error {
	switch {
	case l.Bits() > 63:
		return &LayoutError{Layout: l.label(), Reason: fmt.Sprintf(
			"%s = %d bits: generated IDs must fit 63 bits (a signed BIGINT); this layout is decode-only", l.sum(), l.Bits())}
	case !l.wholeMS():
		return &LayoutError{Layout: l.label(), Reason: fmt.Sprintf(
			"tick %s is not a whole number of milliseconds, which the generator and its high-water mark count in; this layout is decode-only", l.Tick)}
	}
	return nil
}

// wholeMS reports whether the tick is a whole number of milliseconds.
func (l Layout) wholeMS() bool { return l.Tick%time.Millisecond == 0 }

// TimeFirst reports whether time is the top part of the order, so that
// every ID of a later tick is larger than every ID of an earlier one,
// whatever the node: only then is the largest ID issued a floor below
// which all IDs of earlier ticks lie.
func (l Layout) TimeFirst() bool { return l.order()[0] == PartTime }

// Increasing reports whether one generator issues the layout's IDs in
// increasing order, a batch (Generator.NextN) included. A generator's
// node never changes and it counts ticks up and, within a tick, the
// sequence; so its IDs increase exactly when time lies above the
// sequence in the order, or the sequence has no bits. Otherwise the
// first ID of a tick is below the last of the tick before (orders
// sequence,time,node; sequence,node,time; node,sequence,time). TimeFirst
// implies it; node,time,sequence (the seata preset) has it without.
func (l Layout) Increasing() bool {
	o := l.order()
	return l.SequenceBits == 0 || slices.Index(o, PartTime) < slices.Index(o, PartSequence)
}

// Parts returns the parts from the most significant bits down: Order,
// or time, node, sequence when Order is nil.
func (l Layout) Parts() []Part { return slices.Clone(l.order()) }

// order returns the effective field order.
func (l Layout) order() []Part {
	if l.Order == nil {
		return []Part{PartTime, PartNode, PartSequence}
	}
	return l.Order
}

// Validate checks the layout and returns a *LayoutError that says what is
// wrong and what the bits add up to.
func (l Layout) Validate() error {
	fail := func(format string, args ...any) error {
		return &LayoutError{Layout: l.label(), Reason: fmt.Sprintf(format, args...)}
	}
	switch {
	case l.Tick <= 0 || l.Tick%time.Microsecond != 0:
		return fail("tick %s is not a positive whole number of milliseconds (or, to decode only, of microseconds)", l.Tick)
	case l.Epoch.IsZero() || l.Epoch.UnixMilli() < 0:
		return fail("epoch %s is before the Unix epoch (1970-01-01)", l.Epoch.UTC().Format(time.RFC3339Nano))
	case l.Epoch.UnixNano()%int64(time.Millisecond) != 0:
		return fail("epoch %s is not a whole millisecond", l.Epoch.UTC().Format(time.RFC3339Nano))
	case l.TimeBits < 1 || l.TimeBits > 63:
		return fail("time bits %d outside 1..63", l.TimeBits)
	case l.SequenceBits < 0 || l.SequenceBits > 62:
		return fail("sequence bits %d outside 0..62", l.SequenceBits)
	}
	seen := map[string]bool{}
	for _, f := range l.Node {
		switch {
		case f.Name == "":
			return fail("a node field has no name")
		case !isFieldName(f.Name):
			return fail("node field name %q: use letters, digits, '_' and '-' only", f.Name)
		case seen[f.Name]:
			return fail("node field %q appears twice", f.Name)
		case f.Bits < 1 || f.Bits > 63:
			return fail("node field %q has %d bits, outside 1..63", f.Name, f.Bits)
		}
		seen[f.Name] = true
	}
	if err := l.validateOrder(); err != nil {
		return fail("%s", err)
	}
	if l.Bits() > 64 {
		return fail("%s = %d bits, over 64", l.sum(), l.Bits())
	}
	if l.lastTickEndMS() == math.MaxInt64 {
		return fail("%d time bits of %s overflow 64-bit Unix milliseconds", l.TimeBits, l.Tick)
	}
	return nil
}

// isFieldName reports whether name holds only ASCII letters, digits, '_'
// and '-', as every preset's field names do. Fingerprint joins names with
// ':' and ',': a name holding either could make two layouts share a
// fingerprint, and a store would take them for one layout.
func isFieldName(name string) bool {
	for _, r := range name {
		if (r < 'a' || r > 'z') && (r < 'A' || r > 'Z') && (r < '0' || r > '9') && r != '_' && r != '-' {
			return false
		}
	}
	return true
}

func (l Layout) validateOrder() error {
	o := l.order()
	if len(o) != 3 {
		return fmt.Errorf("order %q must name time, node and sequence once each", joinParts(o))
	}
	seen := map[Part]bool{}
	for _, p := range o {
		if p != PartTime && p != PartNode && p != PartSequence {
			return fmt.Errorf("order names unknown part %q (want time, node, sequence)", p)
		}
		if seen[p] {
			return fmt.Errorf("order %q names %q twice", joinParts(o), p)
		}
		seen[p] = true
	}
	return nil
}

func joinParts(o []Part) string {
	s := make([]string, len(o))
	for i, p := range o {
		s[i] = string(p)
	}
	return strings.Join(s, ",")
}

// sum spells out the bit sum, e.g. "37 time + 20 node + 16 sequence".
func (l Layout) sum() string {
	parts := make([]string, 0, 3)
	for _, p := range l.order() {
		switch p {
		case PartTime:
			parts = append(parts, fmt.Sprintf("%d time", l.TimeBits))
		case PartNode:
			parts = append(parts, fmt.Sprintf("%d node", l.NodeBits()))
		case PartSequence:
			parts = append(parts, fmt.Sprintf("%d sequence", l.SequenceBits))
		}
	}
	return strings.Join(parts, " + ")
}

func (l Layout) label() string {
	if l.Name != "" {
		return l.Name
	}
	return "custom"
}

// shifts returns the bit offset of each part.
func (l Layout) shifts() (timeShift, nodeShift, seqShift uint) {
	width := map[Part]int{PartTime: l.TimeBits, PartNode: l.NodeBits(), PartSequence: l.SequenceBits}
	off := 0
	o := l.order()
	for i := len(o) - 1; i >= 0; i-- {
		switch o[i] {
		case PartTime:
			timeShift = uint(off)
		case PartNode:
			nodeShift = uint(off)
		case PartSequence:
			seqShift = uint(off)
		}
		off += width[o[i]]
	}
	return
}

// MaxTick returns the last tick the time part can hold.
func (l Layout) MaxTick() uint64 { return 1<<uint(l.TimeBits) - 1 }

// MaxNode returns the largest node value: all node bits set.
func (l Layout) MaxNode() uint64 { return 1<<uint(l.NodeBits()) - 1 }

// MaxSequence returns the largest sequence value within one tick.
func (l Layout) MaxSequence() uint64 { return 1<<uint(l.SequenceBits) - 1 }

// tickMS returns the tick length in whole milliseconds (0 for a tick
// shorter than one: only decode-only layouts have those).
func (l Layout) tickMS() int64 { return int64(l.Tick / time.Millisecond) }

func (l Layout) tickUS() int64 { return int64(l.Tick / time.Microsecond) }

// lastTickEndMS returns the Unix millisecond at which the last tick ends
// (rounded up for a tick of microseconds), saturating instead of
// overflowing.
func (l Layout) lastTickEndMS() int64 {
	ticks := l.MaxTick() + 1
	if !l.wholeMS() {
		if ticks > uint64(math.MaxInt64/l.tickUS()) {
			return math.MaxInt64
		}
		end := (int64(ticks)*l.tickUS() + 999) / 1000
		if end > math.MaxInt64-l.Epoch.UnixMilli() {
			return math.MaxInt64
		}
		return l.Epoch.UnixMilli() + end
	}
	if ticks > uint64(math.MaxInt64/l.tickMS()) {
		return math.MaxInt64
	}
	end := int64(ticks) * l.tickMS()
	if end > math.MaxInt64-l.Epoch.UnixMilli() {
		return math.MaxInt64
	}
	return l.Epoch.UnixMilli() + end
}

// TickTime returns the instant at which tick t starts.
func (l Layout) TickTime(t uint64) time.Time {
	if !l.wholeMS() {
		return time.UnixMicro(l.Epoch.UnixMilli()*1000 + int64(t)*l.tickUS()).UTC()
	}
	return time.UnixMilli(l.Epoch.UnixMilli() + int64(t)*l.tickMS()).UTC()
}

// NodeValue composes the node part from one value per node field, most
// significant first (for the twitter layout: datacenter, worker). It returns
// an error naming the field whose value does not fit its bits.
func (l Layout) NodeValue(values ...uint64) (uint64, error) {
	if len(values) != len(l.Node) {
		return 0, &NodeFieldsError{Layout: l.label(), Fields: len(l.Node), Values: len(values)}
	}
	var node uint64
	for i, f := range l.Node {
		if values[i] > 1<<uint(f.Bits)-1 {
			return 0, &RangeError{What: "node field " + f.Name, Value: values[i], Max: 1<<uint(f.Bits) - 1}
		}
		node = node<<uint(f.Bits) | values[i]
	}
	return node, nil
}

// NodeFields splits a node value into its named fields, most significant
// first.
func (l Layout) NodeFields(node uint64) []FieldValue {
	out := make([]FieldValue, len(l.Node))
	shift := l.NodeBits()
	for i, f := range l.Node {
		shift -= f.Bits
		out[i] = FieldValue{Name: f.Name, Value: node >> uint(shift) & (1<<uint(f.Bits) - 1)}
	}
	return out
}

// Compose builds an ID from its parts. It returns a *RangeError if a part
// does not fit its bits.
func (l Layout) Compose(tick, node, sequence uint64) (uint64, error) {
	switch {
	case tick > l.MaxTick():
		return 0, &RangeError{What: "tick", Value: tick, Max: l.MaxTick()}
	case node > l.MaxNode():
		return 0, &RangeError{What: "node", Value: node, Max: l.MaxNode()}
	case sequence > l.MaxSequence():
		return 0, &RangeError{What: "sequence", Value: sequence, Max: l.MaxSequence()}
	}
	ts, ns, ss := l.shifts()
	return tick<<ts | node<<ns | sequence<<ss, nil
}

// Fingerprint identifies the layout's ID space: two layouts with the same
// fingerprint compose the same IDs. Name is not part of it. Stores record
// it so that nodes with different layouts never share a namespace.
func (l Layout) Fingerprint() string {
	var b strings.Builder
	tick := strconv.FormatInt(l.tickMS(), 10)
	if !l.wholeMS() {
		tick = strconv.FormatInt(l.tickUS(), 10) + "us"
	}
	fmt.Fprintf(&b, "epoch=%d;tick=%s;time=%d;seq=%d;order=%s;node=", l.Epoch.UnixMilli(), tick, l.TimeBits, l.SequenceBits, joinParts(l.order()))
	for _, f := range l.Node {
		b.WriteString(f.Name + ":" + strconv.Itoa(f.Bits) + ",")
	}
	sum := sha256.Sum256([]byte(b.String()))
	return "v1:" + hex.EncodeToString(sum[:8])
}

// BitsFingerprint identifies what of the layout reaches an ID's bits: the
// epoch, the tick, the widths of time, node and sequence, and their order.
// The names of the node fields, and how the node bits split into fields,
// are not part of it: they change how an ID is read, never which bits it
// has ([node:10], [worker:10] and twitter's [datacenter:5,worker:5] give
// one ID for one node value, tick and sequence). Two layouts with one
// BitsFingerprint compose the same ID from the same tick, node and
// sequence, so a registry that keeps nodes apart per layout must keep
// them apart per BitsFingerprint. Fingerprint, which stores record,
// tells such layouts apart.
func (l Layout) BitsFingerprint() string {
	tick := strconv.FormatInt(l.tickMS(), 10)
	if !l.wholeMS() {
		tick = strconv.FormatInt(l.tickUS(), 10) + "us"
	}
	s := fmt.Sprintf("epoch=%d;tick=%s;time=%d;node=%d;seq=%d;order=%s", l.Epoch.UnixMilli(), tick, l.TimeBits, l.NodeBits(), l.SequenceBits, joinParts(l.order()))
	sum := sha256.Sum256([]byte(s))
	return "bits1:" + hex.EncodeToString(sum[:8])
}

// String returns a one-line description such as
// "twitter: epoch 2010-11-04T01:42:54.657Z, tick 1ms, 41 time + 10 node + 12 sequence = 63 bits".
func (l Layout) String() string {
	return fmt.Sprintf("%s: epoch %s, tick %s, %s = %d bits", l.label(),
		l.Epoch.UTC().Format("2006-01-02T15:04:05.000Z"), l.Tick, l.sum(), l.Bits())
}
