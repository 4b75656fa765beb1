package segment

import (
	"fmt"
	"math"
	"unicode"
	"unicode/utf8"
)

// StepLimit is the largest step a tag may have: 2^31−1, what the int step
// column of Leaf's and Tinyid's tables holds, and so the largest any store
// holds. Creating a tag, changing its step and the allocator's adaptive
// doubling all stay at or below it.
const StepLimit = math.MaxInt32

// Limits are what a store's columns hold. Lengths count characters
// (Unicode code points), as VARCHAR(n) does in PostgreSQL and MySQL.
type Limits struct {
	// Tag is the longest tag, in characters.
	Tag int
	// Description is the longest description, in characters; 0: the store
	// keeps none, and a description given is dropped.
	Description int
	// BMP says the store holds only characters up to U+FFFF (MySQL's
	// utf8, i.e. utf8mb3, the charset of Tinyid's table).
	BMP bool
}

// LongestTag is the longest tag any store holds, in characters (the bound
// of localstore and etcdstore, whose keys have no column): a tag longer
// cannot be valid anywhere, and the client refuses it before sending.
const LongestTag = 1024

// DefaultLimits are the limits of a store that declares none: those of
// Leaf's leaf_alloc (biz_tag varchar(128), description varchar(256)).
var DefaultLimits = Limits{Tag: 128, Description: 256}

// Limiter is a Store that declares its Limits.
type Limiter interface {
	Limits() Limits
}

// LimitsOf returns the limits s declares, or DefaultLimits.
func LimitsOf(s Store) Limits {
	if l, ok := s.(Limiter); ok {
		return l.Limits()
	}
	return DefaultLimits
}

// TagRule is the rule a new tag must meet, said once for every entry
// point: the CLI, HTTP, the admin API, gRPC, Leaf's and Tinyid's routes
// and the client.
const TagRule = "a tag is valid UTF-8, 1 to the store's limit of characters, all printable, with no space at either end"

// TagRuleError names the part of the tag rule a tag breaks.
// errors.Is(err, ErrInvalid) is true.
type TagRuleError struct {
	Tag    string
	Reason string
}

func (e *TagRuleError) Error() string {
	return fmt.Sprintf("segment: tag %q %s (%s)", e.Tag, e.Reason, TagRule)
}

// Is makes errors.Is(err, ErrInvalid) true.
func (e *TagRuleError) Is(target error) bool { return target == ErrInvalid }

// CheckTag applies the rule for serving an existing tag: valid UTF-8 and
// 1 to l.Tag characters, nothing more, so rows that Leaf and Tinyid
// already serve keep working.
func CheckTag(tag string, l Limits) error {
	switch {
	case tag == "":
		return &TagRuleError{Tag: tag, Reason: "is empty"}
	case !utf8.ValidString(tag):
		return &TagRuleError{Tag: tag, Reason: "is not valid UTF-8"}
	case l.Tag > 0 && utf8.RuneCountInString(tag) > l.Tag:
		return &TagRuleError{Tag: tag, Reason: fmt.Sprintf("has %d characters, over the store's limit of %d", utf8.RuneCountInString(tag), l.Tag)}
	}
	return nil
}

// CheckNewTag applies the full rule for creating a tag (TagRule), with the
// store's limits.
func CheckNewTag(tag string, l Limits) error {
	if err := CheckTag(tag, l); err != nil {
		return err
	}
	first, _ := utf8.DecodeRuneInString(tag)
	last, _ := utf8.DecodeLastRuneInString(tag)
	if unicode.IsSpace(first) || unicode.IsSpace(last) {
		return &TagRuleError{Tag: tag, Reason: "begins or ends with a space"}
	}
	for _, r := range tag {
		switch {
		case !unicode.IsPrint(r):
			return &TagRuleError{Tag: tag, Reason: fmt.Sprintf("holds %U, which is not printable", r)}
		case l.BMP && r > 0xFFFF:
			return &TagRuleError{Tag: tag, Reason: fmt.Sprintf("holds %U, which the store's charset (MySQL utf8) cannot hold", r)}
		}
	}
	return nil
}

// CheckStep returns ErrInvalid for a step outside 1..StepLimit.
func CheckStep(step int64) error {
	if step < 1 || step > StepLimit {
		return fmt.Errorf("step %d: want 1 to %d: %w", step, StepLimit, ErrInvalid)
	}
	return nil
}

// checkID returns ErrInvalid for an ID a store may not start a counter
// at: outside 0..MaxEnd.
func checkID(what string, id int64) error {
	if id < 0 || id > MaxEnd {
		return fmt.Errorf("%s %d: want 0 to %d: %w", what, id, int64(MaxEnd), ErrInvalid)
	}
	return nil
}

// CheckCreate checks everything CreateTag writes against the full tag rule
// and the store's limits: the tag, a first ID in 0..MaxEnd, the step and
// the description. Stores call it before they write, so no database
// truncates or refuses a value.
func CheckCreate(tag string, first, step int64, description string, l Limits) error {
	if err := CheckNewTag(tag, l); err != nil {
		return err
	}
	if err := checkID("first ID", first); err != nil {
		return err
	}
	if err := CheckStep(step); err != nil {
		return err
	}
	if l.Description == 0 {
		return nil
	}
	switch n := utf8.RuneCountInString(description); {
	case !utf8.ValidString(description):
		return fmt.Errorf("description %q is not valid UTF-8: %w", description, ErrInvalid)
	case n > l.Description:
		return fmt.Errorf("description of %d characters: the store holds at most %d: %w", n, l.Description, ErrInvalid)
	}
	for _, r := range description {
		if r == 0 || (l.BMP && r > 0xFFFF) {
			return fmt.Errorf("description holds %U, which the store cannot hold: %w", r, ErrInvalid)
		}
	}
	return nil
}
