package config

import (
	"slices"
	"strings"
)

// meant are names people give a setting, flag or variable that firn calls
// otherwise, with firn's names for it: a listening port is --http and
// --grpc on the command line, listen in http and grpc of the file.
var meant = map[string][]string{
	"port":    {"http", "listen"},
	"addr":    {"http", "listen"},
	"address": {"http", "listen"},
	"bind":    {"http", "listen"},
}

// Suggest returns the name of known that typed most likely stands for,
// or "" when none does: the first of known that people mean by typed
// ("port": http, listen), else the nearest one at most two edits away
// and fewer than typed has letters (a typo; the first of equals). Every
// "did you mean" of firn — setting keys, variables, flags — asks here.
func Suggest(typed string, known []string) string {
	for _, m := range meant[strings.ToLower(typed)] {
		if slices.Contains(known, m) {
			return m
		}
	}
	best, dist := "", min(3, len(typed))
	for _, k := range known {
		if d := editDistance(k, typed); d < dist {
			best, dist = k, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance of a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}
