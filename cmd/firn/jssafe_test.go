package main

import (
	"encoding/json"
	"strings"
	"testing"
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

// TestEncodings: firn next prints each encoding at its fixed width, in
// the order of the numbers, and firn parse reads each back to the same
// parts as the decimal ID.
func TestEncodings(t *testing.T) {
	dir := t.TempDir()
	for _, enc := range []struct {
		name  string
		width int
	}{{"base62", 11}, {"base32", 13}} {
		out, errOut, code := runCLI("next", "-n", "50", "--encoding", enc.name, "--data-dir", dir)
		if code != 0 {
			t.Fatalf("next --encoding %s: exit %d: %s", enc.name, code, errOut)
		}
		ids := strings.Fields(out)
		for i, s := range ids {
			if len(s) != enc.width || (i > 0 && s <= ids[i-1]) {
				t.Fatalf("%s: %q after %q: want %d characters, increasing", enc.name, s, ids[max(i-1, 0)], enc.width)
			}
		}
		input := ids[0]
		if enc.name == "base32" {
			input = strings.ToLower(input)
		}
		text, errOut, code := runCLI("parse", "--json", "--encoding", enc.name, input)
		if code != 0 {
			t.Fatalf("parse --encoding %s: exit %d: %s", enc.name, code, errOut)
		}
		var d struct{ ID string }
		if err := json.Unmarshal([]byte(text), &d); err != nil {
			t.Fatal(err)
		}
		plain, _, _ := runCLI("parse", "--json", d.ID)
		if plain != text {
			t.Fatalf("%s %s parses as %s; its decimal %s as %s", enc.name, input, text, d.ID, plain)
		}
	}
	if _, errOut, code := runCLI("parse", "--encoding", "base64", "1"); code != 2 || !strings.Contains(errOut, "base62") {
		t.Fatalf("unknown encoding: exit %d, %s", code, errOut)
	}
	if _, errOut, code := runCLI("parse", "1TCKi1nFuNh"); code != 2 || !strings.Contains(errOut, "--encoding") {
		t.Fatalf("base62 without --encoding: exit %d, %s", code, errOut)
	}
}
