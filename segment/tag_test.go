package segment_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/firn-id/firn/segment"
	"github.com/firn-id/firn/segment/segmenttest"
)

// TestNewTagRule runs the shared table against the rule itself.
func TestNewTagRule(t *testing.T) {
	for _, l := range []segment.Limits{segment.DefaultLimits, {Tag: 63, BMP: true}} {
		for _, tc := range segmenttest.NewTagCases(l) {
			err := segment.CheckNewTag(tc.Tag, l)
			var re *segment.TagRuleError
			switch {
			case tc.Valid && err != nil:
				t.Errorf("%s: CheckNewTag(%q) = %v; want it valid", tc.Name, tc.Tag, err)
			case !tc.Valid && (!errors.As(err, &re) || !errors.Is(err, segment.ErrInvalid)):
				t.Errorf("%s: CheckNewTag(%q) = %v; want a *TagRuleError", tc.Name, tc.Tag, err)
			case !tc.Valid && !strings.Contains(err.Error(), segment.TagRule):
				t.Errorf("%s: %q does not name the rule", tc.Name, err)
			}
		}
	}
}

// TestMultiCreatesWithinTheSmallestLimits: a set of stores creates only
// tags every store can hold — here Tinyid's 63 characters of MySQL utf8
// beside Leaf's 128 — and runs the shared table with those limits.
func TestMultiCreatesWithinTheSmallestLimits(t *testing.T) {
	segmenttest.RunTagRuleTests(t, func(t *testing.T) segment.Store {
		a, b := segmenttest.NewMemStore(), segmenttest.NewMemStore()
		a.SetLimits(segment.Limits{Tag: 63, BMP: true})
		m, err := segment.NewMulti(a, b)
		if err != nil {
			t.Fatal(err)
		}
		if l := m.Limits(); l.Tag != 63 || !l.BMP || l.Description != 256 {
			t.Fatalf("Multi.Limits() = %+v; want 63 characters, BMP only, 256 of description", l)
		}
		return m
	})
}

// TestAllocatorRefusesATagNoRowCanBe: a tag that is not UTF-8 or longer
// than the store holds is refused as invalid input, before the store is
// asked (on the old code it went to the store and into the unknown-tag
// cache).
func TestAllocatorRefusesATagNoRowCanBe(t *testing.T) {
	s := segmenttest.NewMemStore()
	a := newAllocator(t, s, segment.Config{})
	s.Fail(errors.New("the store was asked"))
	for _, tag := range []string{"\xff", "order\xc3", strings.Repeat("x", 129), ""} {
		_, err := a.Next(context.Background(), tag)
		var re *segment.TagRuleError
		if !errors.As(err, &re) || !errors.Is(err, segment.ErrInvalid) {
			t.Errorf("Next(%q) = %v; want a *TagRuleError", tag, err)
		}
		if _, err := a.NextN(context.Background(), tag, make([]int64, 3)); !errors.As(err, &re) {
			t.Errorf("NextN(%q) = %v; want a *TagRuleError", tag, err)
		}
	}
}

// TestServingKeepsRowsTheOriginalsServe: rows that break only the new-tag
// rule — a trailing space, a control character — are served as they are.
func TestServingKeepsRowsTheOriginalsServe(t *testing.T) {
	s := segmenttest.NewMemStore()
	for _, tag := range []string{"order ", " order", "a\tb", "\u200bx"} {
		s.PutRow(segment.TagInfo{Tag: tag, Next: 1, Step: 10})
	}
	a := newAllocator(t, s, segment.Config{})
	for _, tag := range []string{"order ", " order", "a\tb", "\u200bx"} {
		if id, err := a.Next(context.Background(), tag); err != nil || id != 1 {
			t.Errorf("Next(%q) = %d, %v; want 1", tag, id, err)
		}
	}
	if err := s.CreateTag(context.Background(), "new ", 1, 10, ""); !errors.Is(err, segment.ErrInvalid) {
		t.Errorf("CreateTag(%q) = %v; want ErrInvalid", "new ", err)
	}
}

// FuzzTagRule: for any string the checks answer without panicking, and
// what the new-tag rule accepts the serving rule accepts, is UTF-8, and
// has no space at either end.
func FuzzTagRule(f *testing.F) {
	for _, tc := range segmenttest.NewTagCases(segment.DefaultLimits) {
		f.Add(tc.Tag)
	}
	f.Fuzz(func(t *testing.T, tag string) {
		l := segment.Limits{Tag: 63, BMP: true}
		if segment.CheckNewTag(tag, l) != nil {
			return
		}
		if err := segment.CheckTag(tag, l); err != nil {
			t.Fatalf("CheckNewTag(%q) accepted what CheckTag refuses: %v", tag, err)
		}
		if !utf8.ValidString(tag) || strings.TrimSpace(tag) != tag || utf8.RuneCountInString(tag) > 63 {
			t.Fatalf("CheckNewTag accepted %q", tag)
		}
	})
}
