package segment

import (
	"context"
	"fmt"
	"math"
	"time"
)

// Range is a reserved run of IDs: Start, Start+Delta, Start+2·Delta, …
// below End. Delta is 1 unless several stores share a tag, each issuing
// its own residue class.
type Range struct {
	Start, End int64
	Delta      int64
	// Step is the tag's configured step as the store holds it now (0 if
	// the store does not say): an allocator follows changes to it.
	Step int64
	// Set and SetSize are the store set the row records, if it records
	// one (firn's own table); segment.Multi checks them on every range.
	Set     string
	SetSize int64
	// Opaque is the permutation record of the tag's row (Recorded): ""
	// for plain IDs. The allocator serves a range only if it matches.
	Opaque string
}

// Len returns the number of IDs in the range.
func (r Range) Len() int64 {
	if r.End <= r.Start {
		return 0
	}
	return (r.End - r.Start + r.Delta - 1) / r.Delta
}

// MaxEnd is the largest end a range may have: 2^48 below the largest
// int64, so that no position past a range (NextN adds up to len(dst)·Delta)
// can wrap. A counter that reaches it is exhausted.
const MaxEnd = math.MaxInt64 - 1<<48

// MaxDelta is the largest Delta a range may have: the number of stores
// that can share a tag, far more than any set needs.
const MaxDelta = 1 << 16

// CanReserve returns ErrExhausted if a counter at next cannot give step
// more IDs without passing MaxEnd, or is negative. Stores call it before
// they move a counter, so a counter never wraps.
func CanReserve(next, step int64) error {
	if next < 0 || step > MaxEnd || next > MaxEnd-step {
		return fmt.Errorf("counter at %d, step %d: %w", next, step, ErrExhausted)
	}
	return nil
}

// Check returns an error for a range no ID may be issued from: negative,
// past MaxEnd, empty, or with a Delta outside 1..MaxDelta.
func (r Range) Check() error {
	switch {
	case r.Start < 0 || r.End > MaxEnd:
		return fmt.Errorf("the range [%d, %d): %w", r.Start, r.End, ErrExhausted)
	case r.Delta < 1 || r.Delta > MaxDelta:
		return fmt.Errorf("the range [%d, %d) has delta %d: want 1 to %d", r.Start, r.End, r.Delta, MaxDelta)
	case r.Len() < 1:
		return fmt.Errorf("the range [%d, %d) step %d is empty", r.Start, r.End, r.Delta)
	}
	return nil
}

// CheckResidue returns an error unless remainder modulo delta is a
// residue class a store may issue: delta 1 to MaxDelta, remainder 0 to
// delta-1. A row outside it issues no ID.
func CheckResidue(delta, remainder int64) error {
	if delta < 1 || delta > MaxDelta || remainder < 0 || remainder >= delta {
		return fmt.Errorf("delta %d and remainder %d do not make a residue class of 1 to %d stores", delta, remainder, MaxDelta)
	}
	return nil
}

// TagInfo describes a tag as its store holds it.
type TagInfo struct {
	Tag         string
	Next        int64 // the first ID the next range would hold
	Step        int64 // the configured step: the width reserved per fetch
	Delta       int64 // IDs are Remainder modulo Delta: 1 and 0 for one store
	Remainder   int64
	Set         string // the store set the row belongs to, where recorded
	SetSize     int64  // the number of stores in that set; 0: not recorded
	Opaque      string // the permutation record (Recorded); "" for plain IDs
	Description string
	Updated     time.Time
}

// Class describes the residue class the tag's IDs fall in, as firn tag
// list shows it: "-" for a tag of one store (every ID), "R mod D" for one
// of a set of D stores, and "INVALID: R mod D, issues nothing" for a row
// outside every class (written by hand: Tinyid's delta 0, say), which
// CheckResidue refuses.
func (t TagInfo) Class() string {
	switch {
	case CheckResidue(t.Delta, t.Remainder) != nil:
		return fmt.Sprintf("INVALID: %d mod %d, issues nothing", t.Remainder, t.Delta)
	case t.Delta > 1:
		return fmt.Sprintf("%d mod %d", t.Remainder, t.Delta)
	}
	return "-"
}

// Store keeps one counter per tag. Implementations: localstore, sqlstore
// (Leaf's and Tinyid's tables), etcdstore; segmenttest.MemStore for tests.
type Store interface {
	// Reserve moves the tag's counter forward by step in one atomic write
	// and returns the range it passed over. It never lowers a counter; an
	// unknown tag gives ErrUnknownTag.
	Reserve(ctx context.Context, tag string, step int64) (Range, error)
	// Tag returns a tag's state, or ErrUnknownTag.
	Tag(ctx context.Context, tag string) (TagInfo, error)
	// Tags lists every tag.
	Tags(ctx context.Context) ([]TagInfo, error)
	// CreateTag adds a tag whose first ID is first; ErrTagExists if it
	// exists.
	CreateTag(ctx context.Context, tag string, first, step int64, description string) error
	// SetStep changes a tag's configured step.
	SetStep(ctx context.Context, tag string, step int64) error
	// Advance moves a tag's counter to at least next, never back, and
	// returns the counter after.
	Advance(ctx context.Context, tag string, next int64) (int64, error)
}
