package segment_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/firn-id/firn/segment"
)

// TestTagErrorNamesPackageOnce holds the TagError's message to the
// package's errors by their type: a sentinel, one with a detail and a
// cause, and another package's error keep their words.
func TestTagErrorNamesPackageOnce(t *testing.T) {
	cause := errors.New("dial tcp: refused")
	tests := []struct {
		name string
		err  error
		want string
		is   []error
	}{
		{"sentinel", segment.ErrUnknownTag, `segment: tag "x": unknown tag`, []error{segment.ErrUnknownTag}},
		{"detail", segment.Errorf(segment.ErrInvalid, ": step %d", 0), `segment: tag "x": invalid input: step 0`, []error{segment.ErrInvalid}},
		{"cause", segment.Errorf(segment.ErrUnavailable, ": %w", cause),
			`segment: tag "x": unavailable: no buffered IDs and the store has not answered: dial tcp: refused`, []error{segment.ErrUnavailable, cause}},
		{"wrapped", fmt.Errorf("store 1: %w", segment.ErrTagExists), `segment: tag "x": store 1: segment: tag exists`, []error{segment.ErrTagExists}},
		{"other", cause, `segment: tag "x": dial tcp: refused`, []error{cause}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := &segment.TagError{Tag: "x", Err: tt.err}
			if got := err.Error(); got != tt.want {
				t.Errorf("Error() = %q, want %q", got, tt.want)
			}
			for _, target := range tt.is {
				if !errors.Is(err, target) {
					t.Errorf("errors.Is(%v, %v) = false", err, target)
				}
			}
		})
	}
}
