package segmenttest

import (
	"errors"
	"strings"
	"testing"

	"github.com/firn-id/firn/segment"
)

// TagCase is one case of the new-tag rule (segment.TagRule).
type TagCase struct {
	Name  string
	Tag   string
	Valid bool // creating the tag succeeds
}

// NewTagCases returns the new-tag rule as one table, for a store (or set
// of stores) with limits l: the segment layer, every store and every entry
// point that creates tags run the same cases. No tag holds a slash, so each
// is one segment of a URL path.
func NewTagCases(l segment.Limits) []TagCase {
	if l.Tag < 1 {
		l.Tag = segment.LongestTag
	}
	return []TagCase{
		{Name: "a plain name", Tag: "order", Valid: true},
		{Name: "one character", Tag: "a", Valid: true},
		{Name: "a space inside", Tag: "order list", Valid: true},
		{Name: "punctuation", Tag: "order-2024.v1_eu:x", Valid: true},
		{Name: "letters beyond ASCII", Tag: "注文", Valid: true},
		{Name: "a character beyond U+FFFF", Tag: "order😀", Valid: !l.BMP},
		{Name: "the store's limit", Tag: strings.Repeat("a", l.Tag), Valid: true},
		{Name: "the store's limit in two-byte characters", Tag: strings.Repeat("é", l.Tag), Valid: true},
		{Name: "one past the store's limit", Tag: strings.Repeat("a", l.Tag+1)},
		{Name: "one two-byte character past the limit", Tag: strings.Repeat("é", l.Tag+1)},
		{Name: "empty", Tag: ""},
		{Name: "a leading space", Tag: " order"},
		{Name: "a trailing space", Tag: "order "},
		{Name: "a trailing tab", Tag: "order\t"},
		{Name: "a leading no-break space", Tag: "\u00a0order"},
		{Name: "a trailing ideographic space", Tag: "order\u3000"},
		{Name: "a NUL", Tag: "or\x00der"},
		{Name: "a newline", Tag: "or\nder"},
		{Name: "DEL", Tag: "order\x7f"},
		{Name: "a zero-width space", Tag: "or\u200bder"},
		{Name: "a right-to-left override", Tag: "\u202eredro"},
		{Name: "not UTF-8", Tag: "\xff\xfe"},
		{Name: "a cut UTF-8 sequence", Tag: "order\xc3"},
	}
}

// RunTagRuleTests creates every case of NewTagCases on a store of its own
// and checks the answer: a valid tag is created and read back byte for
// byte, an invalid one is refused with a *segment.TagRuleError (so
// errors.Is(err, segment.ErrInvalid)) and leaves nothing behind.
func RunTagRuleTests(t *testing.T, newStore func(t *testing.T) segment.Store) {
	s := newStore(t)
	for _, tc := range NewTagCases(segment.LimitsOf(s)) {
		t.Run(tc.Name, func(t *testing.T) {
			err := s.CreateTag(ctx(t), tc.Tag, 1, 10, "")
			if !tc.Valid {
				var re *segment.TagRuleError
				if !errors.Is(err, segment.ErrInvalid) || !errors.As(err, &re) {
					t.Fatalf("CreateTag(%q) = %v; want a *segment.TagRuleError", tc.Tag, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("CreateTag(%q) = %v; want it created", tc.Tag, err)
			}
			info, err := s.Tag(ctx(t), tc.Tag)
			if err != nil || info.Tag != tc.Tag {
				t.Fatalf("Tag(%q) = %q, %v; want the tag byte for byte", tc.Tag, info.Tag, err)
			}
			if r := reserve(t, s, tc.Tag, 10); r.Start < 1 || r.Len() < 1 {
				t.Fatalf("Reserve(%q) = %+v; want the tag's first range", tc.Tag, r)
			}
		})
	}
	tags, err := s.Tags(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, info := range tags {
		if segment.CheckNewTag(info.Tag, segment.LimitsOf(s)) != nil {
			t.Errorf("the store lists %q, which the rule refuses", info.Tag)
		}
	}
}
