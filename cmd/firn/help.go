package main

import (
	"slices"
	"strings"

	"github.com/firn-id/firn/cmd/firn/internal/config"
)

// ownFlags is the help of a command's own flags, each {flag, text}: at
// the column of its settings' help (config.Usage), wrapped as they are.
func ownFlags(rows ...[2]string) string {
	var b strings.Builder
	for _, r := range rows {
		b.WriteString(config.UsageEntry(r[0], r[1]))
	}
	return b.String()
}

// without returns uses without drop.
func without(uses []string, drop string) []string {
	return slices.DeleteFunc(slices.Clone(uses), func(u string) bool { return u == drop })
}
