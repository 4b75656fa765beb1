// Package digits writes counts the way firn shows them to people: a comma
// between each group of three digits (4,096,000). The CLI uses it, and the
// status page's JavaScript follows the same rule (test/browser holds them
// to the same answers).
package digits

import "strconv"

// Group writes n in decimal with a comma between groups of three digits.
func Group(n uint64) string {
	s := strconv.FormatUint(n, 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
