package segment

import (
	"errors"
	"fmt"
	"strings"
)

var (
	// ErrUnknownTag is returned for a tag the store does not have.
	ErrUnknownTag = errors.New("segment: unknown tag")

	// ErrUnavailable is returned when a tag's buffers are empty and no
	// range arrived within Config.MaxWait: the store is down or slow. It
	// wraps the store's last error when there is one.
	ErrUnavailable = errors.New("segment: unavailable: no buffered IDs and the store has not answered")

	// ErrTagExists is returned by Store.CreateTag for a tag that exists.
	ErrTagExists = errors.New("segment: tag exists")

	// ErrExhausted is returned when a tag's counter cannot move by a step
	// without passing MaxEnd (2^48 below the largest int64) or is
	// negative, and when a store hands out such a range: the counter has
	// (almost) run out. IDs are never issued from such a range; a new tag,
	// or a counter set back by hand after checking what was issued, is the
	// way on.
	ErrExhausted = errors.New("segment: tag exhausted: its counter is negative or near the largest int64")

	// ErrInvalid is returned for input no store may take: a tag that breaks
	// the tag rule (a *TagRuleError, see TagRule), a step outside
	// 1..StepLimit, a first ID outside 0..MaxEnd, a description longer than
	// the store's column, or a value the database refused as out of its
	// column's range. It is bad input, never an outage.
	ErrInvalid = errors.New("segment: invalid input")

	// ErrClosed is returned by an allocator used after Close.
	ErrClosed = errors.New("segment: allocator closed")
)

// TagError names the tag an error is about.
type TagError struct {
	Tag string
	Err error
}

// Error names the package once: "segment: tag "x": unknown tag", not
// "segment: tag "x": segment: unknown tag".
func (e *TagError) Error() string {
	return fmt.Sprintf("segment: tag %q: %s", e.Tag, strings.TrimPrefix(e.Err.Error(), "segment: "))
}

// Unwrap returns the underlying error.
func (e *TagError) Unwrap() error { return e.Err }
