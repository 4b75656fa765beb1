package main

import (
	"bytes"
	"encoding/json"
	"github.com/firn-id/firn/cmd/firn/internal/config"
	"github.com/firn-id/firn/internal/buildinfo"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestMain points the default data directory at a temporary one.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "firn-cmd-test")
	if err != nil {
		panic(err)
	}
	os.Setenv("XDG_STATE_HOME", dir)
	stdin = strings.NewReader("") // firn parse never waits on the terminal or go test's input
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// ownNodes gives the test a node directory of its own (through
// XDG_STATE_HOME): every data directory of the package's tests otherwise
// shares one, and a test counting on node 0, or on its directory's node
// starting where its last run left it, would meet the nodes and HWMs of
// tests before it.
func ownNodes(t *testing.T) { t.Setenv("XDG_STATE_HOME", t.TempDir()) }

func runCLI(args ...string) (stdout, stderr string, code int) {
	var out, errOut bytes.Buffer
	code = run(args, &out, &errOut)
	return out.String(), errOut.String(), code
}

func TestBadInput(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{name: "unknown preset", args: []string{"next", "--layout", "flickr"}, wantErr: `unknown layout "flickr"`},
		{name: "etcd namespace without a slash", args: []string{"next", "--store", "etcd", "--endpoints", "http://127.0.0.1:1", "--namespace", "orders"},
			wantErr: `--namespace "orders": an etcd namespace is a clean key prefix starting with /, such as "/orders/"`},
		{name: "etcd namespace unclean", args: []string{"next", "--store", "etcd", "--endpoints", "http://127.0.0.1:1", "--namespace", "/a//b/"},
			wantErr: `such as "/a/b/"`},
		{name: "layout over 64 bits", args: []string{"layout", "--time-bits", "37", "--node-bits", "20", "--sequence-bits", "16"}, wantErr: "= 73 bits, over 64"},
		{name: "decode-only preset to next", args: []string{"next", "--layout", "discord"}, wantErr: "decode-only"},
		{name: "non-numeric ID", args: []string{"parse", "12x"}, wantErr: `ID "12x" is not a non-negative decimal number`},
		{name: "negative ID", args: []string{"parse", "-5"}, wantErr: "unknown flag -5"},
		{name: "ID over 64 bits", args: []string{"parse", "18446744073709551616"}, wantErr: "larger than 64 bits"},
		{name: "ID outside layout", args: []string{"parse", "--layout", "twitter", "9223372036854775808"}, wantErr: "does not fit the 63-bit twitter layout"},
		{name: "one bad ID among good", args: []string{"parse", "1", "2", "x"}, wantErr: `ID "x"`},
		{name: "node out of range", args: []string{"next", "--node", "1024"}, wantErr: "--node 1024 out of range"},
		{name: "node field out of range", args: []string{"next", "--layout", "twitter", "--node", "32,1"}, wantErr: "node field datacenter out of range 0..31"},
		{name: "node field count", args: []string{"next", "--layout", "twitter", "--node", "1,2,3"}, wantErr: "2 node fields, got 3"},
		{name: "count zero", args: []string{"next", "-n", "0"}, wantErr: "-n 0: want 1 to"},
		{name: "count not a number", args: []string{"next", "-n", "many"}, wantErr: `-n "many": want a whole number`},
		{name: "unknown flag", args: []string{"layout", "--bits", "3"}, wantErr: "unknown flag --bits"},
		{name: "unknown command", args: []string{"mint"}, wantErr: `unknown command "mint"`},
		{name: "migrate without --from", args: []string{"migrate", "check"}, wantErr: "--from is required: the old system, leaf, leaf-zookeeper, tinyid or uid-generator"},
		{name: "tag reveal without an ID", args: []string{"tag", "reveal", "order"}, wantErr: "reveal takes 2 arguments, got 1"},
		{name: "tag reveal without arguments", args: []string{"tag", "reveal"}, wantErr: "reveal takes 2 arguments, got 0"},
		{name: "relative data directory", args: []string{"next", "--data-dir", "state"}, wantErr: `(--data-dir, FIRN_REGISTRY_DATA_DIR or registry.data_dir) "state" is relative: give an absolute path`},
		{name: "data directory of migrate", args: []string{"migrate", "check", "--from", "leaf", "--dsn", "u@tcp(h:3306)/db", "--data-dir", "/tmp/state"}, wantErr: "only the local store keeps a data directory; with store mysql"},
		{name: "relative data directory of migrate", args: []string{"migrate", "check", "--from", "leaf", "--dsn", "u@tcp(h:3306)/db", "--store", "local", "--data-dir", "state"}, wantErr: `"state" is relative`},
		{name: "data directory of etcd", args: []string{"next", "--store", "etcd", "--endpoints", "http://127.0.0.1:1", "--data-dir", "/tmp/x"},
			wantErr: `registry.data_dir) "/tmp/x": only the local store keeps a data directory; with store etcd nothing is kept there`},
		{name: "data directory of postgres, tag", args: []string{"tag", "list", "--store", "postgres", "--dsn", "postgres://u@127.0.0.1:1/db", "--data-dir", "/tmp/x"},
			wantErr: "only the local store keeps a data directory"},
		{name: "relative data directory of tag", args: []string{"tag", "list", "--data-dir", "./state"}, wantErr: `registry.data_dir) "./state" is relative`},
		{name: "no command", args: nil, wantErr: "Usage:"},
		{name: "no ID", args: []string{"parse"}, wantErr: "no ID given"},
		{name: "fractional tick", args: []string{"layout", "--tick", "1500ns"}, wantErr: "whole number of milliseconds (or, to decode only, of microseconds)"},
		{name: "microsecond tick to next", args: []string{"next", "--tick", "1500us"}, wantErr: "tick 1.5ms is not a whole number of milliseconds"},
		{name: "bad epoch", args: []string{"layout", "--epoch", "yesterday"}, wantErr: "--epoch"},
		{name: "bad order", args: []string{"layout", "--order", "time,shard,sequence"}, wantErr: `unknown part "shard"`},
		{name: "names without fields", args: []string{"layout", "--node-names", "a,b,c"}, wantErr: "names 3 fields"},
		{name: "epoch in the future", args: []string{"next", "--epoch", "4102444800000"}, wantErr: "is in the future"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, code := runCLI(tt.args...)
			if code != 2 {
				t.Errorf("exit %d, want 2", code)
			}
			if out != "" {
				t.Errorf("stdout %q, want nothing", out)
			}
			if !strings.Contains(errOut, tt.wantErr) {
				t.Errorf("stderr %q, want it to contain %q", errOut, tt.wantErr)
			}
			if tt.args != nil && strings.Count(strings.TrimRight(errOut, "\n"), "\n") != 0 {
				t.Errorf("stderr has more than one line: %q", errOut)
			}
		})
	}
}

func TestParseDiscordJSON(t *testing.T) {
	out, errOut, code := runCLI("parse", "--layout", "discord", "--json", "175928847299117063")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	want := `{"id":"175928847299117063","unix_ms":1462015105796,"time":"2016-04-30T11:18:25.796Z","tick":41944705796,"node":{"worker":1,"process":0},"sequence":7}` + "\n"
	if out != want {
		t.Fatalf("got  %s\nwant %s", out, want)
	}
	var v map[string]any
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("not JSON: %v", err)
	}
}

func TestParseExplicitFlagsMatchPreset(t *testing.T) {
	preset, _, _ := runCLI("parse", "--json", "--layout", "twitter", "1050118621198921728")
	explicit, errOut, code := runCLI("parse", "--json", "--epoch", "1288834974657", "--tick", "1ms", "--time-bits", "41",
		"--node-bits", "5,5", "--node-names", "datacenter,worker", "--sequence-bits", "12", "--order", "time,node,sequence", "1050118621198921728")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if preset != explicit || !strings.Contains(preset, `"time":"2018-10-10T20:19:24.211Z"`) {
		t.Fatalf("explicit flags decode\n%s\npreset decodes\n%s", explicit, preset)
	}
}

func TestNextPrintsIncreasingIDs(t *testing.T) {
	ownNodes(t) // a layout other than the default: one node directory holds one
	out, errOut, code := runCLI("next", "-n", "10000", "--layout", "twitter", "--node", "3,17", "--data-dir", t.TempDir())
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 10000 {
		t.Fatalf("%d lines, want 10000", len(lines))
	}
	var prev int64 = -1
	for i, s := range lines {
		id, err := strconv.ParseInt(s, 10, 64)
		if err != nil || id <= prev {
			t.Fatalf("line %d: %q after %d", i, s, prev)
		}
		prev = id
	}
	// The node fields are in the right bits.
	dec, _, _ := runCLI("parse", "--layout", "twitter", "--json", lines[0])
	if !strings.Contains(dec, `"node":{"datacenter":3,"worker":17}`) {
		t.Fatalf("first ID decodes to %s", dec)
	}
}

func TestLayoutDraws(t *testing.T) {
	out, errOut, code := runCLI("layout", "--layout", "sonyflake")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"| sign | time 39 | sequence 8 | machine 16 |", "62-24", "15-0", "65,536", "25,600 IDs/s", "2188-11-16"} {
		if !strings.Contains(out, want) {
			t.Errorf("layout output lacks %q:\n%s", want, out)
		}
	}
}

func TestHelp(t *testing.T) {
	for _, args := range [][]string{{"help"}, {"--help"}, {"help", "parse"}, {"parse", "--help"}, {"next", "-h"}} {
		out, errOut, code := runCLI(args...)
		if code != 0 || out == "" || errOut != "" {
			t.Errorf("%v: exit %d, stdout %d bytes, stderr %q", args, code, len(out), errOut)
		}
	}
}

func FuzzLayoutFlags(f *testing.F) {
	f.Add("twitter", "1288834974657", "1ms", "41", "5,5", "datacenter,worker", "12", "time,node,sequence")
	f.Add("firn", "2026-01-01T00:00:00Z", "10ms", "39", "16", "", "8", "time,sequence,node")
	f.Add("x", "-1", "0", "99", ",", ",,", "-3", "node")
	f.Fuzz(func(t *testing.T, preset, epoch, tick, timeBits, nodeBits, nodeNames, seqBits, order string) {
		l, err := config.Layout{Preset: preset, Epoch: epoch, Tick: tick, TimeBits: timeBits, NodeBits: nodeBits,
			NodeNames: nodeNames, SequenceBits: seqBits, Order: order}.Snowflake()
		if err != nil {
			if _, ok := err.(*config.InputError); !ok || !badInput(err) {
				t.Fatalf("error %v is %T, not a usage error", err, err)
			}
			return
		}
		if err := l.Validate(); err != nil {
			t.Fatalf("layout() returned an invalid layout: %v", err)
		}
		// Every accepted layout can be drawn and its capacity printed.
		var b bytes.Buffer
		b.WriteString(l.Diagram())
		writeCapacity(&b, l)
	})
}

// TestNextNeverRepeatsAcrossRuns runs firn next twice on one data
// directory, the second time with the clock's view irrelevant: the second
// run starts past the HWM the first one reserved.
func TestNextNeverRepeatsAcrossRuns(t *testing.T) {
	dir := t.TempDir()
	first, errOut, code := runCLI("next", "-n", "5000", "--data-dir", dir)
	if code != 0 {
		t.Fatalf("first run: exit %d: %s", code, errOut)
	}
	second, errOut, code := runCLI("next", "-n", "5000", "--data-dir", dir)
	if code != 0 {
		t.Fatalf("second run: exit %d: %s", code, errOut)
	}
	a := strings.Fields(first)
	b := strings.Fields(second)
	last, _ := strconv.ParseInt(a[len(a)-1], 10, 64)
	firstOfB, _ := strconv.ParseInt(b[0], 10, 64)
	if firstOfB <= last {
		t.Fatalf("second run starts at %d, not past the first run's last ID %d", firstOfB, last)
	}
}

func TestNextRefusesAnotherLayoutInOneDirectory(t *testing.T) {
	dir := t.TempDir()
	if _, errOut, code := runCLI("next", "--data-dir", dir); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	out, errOut, code := runCLI("next", "--layout", "twitter", "--data-dir", dir)
	if code != 2 || out != "" || !strings.Contains(errOut, `local data directory `+dir+` holds layout "firn: epoch 2026-01-01`) {
		t.Fatalf("exit %d, stdout %q, stderr %q; want exit 2 naming the stored layout", code, out, errOut)
	}
}

func TestAdminAdvanceMovesNextRunPastTheRestore(t *testing.T) {
	ownNodes(t)
	dir := t.TempDir()
	first, errOut, code := runCLI("next", "--data-dir", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	// A restore lost the HWM; IDs up to 5 s from now were issued.
	future := strconv.FormatInt(time.Now().Add(5*time.Second).UnixMilli(), 10)
	out, errOut, code := runCLI("admin", "advance", "--node", "0", "--to", future, "--data-dir", dir)
	if code != 0 || !strings.HasPrefix(out, "node 0: HWM ") {
		t.Fatalf("advance: exit %d, %q, %q", code, out, errOut)
	}
	next, errOut, code := runCLI("next", "--data-dir", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	dec, _, _ := runCLI("parse", "--json", strings.TrimSpace(next))
	if !strings.Contains(dec, `"unix_ms":`) || strings.TrimSpace(next) <= strings.TrimSpace(first) {
		t.Fatalf("after advance: %s (first %s)", next, first)
	}
	var v struct {
		UnixMS int64 `json:"unix_ms"`
	}
	json.Unmarshal([]byte(dec), &v)
	if f, _ := strconv.ParseInt(future, 10, 64); v.UnixMS < f {
		t.Fatalf("first ID after advance at %d, before the advanced HWM %s", v.UnixMS, future)
	}
	// Nothing moves a HWM back.
	out, _, _ = runCLI("admin", "advance", "--node", "0", "--to", "2020-01-01T00:00:00Z", "--data-dir", dir)
	if !strings.Contains(out, "already past") {
		t.Fatalf("advance backwards: %q", out)
	}
}

func TestAdminAdvanceChecksTheLayout(t *testing.T) {
	const id = "117989741332267008"
	tests := []struct {
		name    string
		record  []string // the layout flags of a first run; nil: none recorded
		args    []string
		wantErr string // on stderr, with exit 2; empty: success
	}{
		{name: "the recorded layout", record: []string{}, args: []string{"--past-id", id}},
		{name: "another layout", record: []string{}, args: []string{"--past-id", id, "--layout", "twitter"},
			wantErr: `the namespace records layout "firn: epoch 2026-01-01T00:00:00.000Z, tick 1ms, 41 time + 10 node + 12 sequence = 63 bits": pass its layout flags, e.g. --layout firn`},
		{name: "a forgotten --layout", record: []string{"--layout", "twitter"}, args: []string{"--past-id", id},
			wantErr: `the namespace records layout "twitter: epoch 2010-11-04T01:42:54.657Z`},
		{name: "--layout with --to is checked", record: []string{}, args: []string{"--to", "2026-11-22T14:05:00Z", "--layout", "twitter"},
			wantErr: "pass its layout flags, e.g. --layout firn"},
		{name: "--to with the recorded layout", record: []string{"--layout", "twitter"}, args: []string{"--to", "2026-11-22T14:05:00Z", "--layout", "twitter"}},
		{name: "--to alone checks the default layout", record: []string{"--layout", "twitter"}, args: []string{"--to", "2026-11-22T14:05:00Z"},
			wantErr: "pass its layout flags, e.g. --layout twitter"},
		{name: "no layout recorded", args: []string{"--past-id", id, "--layout", "twitter"}, wantErr: "has never been used (no layout recorded)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ownNodes(t) // each case its own layout: one node directory holds one
			dir := t.TempDir()
			if tt.record != nil {
				if _, errOut, code := runCLI(append([]string{"next", "--data-dir", dir}, tt.record...)...); code != 0 {
					t.Fatalf("first run: exit %d: %s", code, errOut)
				}
			}
			out, errOut, code := runCLI(append([]string{"admin", "advance", "--node", "0", "--data-dir", dir}, tt.args...)...)
			if tt.wantErr == "" {
				if code != 0 || !strings.HasPrefix(out, "node 0: HWM ") {
					t.Fatalf("exit %d, stdout %q, stderr %q; want success", code, out, errOut)
				}
				return
			}
			if code != 2 || out != "" || !strings.Contains(errOut, tt.wantErr) {
				t.Fatalf("exit %d, stdout %q, stderr %q; want exit 2 and %q", code, out, errOut, tt.wantErr)
			}
		})
	}
}

func TestSchemaCommand(t *testing.T) {
	out, errOut, code := runCLI("schema", "--dialect", "postgres")
	if code != 0 || !strings.Contains(out, "CREATE TABLE IF NOT EXISTS firn_nodes (") {
		t.Fatalf("exit %d, %q, %q", code, out, errOut)
	}
	for _, args := range [][]string{{"schema"}, {"schema", "--dialect", "oracle"}, {"schema", "--dialect", "mysql", "--table", "X;"}} {
		if out, _, code := runCLI(args...); code != 2 || out != "" {
			t.Errorf("%v: exit %d, stdout %q; want exit 2 and nothing", args, code, out)
		}
	}
}

func TestNextSkipsReservedNodes(t *testing.T) {
	out, errOut, code := runCLI("next", "--reserved-nodes", "0,1", "--data-dir", t.TempDir())
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	dec, _, _ := runCLI("parse", "--json", strings.TrimSpace(out))
	if !strings.Contains(dec, `"node":{"node":2}`) {
		t.Fatalf("with nodes 0 and 1 reserved the ID decodes to %s, want node 2", dec)
	}
	if out, _, code := runCLI("next", "--reserved-nodes", "5000"); code != 2 || out != "" {
		t.Fatalf("a reserved node outside the layout: exit %d, stdout %q", code, out)
	}
	if out, errOut, code := runCLI("next", "--reserved-nodes", "0,x"); code != 2 || out != "" || !strings.Contains(errOut, `--reserved-nodes "0,x": want non-negative whole numbers`) {
		t.Fatalf("a reserved node that is not a number: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

func TestTagCommands(t *testing.T) {
	dir := t.TempDir()
	run := func(args ...string) (string, string, int) { return runCLI(append(args, "--data-dir", dir)...) }
	if _, errOut, code := run("tag", "create", "order", "--first", "100", "--step", "10", "--description", "orders"); code != 0 {
		t.Fatalf("create: exit %d: %s", code, errOut)
	}
	out, _, code := run("tag", "next", "order", "-n", "25")
	ids := strings.Fields(out)
	if code != 0 || len(ids) != 25 || ids[0] != "100" || ids[24] != "124" {
		t.Fatalf("next: exit %d, %v", code, ids)
	}
	// The second run skips what the first had buffered, never reuses it.
	out, _, _ = run("tag", "next", "order")
	if v, _ := strconv.Atoi(strings.TrimSpace(out)); v <= 124 {
		t.Fatalf("second run: %s, want past 124", out)
	}
	if out, _, code := run("tag", "advance", "order", "--to", "10000"); code != 0 || !strings.HasPrefix(out, "tag order: next ID 10000 ") {
		t.Fatalf("advance: exit %d, %q", code, out)
	}
	if out, _, code := run("tag", "advance", "order", "--to", "500"); code != 0 || !strings.HasPrefix(out, "tag order: next ID 10000, already past the requested value;") {
		t.Fatalf("advance below the counter: exit %d, %q; want it to say the counter was already past", code, out)
	}
	if out, _, code := run("tag", "step", "order", "50"); code != 0 || out != "tag order: step 50\n" {
		t.Fatalf("step: exit %d, %q", code, out)
	}
	out, _, _ = run("tag", "list")
	if !strings.Contains(out, "order") || !strings.Contains(out, "10000") || !strings.Contains(out, "orders") {
		t.Fatalf("list:\n%s", out)
	}
	for _, args := range [][]string{
		{"tag", "next", "nope"}, {"tag", "create", "order"}, {"tag", "step", "order", "0"},
		{"tag", "advance", "order"}, {"tag", "frobnicate"}, {"tag", "create"}, {"tag", "create", "x", "--step", "-1"},
		{"tag", "create", "x", "--first", "-1000"}, {"tag", "advance", "order", "--to", "9223372036854775000"},
	} {
		if out, errOut, code := run(args...); code != 2 || out != "" || errOut == "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and one line on stderr", args, code, out, errOut)
		}
	}
	if _, errOut, _ := run("tag", "next", "nope"); !strings.Contains(errOut, `unknown tag "nope": create it first with the create subcommand`) {
		t.Errorf("tag next of an unknown tag: %q; want it to say how to create the tag", errOut)
	}
}

// TestConfigPrintIsEffective: config print shows the flags over the file
// and the environment, secrets redacted, and refuses what serve refuses.
func TestConfigPrintIsEffective(t *testing.T) {
	path := t.TempDir() + "/firn.yaml"
	doc := "http:\n  listen: 127.0.0.1:7000\nregistry:\n  start_ahead: false\n"
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runCLI("config", "print", "--config", path, "--http", "127.0.0.1:9999", "--start-ahead",
		"--store", "postgres", "--dsn", "postgres://u:pw@h/db")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"listen: 127.0.0.1:9999", "start_ahead: true", "store: postgres", "postgres://u:REDACTED@h/db"} {
		if !strings.Contains(out, want) {
			t.Errorf("config print lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "pw@") {
		t.Errorf("config print shows the password:\n%s", out)
	}
	if _, errOut, code := runCLI("config", "print", "--http", "nowhere"); code != 2 || !strings.Contains(errOut, "nowhere") {
		t.Fatalf("a bad flag: exit %d, %q; want exit 2 naming it", code, errOut)
	}
}

// TestVersionSaysWhyNoCommit: a build that recorded no commit (a test
// binary records none) says why and what stamps one, rather than a bare
// "commit unknown".
func TestVersionSaysWhyNoCommit(t *testing.T) {
	out, errOut, code := runCLI("version")
	if code != 0 || !strings.HasPrefix(out, "firn ") {
		t.Fatalf("firn version: exit %d, %q %q", code, out, errOut)
	}
	if buildinfo.Read().Commit != buildinfo.NoCommit {
		t.Skip("this test binary recorded a commit")
	}
	if !strings.Contains(out, "\nno commit recorded: ") || !strings.Contains(out, "make build stamps it") {
		t.Errorf("firn version of a build without a commit: %q, want why and make build", out)
	}
}
