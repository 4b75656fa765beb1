package wide

import (
	"fmt"
	"time"

	"github.com/firn-id/firn/snowflake"
)

// maxUnixMS is the largest 48-bit Unix millisecond timestamp.
const maxUnixMS = 1<<48 - 1

// The widths of the tail, the bits after the timestamp that are neither
// version nor variant.
const (
	uuidTail = 74 // rand_a (12) + rand_b (62)
	ulidTail = 80
)

// packing maps the slots of one layout to 128 bits and back.
type packing struct {
	layout   snowflake.Layout
	split    snowflake.Splitter
	epochMS  int64
	tickMS   int64
	lastTick uint64 // the last tick whose start fits 48 bits
	nodeBits uint
	slotBits uint // sequence + node
}

// newPacking returns the packing of l, which must be valid.
func newPacking(l snowflake.Layout) (packing, error) {
	if err := l.Validate(); err != nil {
		return packing{}, err
	}
	if l.Tick%time.Millisecond != 0 {
		// Decode-only layouts tick in microseconds (cockroachdb): no
		// UUIDv7 or ULID, whose time is in milliseconds, is theirs.
		return packing{}, fmt.Errorf("%w: layout %s ticks in %s, and a UUIDv7 or ULID holds whole milliseconds", ErrNotLayout, l.Name, l.Tick)
	}
	p := packing{layout: l, split: l.Splitter(), epochMS: l.Epoch.UnixMilli(), tickMS: int64(l.Tick / time.Millisecond),
		nodeBits: uint(l.NodeBits()), slotBits: uint(l.NodeBits() + l.SequenceBits)}
	// A valid epoch is before 2262 (it has a nanosecond Unix time), far
	// below the 48-bit limit in 10889.
	p.lastTick = min(l.MaxTick(), uint64((maxUnixMS-p.epochMS)/p.tickMS))
	return p, nil
}

// tail packs sequence and node above r's low random bits in a tail of
// width bits: (sequence<<node bits | node) << rest | random.
func (p *packing) tail(node, seq uint64, width uint, r0, r1 uint64) (hi, lo uint64) {
	x := seq<<p.nodeBits | node
	rest := width - p.slotBits // at least 11: slotBits ≤ 63
	if rest >= 64 {
		hi, lo = x<<(rest-64)|r1&(1<<(rest-64)-1), r0
	} else {
		hi, lo = x>>(64-rest), x<<rest|r0&(1<<rest-1)
	}
	return hi, lo
}

// untail returns the node and sequence of a tail of width bits.
func (p *packing) untail(hi, lo uint64, width uint) (node, seq uint64) {
	rest := width - p.slotBits
	var x uint64
	if rest >= 64 {
		x = hi >> (rest - 64)
	} else {
		x = hi<<(64-rest) | lo>>rest
	}
	x &= 1<<p.slotBits - 1
	return x & (1<<p.nodeBits - 1), x >> p.nodeBits
}

// unixMS returns the start of tick in Unix milliseconds, or ErrTimeRange.
func (p *packing) unixMS(tick uint64) (uint64, error) {
	if tick > p.lastTick {
		return 0, fmt.Errorf("tick %d starts past %s: %w", tick, time.UnixMilli(maxUnixMS).UTC().Format(time.RFC3339), ErrTimeRange)
	}
	return uint64(p.epochMS + int64(tick)*p.tickMS), nil
}

// uuid packs one slot and random bits r0, r1 as a UUIDv7.
func (p *packing) uuid(dst *[16]byte, tick, node, seq, r0, r1 uint64) error {
	ms, err := p.unixMS(tick)
	if err != nil {
		return err
	}
	th, tl := p.tail(node, seq, uuidTail, r0, r1)
	put(dst, ms<<16|0x7<<12|(th<<2|tl>>62)&0xfff, 0b10<<62|tl&(1<<62-1))
	return nil
}

// ulid packs one slot and random bits r0, r1 as a ULID.
func (p *packing) ulid(dst *[16]byte, tick, node, seq, r0, r1 uint64) error {
	ms, err := p.unixMS(tick)
	if err != nil {
		return err
	}
	th, tl := p.tail(node, seq, ulidTail, r0, r1)
	put(dst, ms<<16|th&0xffff, tl)
	return nil
}

// parts returns the slot of a timestamp and tail.
func (p *packing) parts(ms, node, seq uint64) (snowflake.Parts, error) {
	since := int64(ms) - p.epochMS
	if since < 0 || since%p.tickMS != 0 || uint64(since/p.tickMS) > p.layout.MaxTick() {
		return snowflake.Parts{}, fmt.Errorf("timestamp %s is not a tick start of layout %s: %w",
			time.UnixMilli(int64(ms)).UTC().Format("2006-01-02T15:04:05.000Z"), p.layout.Name, ErrNotLayout)
	}
	id, err := p.layout.Compose(uint64(since/p.tickMS), node, seq)
	if err != nil {
		return snowflake.Parts{}, fmt.Errorf("%w: %w", ErrNotLayout, err)
	}
	return p.layout.Decompose(id)
}

// fromUUID returns the slot of a UUIDv7.
func (p *packing) fromUUID(b *[16]byte) (snowflake.Parts, error) {
	hi, lo := get(b)
	if hi>>12&0xf != 7 || lo>>62 != 0b10 {
		return snowflake.Parts{}, ErrNotV7
	}
	th, tl := (hi&0xfff)>>2, (hi&0x3)<<62|lo&(1<<62-1)
	node, seq := p.untail(th, tl, uuidTail)
	return p.parts(hi>>16, node, seq)
}

// fromULID returns the slot of a ULID.
func (p *packing) fromULID(b *[16]byte) (snowflake.Parts, error) {
	hi, lo := get(b)
	node, seq := p.untail(hi&0xffff, lo, ulidTail)
	return p.parts(hi>>16, node, seq)
}

func put(dst *[16]byte, hi, lo uint64) {
	for i := range 8 {
		dst[i] = byte(hi >> (56 - 8*i))
		dst[8+i] = byte(lo >> (56 - 8*i))
	}
}

func get(b *[16]byte) (hi, lo uint64) {
	for i := range 8 {
		hi = hi<<8 | uint64(b[i])
		lo = lo<<8 | uint64(b[8+i])
	}
	return hi, lo
}
