package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/firn-id/firn/internal/digits"
)

// TestCachedTagsAsDocumented: docs/config.md gives the number of tag
// permutations kept as maxCachedTags has it.
func TestCachedTagsAsDocumented(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "docs", "config.md"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "permutations of up to " + digits.Group(maxCachedTags) + " tags"; !strings.Contains(string(b), want) {
		t.Errorf("docs/config.md does not say %q", want)
	}
}
