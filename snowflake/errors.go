package snowflake

import (
	"errors"
	"fmt"
	"time"
)

var (
	// ErrNoReservation is returned by New when Config.Reservation is nil.
	// A generator without a reservation cannot keep its promise across
	// restarts; a caller who accepts that must say so with Unreserved.
	ErrNoReservation = errors.New("snowflake: no reservation: pass a lease, or snowflake.Unreserved() to accept duplicates after a restart with the clock set back")

	// ErrAlreadyBound is returned by the BindGenerator of this package's
	// reservations (Unreserved), and so by New, when the reservation
	// already drives another generator: two generators sharing one
	// reservation would both pass its HWM check. A nodeid.Lease returns
	// nodeid.ErrAlreadyBound instead.
	ErrAlreadyBound = errors.New("snowflake: reservation already bound to a generator")

	// ErrReservationMismatch is returned by New when the reservation was
	// taken for another node or another layout than Config names
	// (nodeid.Lease says both): the generator's IDs would carry a node
	// no lease protects.
	ErrReservationMismatch = errors.New("snowflake: the reservation is for another node or layout")

	// ErrNotServing is returned by Next and NextN when the next tick lies
	// past the reserved high-water mark and the reservation has not been
	// extended (its store is slow or down, or the lease was lost). The
	// generator stops there rather than risk a duplicate; it serves again
	// as soon as the reservation moves on.
	ErrNotServing = errors.New("snowflake: not serving: next tick is past the reserved high-water mark")

	// ErrLayoutExhausted is returned by Next and NextN once the layout's
	// last representable tick has been used: the time part would overflow.
	ErrLayoutExhausted = errors.New("snowflake: layout exhausted: past its last representable tick")
)

// LayoutError reports an invalid layout, saying what is wrong and, where
// the widths are at fault, what the bits add up to.
type LayoutError struct {
	Layout string // the layout's name, or "custom"
	Reason string
}

func (e *LayoutError) Error() string {
	return fmt.Sprintf("snowflake: layout %s: %s", e.Layout, e.Reason)
}

// RangeError reports a value that does not fit its bits: a node, a
// sequence, a tick, or an ID outside its layout. For an ID (What "ID"),
// Layout and Bits name the layout and its width, so a caller can word
// the refusal itself.
type RangeError struct {
	What  string
	Value uint64
	Max   uint64

	Layout string // the layout's Name; set for an ID
	Bits   int    // the layout's width in bits; set for an ID
}

func (e *RangeError) Error() string {
	return fmt.Sprintf("snowflake: %s %d out of range 0..%d", e.What, e.Value, e.Max)
}

// NodeFieldsError reports node values given for a layout with another
// number of node fields.
type NodeFieldsError struct {
	Layout         string // the layout's name, "custom" for one without
	Fields, Values int
}

func (e *NodeFieldsError) Error() string { return "snowflake: " + e.Reason() }

// Reason is the message without the package's name, for a caller that
// names the input itself.
func (e *NodeFieldsError) Reason() string {
	return fmt.Sprintf("layout %s has %d node fields, got %d values", e.Layout, e.Fields, e.Values)
}

// ClockBehindError reports a clock further behind the generator's next
// tick (or the reserved start) than the configured bound allows. The
// generator returns it at once instead of sleeping until the clock
// catches up.
type ClockBehindError struct {
	Last time.Time // the start of the tick the generator must issue next
	Now  time.Time // the clock's reading
}

func (e *ClockBehindError) Error() string {
	return fmt.Sprintf("snowflake: clock behind by %s: next tick starts %s, clock reads %s",
		e.Last.Sub(e.Now), e.Last.UTC().Format(time.RFC3339Nano), e.Now.UTC().Format(time.RFC3339Nano))
}
