// Package fixture holds what TestErrorTextRule must refuse and what it
// must let pass: each line marked "refused" is one finding.
package fixture

import (
	"errors"
	"regexp"
	"strings"
)

var terms = strings.NewReplacer("endpoint ", "")

var re = regexp.MustCompile(`x`)

func refused(err error) []string {
	return []string{
		strings.TrimPrefix(err.Error(), "zkstore: "),               // refused
		strings.Replace(err.Error(), "a", "b", 1),                  // refused
		strings.ReplaceAll(oneLine(err.Error()), "a", "b"),         // refused
		terms.Replace(err.Error()),                                 // refused
		re.ReplaceAllString(err.Error(), ""),                       // refused
		strings.TrimSuffix(errors.Unwrap(err).Error(), " timeout"), // refused
	}
}

func allowed(err error, s string) []string {
	return []string{
		strings.TrimPrefix(s, "x"),
		err.Error(),
		terms.Replace(s),
	}
}

func oneLine(s string) string { return s }
