package segment

import "fmt"

var (
	// ErrUnknownTag is returned for a tag the store does not have.
	ErrUnknownTag = &kind{"unknown tag"}

	// ErrUnavailable is returned when a tag's buffers are empty and no
	// range arrived within Config.MaxWait: the store is down or slow. It
	// wraps the store's last error when there is one.
	ErrUnavailable = &kind{"unavailable: no buffered IDs and the store has not answered"}

	// ErrTagExists is returned by Store.CreateTag for a tag that exists.
	ErrTagExists = &kind{"tag exists"}

	// ErrExhausted is returned when a tag's counter cannot move by a step
	// without passing MaxEnd (2^48 below the largest int64) or is
	// negative, and when a store hands out such a range: the counter has
	// (almost) run out. IDs are never issued from such a range; a new tag,
	// or a counter set back by hand after checking what was issued, is the
	// way on.
	ErrExhausted = &kind{"tag exhausted: its counter is negative or near the largest int64"}

	// ErrInvalid is returned for input no store may take: a tag that breaks
	// the tag rule (a *TagRuleError, see TagRule), a step outside
	// 1..StepLimit, a first ID outside 0..MaxEnd, a description longer than
	// the store's column, or a value the database refused as out of its
	// column's range. It is bad input, never an outage.
	ErrInvalid = &kind{"invalid input"}

	// ErrClosed is returned by an allocator used after Close.
	ErrClosed = &kind{"allocator closed"}
)

// TagError names the tag an error is about.
type TagError struct {
	Tag string
	Err error
}

// Error names the package once: "segment: tag "x": unknown tag", not
// "segment: tag "x": segment: unknown tag". It knows this package's errors
// by their type, never by their text.
func (e *TagError) Error() string {
	if re, ok := e.Err.(*ResidueError); ok && re.Tag == e.Tag { // which names the tag
		return re.Error()
	}
	return fmt.Sprintf("segment: tag %q: %s", e.Tag, reason(e.Err))
}

// Unwrap returns the underlying error.
func (e *TagError) Unwrap() error { return e.Err }

// kind is the type of this package's sentinels: its message is the
// package's name and its reason, which a TagError prints without the name.
type kind struct{ reason string }

func (k *kind) Error() string { return "segment: " + k.reason }

// detailed is a sentinel with what is particular to one case after its
// words, and the errors that case wraps.
type detailed struct {
	kind   *kind
	detail error // fmt.Errorf's: its message follows the kind's; it unwraps to the causes
}

func (e *detailed) Error() string   { return "segment: " + e.reason() }
func (e *detailed) reason() string  { return e.kind.reason + e.detail.Error() }
func (e *detailed) Unwrap() []error { return []error{e.kind, e.detail} }

// Errorf returns an error of kind k, one of this package's sentinels,
// its message k's followed by format (": the range …", " (table t)"),
// which may wrap causes with %w: errors.Is(err, k) holds, and a TagError
// around it names the package once. A store uses it to say which kind
// its error is in this package's words. A k of another package is
// wrapped as fmt.Errorf("%w"+format) would.
func Errorf(k error, format string, args ...any) error {
	own, ok := k.(*kind)
	if !ok {
		return fmt.Errorf("%w"+format, append([]any{k}, args...)...)
	}
	return &detailed{kind: own, detail: fmt.Errorf(format, args...)}
}

// reason is err's message without this package's name when err is one of
// this package's own errors, else its message.
func reason(err error) string {
	switch e := err.(type) {
	case *kind:
		return e.reason
	case *detailed:
		return e.reason()
	}
	return err.Error()
}
