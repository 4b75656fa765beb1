package config_test

import (
	"errors"
	"flag"
	"slices"
	"testing"
	"time"

	"github.com/firn-id/firn/cmd/firn/internal/config"
)

func TestParseFlags(t *testing.T) {
	owners := func(name, here string) []string {
		if name == "dsn" {
			return []string{"firn serve"}
		}
		return nil
	}
	tests := []struct {
		name string
		args []string
		pos  []string
		want string // the *InputError's message; "" for none
	}{
		{name: "flags between arguments", args: []string{"a", "-n", "2", "b", "--", "-c"}, pos: []string{"a", "b", "-c"}},
		{name: "another command's flag", args: []string{"--dsn", "x"}, want: "unknown flag --dsn: it applies to firn serve, not firn t; run 'firn help t'"},
		{name: "typo", args: []string{"--timout", "1s"}, want: "unknown flag --timout (did you mean --timeout?); run 'firn help t'"},
		{name: "unknown", args: []string{"-zzz"}, want: "unknown flag -zzz; run 'firn help t'"},
		{name: "no value", args: []string{"--n"}, want: "--n needs a value; run 'firn help t'"},
		{name: "whole number", args: []string{"-n=x"}, want: `-n "x": want a whole number; run 'firn help t'`},
		{name: "duration", args: []string{"--timeout", "5"}, want: `--timeout "5": want a duration such as 500ms, 10s or 1m; run 'firn help t'`},
		{name: "boolean", args: []string{"--json=maybe"}, want: `--json "maybe": want true or false; run 'firn help t'`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fs := flag.NewFlagSet("t", flag.ContinueOnError)
			fs.Int("n", 1, "")
			fs.Duration("timeout", time.Second, "")
			fs.Bool("json", false, "")
			pos, err := config.ParseFlags(fs, tc.args, "firn t", owners)
			var ie *config.InputError
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("err %v", err)
			case tc.want == "" && !slices.Equal(pos, tc.pos):
				t.Errorf("positional %q, want %q", pos, tc.pos)
			case tc.want != "" && !errors.As(err, &ie):
				t.Fatalf("err %v (%T), want an *InputError", err, err)
			case tc.want != "" && ie.Msg != tc.want:
				t.Errorf("message\n%s\nwant\n%s", ie.Msg, tc.want)
			}
		})
	}
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	if _, err := config.ParseFlags(fs, []string{"--help"}, "firn t", owners); !errors.Is(err, flag.ErrHelp) {
		t.Errorf("--help: %v, want flag.ErrHelp", err)
	}
}
