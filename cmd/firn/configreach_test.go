package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/firn-id/firn/snowflake"
)

// reach is one command run with a setting, and what it must show.
type reach struct {
	args []string
	// notTaken: the command does not take the setting; from the file or
	// the environment it is ignored (the command succeeds as check says),
	// and as a flag it is refused with exit 2.
	notTaken bool
	check    func(t *testing.T, out, errOut string, code int)
}

// TestSettingsReachEveryCommand: a setting given by the file of
// --config, its FIRN_… variable or its flag reaches every command that
// uses it, the same way; a command that does not use it ignores it in the
// file and the environment and refuses it as a flag; registry.node in the
// file or the environment never leaves firn serve.
func TestSettingsReachEveryCommand(t *testing.T) {
	ok := func(want ...string) func(*testing.T, string, string, int) {
		return func(t *testing.T, out, errOut string, code int) {
			t.Helper()
			for _, w := range want {
				if code != 0 || !strings.Contains(out, w) {
					t.Fatalf("exit %d, stdout %q, stderr %q; want exit 0 and %q", code, out, errOut, w)
				}
			}
		}
	}
	refused := func(want string) func(*testing.T, string, string, int) {
		return func(t *testing.T, out, errOut string, code int) {
			t.Helper()
			if code == 0 || out != "" || !strings.Contains(errOut, want) {
				t.Fatalf("exit %d, stdout %q, stderr %q; want a failure naming %q and nothing printed", code, out, errOut, want)
			}
		}
	}
	year := time.Now().UTC().Format("2006-")
	tests := []struct {
		path, flag string
		value      func(t *testing.T) string
		// runs get the directory the command may use, fresh per way.
		runs func(dir string) []reach
	}{
		{path: "layout.preset", flag: "layout", value: func(*testing.T) string { return "twitter" },
			runs: func(dir string) []reach {
				return []reach{
					{args: []string{"config", "check", "--data-dir", dir}, check: ok("layout twitter:")},
					{args: []string{"layout"}, check: ok("twitter: epoch 2010-11-04")},
					{args: []string{"parse", "--json", "1"}, check: ok(`"node":{"datacenter":0,"worker":0}`)},
					{args: []string{"next", "--data-dir", dir}, check: func(t *testing.T, out, errOut string, code int) {
						dec, _, _ := runCLI("parse", "--layout", "twitter", strings.TrimSpace(out))
						ok(year)(t, dec, errOut, code)
					}},
					// The namespace records twitter: advancing it with
					// another layout would be refused.
					{args: []string{"admin", "advance", "--node", "0", "--to", "2030-01-01T00:00:00Z", "--data-dir", dir}, check: ok("node 0: HWM 2030-01-01")},
					// firn tag takes the layout to place a site's value.
					{args: []string{"tag", "list", "--data-dir", dir}, check: ok("TAG")},
				}
			}},
		{path: "registry.data_dir", flag: "data-dir", value: func(t *testing.T) string { return filepath.Join(t.TempDir(), "state") },
			runs: func(string) []reach {
				return []reach{
					{args: []string{"tag", "create", "order", "--first", "7"}, check: ok("tag order: first ID 7")},
					{args: []string{"tag", "next", "order"}, check: ok("7\n")},
					{args: []string{"tag", "list"}, check: ok("order")},
					{args: []string{"next"}, check: ok("\n")},
					{args: []string{"admin", "advance", "--node", "0", "--to", "2030-01-01T00:00:00Z"}, check: ok("node 0: HWM 2030-01-01")},
					{args: []string{"config", "print"}, check: ok("data_dir: /")},
					{args: []string{"parse", "1"}, notTaken: true, check: ok("sequence")},
				}
			}},
		{path: "snowflake.floor", flag: "floor", value: func(*testing.T) string { return "9000000000000000000" },
			runs: func(dir string) []reach {
				return []reach{
					{args: []string{"config", "print", "--data-dir", dir}, check: ok("floor: 9000000000000000000")},
					{args: []string{"next", "--data-dir", dir}, check: refused("snowflake floor 9000000000000000000: the first ID would be about")},
					{args: []string{"layout"}, notTaken: true, check: ok("firn: epoch")},
				}
			}},
		{path: "snowflake.exhausted", flag: "exhausted", value: func(*testing.T) string { return "sometimes" },
			runs: func(dir string) []reach {
				return []reach{
					{args: []string{"config", "check", "--data-dir", dir}, check: refused(`snowflake.exhausted (env FIRN_SNOWFLAKE_EXHAUSTED, flag --exhausted): "sometimes": want wait or borrow`)},
					{args: []string{"next", "--data-dir", dir}, check: refused(`snowflake.exhausted (env FIRN_SNOWFLAKE_EXHAUSTED, flag --exhausted): "sometimes": want wait or borrow`)},
					{args: []string{"tag", "list", "--data-dir", dir}, notTaken: true, check: ok("TAG")},
					{args: []string{"parse", "1"}, notTaken: true, check: ok("sequence")},
				}
			}},
		{path: "registry.table", flag: "table", value: func(*testing.T) string { return "ids_reach" },
			runs: func(dir string) []reach {
				return []reach{
					{args: []string{"schema", "--dialect", "mysql", "--mode", "nodes"}, check: ok("CREATE TABLE IF NOT EXISTS ids_reach_namespaces")},
					{args: []string{"config", "print", "--data-dir", dir}, check: ok("table: ids_reach")},
					{args: []string{"layout"}, notTaken: true, check: ok("firn: epoch")},
				}
			}},
		{path: "segments.token_table", flag: "token-table", value: func(*testing.T) string { return "tokens_reach" },
			runs: func(dir string) []reach {
				return []reach{
					{args: []string{"schema", "--dialect", "postgres", "--mode", "tinyid"}, check: ok("tokens_reach")},
					{args: []string{"config", "print", "--data-dir", dir}, check: ok("token_table: tokens_reach")},
					{args: []string{"next", "--data-dir", dir}, notTaken: true, check: ok("\n")},
				}
			}},
	}
	for _, tt := range tests {
		section, key, _ := strings.Cut(tt.path, ".")
		for _, way := range []string{"file", "env", "flag"} {
			t.Run(tt.path+"/"+way, func(t *testing.T) {
				ownNodes(t) // each setting its own layout: one node directory holds one
				value := tt.value(t)
				var extra []string
				switch way {
				case "file":
					f := filepath.Join(t.TempDir(), "firn.yaml")
					if err := os.WriteFile(f, []byte(section+":\n  "+key+": "+value+"\n"), 0o600); err != nil {
						t.Fatal(err)
					}
					extra = []string{"--config", f}
				case "env":
					t.Setenv("FIRN_"+strings.ToUpper(section+"_"+key), value)
				case "flag":
					extra = []string{"--" + tt.flag, value}
				}
				for _, r := range tt.runs(filepath.Join(t.TempDir(), "own")) {
					out, errOut, code := runCLI(append(r.args, extra...)...)
					if r.notTaken && way == "flag" {
						refused("--"+tt.flag)(t, out, errOut, code)
						continue
					}
					t.Run(strings.Join(r.args[:min(2, len(r.args))], " "), func(t *testing.T) { r.check(t, out, errOut, code) })
				}
			})
		}
	}
}

// TestServersNodeStaysWithTheServer: registry.node in the file or the
// environment is the server's own node: firn next takes the lowest free
// node beside it, while --node on its command line is its own.
func TestServersNodeStaysWithTheServer(t *testing.T) {
	ownNodes(t)
	node := func(t *testing.T, extra ...string) string {
		t.Helper()
		out, errOut, code := runCLI(append([]string{"next", "--data-dir", t.TempDir()}, extra...)...)
		if code != 0 {
			t.Fatalf("next %v: exit %d: %s", extra, code, errOut)
		}
		dec, _, _ := runCLI("parse", "--json", strings.TrimSpace(out))
		return dec
	}
	f := filepath.Join(t.TempDir(), "firn.yaml")
	if err := os.WriteFile(f, []byte("registry:\n  node: \"5\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if dec := node(t, "--config", f); !strings.Contains(dec, `"node":{"node":0}`) {
		t.Errorf("with the server's node 5 in the file, next took %s; want node 0", dec)
	}
	t.Setenv("FIRN_REGISTRY_NODE", "5")
	if dec := node(t); !strings.Contains(dec, `"node":{"node":0}`) {
		t.Errorf("with the server's node 5 in the environment, next took %s; want node 0", dec)
	}
	if dec := node(t, "--node", "6"); !strings.Contains(dec, `"node":{"node":6}`) {
		t.Errorf("next --node 6 took %s", dec)
	}
	if out, errOut, code := runCLI("config", "print", "--data-dir", t.TempDir()); code != 0 || !strings.Contains(out, `node: "5"`) {
		t.Errorf("config print: exit %d, %s; want serve's node 5", code, errOut+out)
	}
}

// TestTagSubcommandsOwnTheirFlags: a flag of another tag subcommand, or
// of another command, is refused, naming the commands it applies to, and
// nothing is done.
func TestTagSubcommandsOwnTheirFlags(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"tag", "list", "--step", "5"}, "firn tag: unknown flag --step: it applies to firn tag create, not firn tag list; run 'firn help tag'"},
		{[]string{"tag", "list", "--data-dir", dir, "--step", "5", "--to", "99", "--first", "7"}, "--step: it applies to firn tag create, not firn tag list"},
		{[]string{"tag", "step", "order", "5", "--to", "99"}, "--to: it applies to firn tag advance, firn admin advance, not firn tag step"},
		{[]string{"tag", "create", "order", "-n", "3"}, "-n: it applies to firn next, firn tag next, not firn tag create"},
		{[]string{"tag", "next", "order", "--opaque-tags", "order", "--description", "x"}, "--description: it applies to firn tag create, not firn tag next"},
		{[]string{"tag", "reveal", "order", "5", "--data-dir", dir}, "--data-dir: it applies to firn serve, firn next, firn tag list, firn tag create, firn tag step, firn tag advance, firn tag next, firn admin advance, not firn tag reveal"},
		{[]string{"tag", "list", "--encoding", "base62"}, "--encoding: it applies to firn next, firn parse, firn tag next, firn tag reveal, not firn tag list"},
		{[]string{"next", "--step", "5", "--data-dir", dir}, "firn next: unknown flag --step: it applies to firn tag create, not firn next; run 'firn help next'"},
		{[]string{"parse", "--format", "uuid", "1"}, "firn parse: unknown flag --format: it applies to firn next, not firn parse; run 'firn help parse'"},
		{[]string{"config", "check", "--first", "7", "--data-dir", dir}, "unknown flag --first: it applies to firn tag create, not firn serve"},
		{[]string{"tag", "list", "--nope"}, "unknown flag --nope; run 'firn help tag'"},
	}
	for _, tt := range tests {
		out, errOut, code := runCLI(tt.args...)
		if code != 2 || out != "" || !strings.Contains(errOut, tt.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and %q", tt.args, code, out, errOut, tt.want)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("a refused command touched the data directory: %v", entries)
	}
}

// TestUnknownFlagSaysWhatWasMeant: a flag that is a typo away from one
// of the command's, or a name people give one (--port for --http), is
// refused with a "did you mean", as an unknown setting key or variable is
// (config.Suggest); one that nothing resembles is refused plainly.
func TestUnknownFlagSaysWhatWasMeant(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"parse", "--guesss", "1"}, "firn parse: unknown flag --guesss (did you mean --guess?); run 'firn help parse'"},
		{[]string{"serve", "--port", "8080"}, "firn serve: unknown flag --port (did you mean --http?); run 'firn help serve'"},
		{[]string{"next", "-nn", "3"}, "firn next: unknown flag -nn (did you mean -n?)"},
		{[]string{"serve", "--lease-tll", "5s"}, "unknown flag --lease-tll (did you mean --lease-ttl?)"},
		{[]string{"next", "--zzzzzz"}, "firn next: unknown flag --zzzzzz; run 'firn help next'"},
	} {
		out, errOut, code := runCLI(tt.args...)
		if code != 2 || out != "" || !strings.Contains(errOut, tt.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and %q", tt.args, code, out, errOut, tt.want)
		}
	}
	t.Setenv("FIRN_HTTP_LISTN", "127.0.0.1:1")
	if _, errOut, code := runCLI("config", "check"); code != 2 || !strings.Contains(errOut, "unknown environment variable FIRN_HTTP_LISTN (did you mean FIRN_HTTP_LISTEN?)") {
		t.Errorf("a misspelt variable: exit %d, %q", code, errOut)
	}
}

// TestExhaustedReachesTheGenerators: snowflake.exhausted and
// snowflake.max_borrow reach the generator configuration of serve and of
// next, by flag, variable or file; wait by default.
func TestExhaustedReachesTheGenerators(t *testing.T) {
	f := filepath.Join(t.TempDir(), "firn.yaml")
	if err := os.WriteFile(f, []byte("snowflake:\n  exhausted: borrow\n  max_borrow: 3s\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	gens := map[string]func(args ...string) (snowflake.Config, error){
		"serve": func(args ...string) (snowflake.Config, error) {
			o, err := parseServe(append([]string{"--data-dir", t.TempDir()}, args...))
			return o.Gen, err
		},
		"next": func(args ...string) (snowflake.Config, error) {
			x, err := parseNext(args)
			if err != nil {
				return snowflake.Config{}, err
			}
			return x.gc, nil
		},
	}
	for name, gen := range gens {
		for _, tt := range []struct {
			way    string
			args   []string
			env    string
			policy snowflake.Policy
			bound  time.Duration
		}{
			{"default", nil, "", snowflake.Wait, snowflake.DefaultMaxBorrow},
			{"flag", []string{"--exhausted", "borrow", "--max-borrow", "2s"}, "", snowflake.Borrow, 2 * time.Second},
			{"env", nil, "borrow", snowflake.Borrow, snowflake.DefaultMaxBorrow},
			{"file", []string{"--config", f}, "", snowflake.Borrow, 3 * time.Second},
		} {
			t.Run(name+"/"+tt.way, func(t *testing.T) {
				if tt.env != "" {
					t.Setenv("FIRN_SNOWFLAKE_EXHAUSTED", tt.env)
				}
				gc, err := gen(tt.args...)
				if err != nil || gc.Exhausted != tt.policy || gc.MaxBorrow != tt.bound {
					t.Fatalf("policy %v, max borrow %s, %v; want %v, %s", gc.Exhausted, gc.MaxBorrow, err, tt.policy, tt.bound)
				}
			})
		}
	}
}
