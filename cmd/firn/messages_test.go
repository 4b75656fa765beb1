package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// runBadInput runs args, expecting bad input: exit 2, nothing on stdout,
// one line on stderr, which it returns.
func runBadInput(t *testing.T, args ...string) string {
	t.Helper()
	out, errOut, code := runCLI(args...)
	if code != 2 || out != "" || strings.Count(errOut, "\n") != 1 {
		t.Fatalf("%v: exit %d, stdout %q, stderr %q; want exit 2 and one line on stderr", args, code, out, errOut)
	}
	return errOut
}

func TestFlagErrorsNameTheFlagAsTyped(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"two dashes", []string{"next", "--bogus"}, "firn next: unknown flag --bogus; run 'firn help next'"},
		{"one dash", []string{"next", "-bogus"}, "firn next: unknown flag -bogus;"},
		{"two dashes with a value", []string{"next", "--bogus=3"}, "firn next: unknown flag --bogus;"},
		{"after an argument", []string{"parse", "1", "--jsn"}, "firn parse: unknown flag --jsn (did you mean --json?);"},
		{"missing value", []string{"parse", "1", "--layout"}, "firn parse: --layout needs a value; run 'firn help parse'"},
		{"not a number", []string{"next", "-n", "many"}, `firn next: -n "many": want a whole number; run 'firn help next'`},
		{"not a duration", []string{"serve", "--lease-ttl", "soon"}, `firn serve: --lease-ttl "soon": want a duration such as 500ms, 10s or 1m`},
		{"not a boolean", []string{"parse", "--json=maybe", "1"}, `firn parse: --json "maybe": want true or false`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := runBadInput(t, tt.args...); !strings.HasPrefix(got, tt.want) {
				t.Errorf("stderr %q; want it to start %q", got, tt.want)
			}
		})
	}
}

func TestEpochInSecondsIsRefusedWithAHint(t *testing.T) {
	const hint = "--epoch 1767225600 looks like Unix seconds: did you mean 1767225600000 ms, 2026-01-01T00:00:00Z?"
	cfg := filepath.Join(t.TempDir(), "firn.yaml")
	if err := os.WriteFile(cfg, []byte("layout:\n  epoch: 1767225600\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		env  string
		args []string
	}{
		{"layout flag", "", []string{"layout", "--epoch", "1767225600"}},
		{"next flag", "", []string{"next", "--epoch", "1767225600", "--data-dir", t.TempDir()}},
		{"parse flag", "", []string{"parse", "--epoch", "1767225600", "1"}},
		{"configuration file", "", []string{"config", "check", "--config", cfg}},
		{"environment", "1767225600", []string{"config", "check"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.env != "" {
				t.Setenv("FIRN_LAYOUT_EPOCH", tt.env)
			}
			if got := runBadInput(t, tt.args...); !strings.Contains(got, hint) {
				t.Errorf("stderr %q; want the hint %q", got, hint)
			}
		})
	}
	for _, epoch := range []string{"1767225600000", "100000000000", "0", "1970-01-21T10:53:45.600Z", "2026-01-01T00:00:00Z"} {
		t.Run("accepts "+epoch, func(t *testing.T) {
			if _, errOut, code := runCLI("layout", "--epoch", epoch); code != 0 {
				t.Errorf("exit %d: %s", code, errOut)
			}
		})
	}
}

func TestMessagesAgreeInNumber(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"one argument wanted, two given", []string{"tag", "advance", "order", "50", "--data-dir", dir}, "firn tag: advance takes 1 argument, got 2;"},
		{"two arguments wanted, one given", []string{"tag", "step", "order", "--data-dir", dir}, "firn tag: step takes 2 arguments, got 1;"},
		{"no argument wanted", []string{"tag", "list", "order", "--data-dir", dir}, "firn tag: list takes 0 arguments, got 1;"},
		{"one node name for two fields", []string{"layout", "--layout", "twitter", "--node-names", "dc"}, `names 1 field, but the layout has 2 node fields`},
		{"three names for one field", []string{"layout", "--node-names", "a,b,c"}, "names 3 fields, but the layout has 1 node field\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := runBadInput(t, tt.args...)
			if !strings.Contains(got, tt.want) {
				t.Errorf("stderr %q; want %q", got, tt.want)
			}
			if strings.Contains(got, "(s)") {
				t.Errorf("stderr %q hedges its plural", got)
			}
		})
	}
}

func TestParseReadsIDsFromStandardInput(t *testing.T) {
	withStdin := func(t *testing.T, r io.Reader) {
		old := stdin
		stdin = r
		t.Cleanup(func() { stdin = old })
	}
	ids, errOut, code := runCLI("next", "-n", "3", "--data-dir", t.TempDir())
	if code != 0 {
		t.Fatalf("next: exit %d: %s", code, errOut)
	}
	fromArgs, _, _ := runCLI(append([]string{"parse", "--json"}, strings.Fields(ids)...)...)

	t.Run("piped from firn next", func(t *testing.T) {
		withStdin(t, strings.NewReader(ids))
		out, errOut, code := runCLI("parse", "--json")
		if code != 0 || out != fromArgs || strings.Count(out, "\n") != 3 {
			t.Fatalf("exit %d, stderr %q, stdout\n%s\nwant\n%s", code, errOut, out, fromArgs)
		}
	})
	t.Run("separated by spaces", func(t *testing.T) {
		withStdin(t, strings.NewReader("  "+strings.Join(strings.Fields(ids), " \t ")+"  "))
		if out, errOut, code := runCLI("parse", "--json"); code != 0 || out != fromArgs {
			t.Fatalf("exit %d, stderr %q, stdout\n%s", code, errOut, out)
		}
	})
	t.Run("arguments win over standard input", func(t *testing.T) {
		withStdin(t, strings.NewReader("not-an-id\n"))
		if out, errOut, code := runCLI(append([]string{"parse", "--json"}, strings.Fields(ids)...)...); code != 0 || out != fromArgs {
			t.Fatalf("exit %d, stderr %q, stdout\n%s", code, errOut, out)
		}
	})
	t.Run("a bad ID on standard input", func(t *testing.T) {
		withStdin(t, strings.NewReader(ids+"12x\n"))
		if got := runBadInput(t, "parse"); !strings.Contains(got, `ID "12x" is not a non-negative decimal number`) {
			t.Fatalf("stderr %q", got)
		}
	})
	t.Run("nothing on standard input", func(t *testing.T) {
		withStdin(t, strings.NewReader("\n"))
		if got := runBadInput(t, "parse"); !strings.Contains(got, "no ID given; usage: firn parse") {
			t.Fatalf("stderr %q", got)
		}
	})
	t.Run("the help says so", func(t *testing.T) {
		out, _, _ := runCLI("help", "parse")
		if !strings.Contains(out, "firn next -n 3 | firn parse") || !strings.Contains(out, "standard input") {
			t.Fatalf("firn help parse does not mention standard input:\n%s", out)
		}
	})
}

// packagePrefix matches a package's prefix in a message: "config: ".
var packagePrefix = regexp.MustCompile(`\b(segment|snowflake|nodeid|server|config|client|localstore|etcdstore|sqlstore|yaml): `)

// repeatedPrefix returns a prefix said more than once in msg: a
// package's, or the command's own ("firn tag: firn tag advance …"); the
// closing "run 'firn help tag'" does not count.
func repeatedPrefix(msg string) string {
	if name, rest, ok := strings.Cut(strings.TrimPrefix(msg, "firn "), ": "); ok &&
		(strings.HasPrefix(rest, name+": ") || strings.Contains(rest, "firn "+name+" ")) {
		return "firn " + name
	}
	seen := map[string]bool{}
	for _, m := range packagePrefix.FindAllStringSubmatch(msg, -1) {
		if seen[m[1]] {
			return m[1]
		}
		seen[m[1]] = true
	}
	return ""
}

func TestErrorsNameTheirPrefixOnce(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("layout: [\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := runCLI("tag", "create", "order", "--data-dir", dir); code != 0 {
		t.Fatalf("create: %s", errOut)
	}
	tests := []struct {
		name string
		args []string
	}{
		{"config check of a broken file", []string{"config", "check", "--config", bad}},
		{"config print of a broken file", []string{"config", "print", "--config", bad}},
		{"serve of a broken file", []string{"serve", "--config", bad}},
		{"tag with a broken file", []string{"tag", "list", "--config", bad}},
		{"tag with too many arguments", []string{"tag", "advance", "order", "50", "--data-dir", dir}},
		{"an unknown tag", []string{"tag", "next", "nope", "--data-dir", dir}},
		{"a tag that exists", []string{"tag", "create", "order", "--data-dir", dir}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := runBadInput(t, tt.args...)
			if p := repeatedPrefix(got); p != "" {
				t.Errorf("stderr %q says %q twice", got, p)
			}
		})
	}
}

// TestHelpHelpPrintsMainUsage: help is listed among the commands, so
// asking for its help is not an unknown command.
func TestHelpHelpPrintsMainUsage(t *testing.T) {
	out, errOut, code := runCLI("help", "help")
	if code != 0 || out != mainUsage() || errOut != "" {
		t.Fatalf("firn help help: exit %d, stdout %q, stderr %q; want exit 0 and the main usage", code, out, errOut)
	}
}

// TestExtraArgumentPointsAtHelp: a positional argument a command does not
// take is refused in one form, pointing at the command's help, with no
// usage line of its own to drift from it.
func TestExtraArgumentPointsAtHelp(t *testing.T) {
	for _, cmd := range []string{"next", "layout", "bench", "version", "schema --dialect postgres", "serve", "migrate check --from leaf", "admin advance --node 1 --to 2030-01-01T00:00:00Z"} {
		t.Run(strings.Fields(cmd)[0], func(t *testing.T) {
			args := append(strings.Fields(cmd), "extra-arg")
			got := runBadInput(t, args...)
			want := fmt.Sprintf("unexpected argument \"extra-arg\"; run 'firn help %s'\n", args[0])
			if !strings.HasSuffix(got, want) {
				t.Fatalf("%v: %q; want it to end %q", args, got, want)
			}
		})
	}
}
