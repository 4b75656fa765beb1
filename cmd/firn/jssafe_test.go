package main

import (
	"strings"
	"testing"

	"github.com/firn-id/firn/segment"
)

func TestJavaScriptSafeSettings(t *testing.T) {
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"63-bit layout refused", []string{"--javascript-safe"}, 2, "--layout js53"},
		{"js53 accepted", []string{"--javascript-safe", "--layout", "js53"}, 0, ""},
		{"segments only: no layout to check", []string{"--javascript-safe", "--snowflake=false"}, 0, ""},
		{"a tag list", []string{"--javascript-safe-tags", "order,user"}, 0, ""},
		{"every tag", []string{"--javascript-safe-tags", "*"}, 0, ""},
		{"an invalid tag", []string{"--javascript-safe-tags", "order,,user"}, 2, "segments.javascript_safe"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"config", "check", "--data-dir", t.TempDir()}, tc.args...)
			_, errOut, code := runCLI(args...)
			if code != tc.code || !strings.Contains(errOut, tc.want) {
				t.Fatalf("exit %d, stderr %q; want exit %d with %q", code, errOut, tc.code, tc.want)
			}
		})
	}
}

func TestMaxIDOf(t *testing.T) {
	if maxIDOf(nil) != nil {
		t.Fatal("no tags listed, yet a bound")
	}
	some := maxIDOf([]string{"order"})
	if some("order") != segment.JavaScriptSafe || some("user") != 0 {
		t.Fatalf("listed tag: %d, other: %d", some("order"), some("user"))
	}
	if all := maxIDOf([]string{"*"}); all("anything") != segment.JavaScriptSafe {
		t.Fatal(`"*" leaves a tag unbounded`)
	}
}
