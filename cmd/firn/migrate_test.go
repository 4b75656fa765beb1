package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/firn-id/firn/cmd/firn/internal/backend"
	"github.com/firn-id/firn/cmd/firn/internal/config"
	"github.com/firn-id/firn/internal/legacytest"
	"github.com/firn-id/firn/nodeid"
	"github.com/firn-id/firn/snowflake"
)

// snapshot is every table of the account's database with its rows, to
// show that a command wrote nothing.
func (a *account) snapshot(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	for _, table := range a.tables(t) {
		rows, err := a.admin.Query("SELECT * FROM " + table)
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rows.Columns()
		var lines []string
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			lines = append(lines, fmt.Sprintf("%s", vals))
		}
		rows.Close()
		fmt.Fprintf(&b, "%s: %s\n", table, strings.Join(lines, "; "))
	}
	return b.String()
}

// firstIDs reads the segment rows of a plan: tag -> first ID.
func firstIDs(t *testing.T, plan string) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	_, rows, ok := strings.Cut(plan, "  TAG ")
	if !ok {
		t.Fatalf("no segment rows in the plan:\n%s", plan)
	}
	for _, line := range strings.Split(rows, "\n")[1:] {
		f := strings.Fields(line)
		if len(f) != 5 {
			break
		}
		n, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			t.Fatalf("first ID of %q: %v", line, err)
		}
		out[f[0]] = n
	}
	return out
}

var leastSnowflake = regexp.MustCompile(`every ID firn issues is at least (\d+), past the floor`)

// leastID reads the least snowflake ID a plan promises.
func leastID(t *testing.T, plan string) uint64 {
	t.Helper()
	m := leastSnowflake.FindStringSubmatch(plan)
	if m == nil {
		t.Fatalf("the plan states no least snowflake ID:\n%s", plan)
	}
	v, _ := strconv.ParseUint(m[1], 10, 64)
	return v
}

// checkConfig runs firn config check on the plan's configuration.
func checkConfig(t *testing.T, plan string) string {
	t.Helper()
	cfg := planConfig(t, plan)
	if out, errOut, code := runCLI("config", "check", "--config", writeConfig(t, cfg)); code != 0 {
		t.Fatalf("firn config check of the plan's configuration: exit %d, %s%s\n%s", code, out, errOut, cfg)
	}
	return cfg
}

// planConfig is the configuration a plan ends with.
func planConfig(t *testing.T, plan string) string {
	t.Helper()
	_, cfg, ok := strings.Cut(plan, "firn config check --config FILE checks it):\n")
	if !ok {
		t.Fatalf("no configuration in the plan:\n%s", plan)
	}
	return cfg
}

func writeConfig(t *testing.T, cfg string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "firn.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// checkLeafConfig: the configuration of a Leaf plan listens on Leaf's
// port at an address config check refuses, saying what to put there,
// until it is replaced, and grants anonymous access to exactly grants
// (Leaf's clients send no credentials), with a warning.
func checkLeafConfig(t *testing.T, plan string, grants string) string {
	t.Helper()
	cfg := planConfig(t, plan)
	_, errOut, code := runCLI("config", "check", "--config", writeConfig(t, cfg))
	if code != 2 || !strings.Contains(errOut, "http.listen") || !strings.Contains(errOut, "replace <ADDRESS> with the address") {
		t.Fatalf("config check of the configuration as printed: exit %d, %q; want 2 and what to put in place of <ADDRESS>\n%s", code, errOut, cfg)
	}
	want := "anonymous: [" + grants + "]\n"
	if !strings.Contains(cfg, "listen: '<ADDRESS>:8080'") || !strings.Contains(cfg, want) || !strings.Contains(cfg, "# warning: Leaf's clients send no credentials") {
		t.Fatalf("configuration without Leaf's port, %q or the warning:\n%s", want, cfg)
	}
	filled := strings.ReplaceAll(cfg, "<ADDRESS>", "0.0.0.0")
	if out, errOut, code := runCLI("config", "check", "--config", writeConfig(t, filled)); code != 0 {
		t.Fatalf("config check once the address is filled in: exit %d, %s%s\n%s", code, out, errOut, filled)
	}
	return cfg
}

// TestMigrateCheckLeaf reads a Leaf database (Leaf's DDL and sample row,
// moved on by Leaf's own reservation statement) and the snowflake IDs an
// application stored from Leaf's snowflake mode. The plan's first segment
// ID is past everything Leaf handed out, its least snowflake ID past the
// floor; nothing is written without --apply, --apply without a floor is
// refused, and with one the next firn run issues past the floor, which is
// ahead of the clock.
func TestMigrateCheckLeaf(t *testing.T) {
	for _, kind := range []string{"mysql", "postgres"} {
		t.Run(kind, func(t *testing.T) { migrateCheckLeaf(t, kind) })
	}
}

func migrateCheckLeaf(t *testing.T, kind string) {
	a := newAccount(t, kind)
	a.run(t, legacytest.LeafTable(kind, "leaf_alloc")...)
	// Leaf's reservation, twice (IDAllocMapper.java line 27): Leaf handed
	// out [1, 2001) and [2001, 4001).
	a.run(t, "UPDATE leaf_alloc SET max_id = max_id + step WHERE biz_tag = '"+legacytest.LeafSampleTag+"'",
		"UPDATE leaf_alloc SET max_id = max_id + step WHERE biz_tag = '"+legacytest.LeafSampleTag+"'")
	tw, _ := snowflake.Preset("twitter")
	// Leaf's last snowflake ID, from a worker whose clock ran a minute ahead.
	floor, _ := tw.Compose(uint64(time.Now().Add(time.Minute).Sub(tw.Epoch)/time.Millisecond), 7, 42)
	a.run(t, "CREATE TABLE orders (id BIGINT PRIMARY KEY)", fmt.Sprintf("INSERT INTO orders VALUES (%d), (%d)", floor-1<<22, floor))
	before := a.snapshot(t)

	plan, errOut, code := runCLI("migrate", "check", "--from", "leaf", "--dialect", kind, "--dsn", a.adminDSN, "--max-id-from", "orders.id")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if got := firstIDs(t, plan)[legacytest.LeafSampleTag]; got < 4001 {
		t.Errorf("first ID of %s: %d; Leaf handed out IDs up to 4000", legacytest.LeafSampleTag, got)
	}
	if least := leastID(t, plan); least <= floor {
		t.Errorf("least snowflake ID %d is not past the floor %d", least, floor)
	}
	for _, want := range []string{"floor: " + strconv.FormatUint(floor, 10), "node 7, sequence 42: fits the layout", "ZooKeeper",
		"ok       SELECT, UPDATE on leaf_alloc", "nothing written"} {
		if !strings.Contains(plan, want) {
			t.Errorf("the plan lacks %q:\n%s", want, plan)
		}
	}
	cfg := checkLeafConfig(t, plan, "'snowflake', 'tag:"+legacytest.LeafSampleTag+"'")
	if !strings.Contains(cfg, "floor: "+strconv.FormatUint(floor, 10)) || !strings.Contains(cfg, "format: leaf") {
		t.Errorf("configuration without the floor or Leaf's table:\n%s", cfg)
	}
	if after := a.snapshot(t); after != before {
		t.Fatalf("migrate check wrote:\nbefore %s\nafter  %s", before, after)
	}

	_, errOut, code = runCLI("migrate", "check", "--from", "leaf", "--dialect", kind, "--dsn", a.adminDSN, "--apply")
	if code != 2 || !strings.Contains(errOut, "--apply needs a floor") {
		t.Errorf("--apply without a floor: exit %d, %q; want 2 and a refusal", code, errOut)
	}
	if after := a.snapshot(t); after != before {
		t.Fatalf("--apply without a floor wrote:\nbefore %s\nafter  %s", before, after)
	}

	if _, errOut, code := runCLI("migrate", "check", "--from", "leaf", "--dialect", kind, "--dsn", a.adminDSN, "--max-id-from", "orders.id", "--apply", "--nodes", "2"); code != 0 {
		t.Fatalf("--apply with a floor: exit %d: %s", code, errOut)
	}
	// A node held by a running process stops --apply, which says what it
	// already moved and what to do.
	held := heldNode(t, kind, a.adminDSN, 1)
	_, errOut, code = runCLI("migrate", "check", "--from", "leaf", "--dialect", kind, "--dsn", a.adminDSN, "--max-id-from", "orders.id", "--apply", "--nodes", "2")
	if code == 0 || !strings.Contains(errOut, "nodes [0] already advanced") || !strings.Contains(errOut, "stop the process holding it first") {
		t.Fatalf("--apply with node 1 held: exit %d, %q; want a failure naming node 0 as done and the holder to stop", code, errOut)
	}
	if err := held.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	// The floor is ahead of the clock: firn starts at the HWM --apply wrote.
	out, errOut, code := runCLI("next", "--layout", "twitter", "--store", kind, "--dsn", a.adminDSN, "--start-ahead")
	if id, _ := strconv.ParseUint(strings.TrimSpace(out), 10, 64); code != 0 || id <= floor {
		t.Fatalf("firn next after --apply: exit %d, %q %s; want an ID past %d", code, out, errOut, floor)
	}
}

// TestMigrateCheckLeafPrivileges: the plan names a privilege the account
// lacks, with the GRANT, and still writes nothing.
func TestMigrateCheckLeafPrivileges(t *testing.T) {
	a := newAccount(t, "mysql")
	a.run(t, legacytest.LeafTable("mysql", "leaf_alloc")...)
	a.run(t, "GRANT SELECT ON leaf_alloc TO "+a.user)
	before := a.snapshot(t)
	plan, errOut, code := runCLI("migrate", "check", "--from", "leaf", "--dsn", a.dsn)
	want := "REFUSED  sqlstore: permission denied for UPDATE leaf_alloc SET max_id = max_id + ?, update_time = … WHERE biz_tag = ? AND max_id BETWEEN 0 AND ?; to allow it: GRANT SELECT, UPDATE ON " +
		a.where + ".leaf_alloc TO " + a.user + ";"
	if code != 0 || !strings.Contains(plan, want) {
		t.Errorf("exit %d, %s; want a plan with %q:\n%s", code, errOut, want, plan)
	}
	if after := a.snapshot(t); after != before {
		t.Fatalf("migrate check wrote:\nbefore %s\nafter  %s", before, after)
	}
}

// TestMigrateCheckTinyid reads a Tinyid database (Tinyid's DDL and sample
// rows, bizType test moved on by Tinyid's own update): the first IDs are
// past max_id in each row's residue class, and the tokens are listed.
func TestMigrateCheckTinyid(t *testing.T) {
	for _, kind := range []string{"mysql", "postgres"} {
		t.Run(kind, func(t *testing.T) { migrateCheckTinyid(t, kind) })
	}
}

func migrateCheckTinyid(t *testing.T, kind string) {
	a := newAccount(t, kind)
	a.run(t, legacytest.TinyidInfoTable(kind, "tiny_id_info")...)
	a.run(t, legacytest.TinyidTokenTable(kind, "tiny_id_token")...)
	// Tinyid's reservation (TinyIdInfoDAOImpl.java lines 37–40) of bizType
	// test's first segment: it handed out (1, 100001].
	a.run(t, "update tiny_id_info set max_id= 100001, update_time=now(), version=version+1 where id=1 and max_id=1 and version=1 and biz_type='test'")
	before := a.snapshot(t)
	plan, errOut, code := runCLI("migrate", "check", "--from", "tinyid", "--dialect", kind, "--dsn", a.adminDSN)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	got := firstIDs(t, plan)
	for tag, want := range map[string]int64{"test": 100002, "test_odd": 3} {
		if got[tag] != want {
			t.Errorf("first ID of %s: %d; want %d, the next of its class past max_id", tag, got[tag], want)
		}
	}
	if !strings.Contains(plan, "covers bizTypes test, test_odd") || strings.Contains(plan, "snowflake, layout") {
		t.Errorf("plan:\n%s", plan)
	}
	checkConfig(t, plan)
	if after := a.snapshot(t); after != before {
		t.Fatalf("migrate check wrote:\nbefore %s\nafter  %s", before, after)
	}
}

// TestMigrateCheckUIDGenerator reads uid-generator's WORKER_NODE (its DDL
// and the rows of three starts) with the layout of its test configuration
// (default-uid-spring.xml lines 13–16: 29 time bits, 21 worker bits, 13
// sequence bits, epoch 2016-09-20 in the JVM's zone, here UTC+8): the
// workers it assigned are reserved, the floor's worker is checked against
// them, and the least ID is past the floor.
func TestMigrateCheckUIDGenerator(t *testing.T) {
	a := newAccount(t, "mysql")
	a.run(t, legacytest.UidgenTable("WORKER_NODE", 3)...)
	layout := []string{"--layout", "baidu", "--time-bits", "29", "--node-bits", "21", "--sequence-bits", "13", "--epoch", "2016-09-20T00:00:00+08:00"}
	l, err := config.Layout{Preset: "baidu", TimeBits: "29", NodeBits: "21", SequenceBits: "13", Epoch: "2016-09-20T00:00:00+08:00"}.Snowflake()
	if err != nil {
		t.Fatal(err)
	}
	// CachedUidGenerator's last ID, a minute ahead of the clock, of worker 3.
	floor, _ := l.Compose(uint64(time.Now().Add(time.Minute).Sub(l.Epoch)/time.Second), 3, 8191)
	alien, _ := l.Compose(uint64(time.Since(l.Epoch)/time.Second), 99, 0)
	a.run(t, "CREATE TABLE orders (id BIGINT PRIMARY KEY)", fmt.Sprintf("INSERT INTO orders VALUES (%d)", floor))
	before := a.snapshot(t)
	args := append([]string{"migrate", "check", "--from", "uid-generator", "--dsn", a.adminDSN}, layout...)
	plan, errOut, code := runCLI(append(args, "--max-id-from", "orders.id")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if least := leastID(t, plan); least <= floor {
		t.Errorf("least snowflake ID %d is not past the floor %d", least, floor)
	}
	for _, want := range []string{"node IDs to reserve (registry.reserved_nodes): 1, 2, 3", "firn takes node 0 first",
		"node 3, sequence 8191: fits the layout", "Spring configuration", "CachedUidGenerator issues ahead of the clock"} {
		if !strings.Contains(plan, want) {
			t.Errorf("the plan lacks %q:\n%s", want, plan)
		}
	}
	if cfg := checkConfig(t, plan); !strings.Contains(cfg, "reserved_nodes: [1, 2, 3]") {
		t.Errorf("configuration without the reserved nodes:\n%s", cfg)
	}
	plan, errOut, code = runCLI(append(args, "--floor", strconv.FormatUint(alien, 10), "--apply")...)
	if code != 2 || !strings.Contains(errOut, "worker 99, which WORKER_NODE never assigned") {
		t.Errorf("--apply with a floor of another layout: exit %d, %q %s", code, errOut, plan)
	}
	if after := a.snapshot(t); after != before {
		t.Fatalf("migrate check wrote:\nbefore %s\nafter  %s", before, after)
	}
}

// TestMigrateCheckUIDGeneratorPrivileges: an account that may read
// WORKER_NODE but not ALTER it gets a plan that names the GRANT --apply
// needs, and --apply is refused before it writes anything: uid-generator
// still gives the next start worker 4.
func TestMigrateCheckUIDGeneratorPrivileges(t *testing.T) {
	a := newAccount(t, "mysql")
	a.run(t, legacytest.UidgenTable("WORKER_NODE", 3)...)
	a.run(t, "GRANT SELECT ON WORKER_NODE TO "+a.user)
	args := []string{"migrate", "check", "--from", "uid-generator", "--dsn", a.dsn, "--layout", "baidu",
		"--time-bits", "29", "--node-bits", "21", "--sequence-bits", "13", "--epoch", "2016-09-20T00:00:00+08:00"}
	l, err := config.Layout{Preset: "baidu", TimeBits: "29", NodeBits: "21", SequenceBits: "13", Epoch: "2016-09-20T00:00:00+08:00"}.Snowflake()
	if err != nil {
		t.Fatal(err)
	}
	floor, _ := l.Compose(uint64(time.Since(l.Epoch)/time.Second), 3, 0)
	grant := "GRANT ALTER, INSERT ON " + a.where + ".WORKER_NODE TO " + a.user + ";"
	plan, errOut, code := runCLI(args...)
	if code != 0 || !strings.Contains(plan, "REFUSED") || !strings.Contains(plan, grant) {
		t.Errorf("exit %d, %s; want a plan with REFUSED and %q:\n%s", code, errOut, grant, plan)
	}
	_, errOut, code = runCLI(append(args, "--floor", strconv.FormatUint(floor, 10), "--apply")...)
	if code == 0 || !strings.Contains(errOut, grant) {
		t.Errorf("--apply without ALTER: exit %d, %s; want a refusal with %q", code, errOut, grant)
	}
	a.run(t, strings.Split(legacytest.UidgenTable("WORKER_NODE", 4)[4], "\x00")[0])
	var next int64
	if err := a.admin.QueryRow("SELECT MAX(ID) FROM WORKER_NODE").Scan(&next); err != nil {
		t.Fatal(err)
	}
	if next != 4 {
		t.Errorf("after a refused --apply uid-generator's next start got worker %d, want 4 (nothing written)", next)
	}
}

// TestMigrateCheckTinyidBadResidue: a Tinyid row whose delta and
// remainder make no residue class (remainder >= delta, delta < 1) issues
// no ID from firn: the plan flags it instead of printing a first ID.
func TestMigrateCheckTinyidBadResidue(t *testing.T) {
	a := newAccount(t, "mysql")
	a.run(t, legacytest.TinyidInfoTable("mysql", "tiny_id_info")...)
	a.run(t, legacytest.TinyidTokenTable("mysql", "tiny_id_token")...)
	row := "INSERT INTO tiny_id_info (id, biz_type, begin_id, max_id, step, delta, remainder, create_time, update_time, version) " +
		"VALUES (%d, '%s', 1, 1, 100, %d, %d, NOW(), NOW(), 1)"
	a.run(t, fmt.Sprintf(row, 10, "rem_past_delta", 2, 2), fmt.Sprintf(row, 11, "delta_zero", 0, 0))
	plan, errOut, code := runCLI("migrate", "check", "--from", "tinyid", "--dsn", a.adminDSN)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, tt := range []struct{ tag, reason string }{
		{"rem_past_delta", "delta 2 and remainder 2 do not make a residue class"},
		{"delta_zero", "delta 0 and remainder 0 do not make a residue class"},
	} {
		if !regexp.MustCompile(`(?m)^  `+tt.tag+` +REFUSED `).MatchString(plan) || !strings.Contains(plan, "REFUSED  "+tt.tag+": "+tt.reason) {
			t.Errorf("the plan does not flag %s (%s):\n%s", tt.tag, tt.reason, plan)
		}
	}
	if !regexp.MustCompile(`(?m)^  test +2 `).MatchString(plan) {
		t.Errorf("the sound row test lost its first ID 2:\n%s", plan)
	}
	list, errOut, code := runCLI("tag", "list", "--store", "mysql", "--dsn", a.adminDSN, "--segments", "tinyid")
	if code != 0 || !regexp.MustCompile(`(?m)^delta_zero .*INVALID: 0 mod 0, issues nothing`).MatchString(list) {
		t.Errorf("tag list: exit %d, %s\n%s; want the row with delta 0 marked", code, errOut, list)
	}
}

// heldNode takes node of the twitter layout in the SQL registry of dsn,
// as a running firn serve would hold it.
func heldNode(t *testing.T, kind, dsn string, node uint64) *nodeid.Lease {
	t.Helper()
	sf := backend.Options{Registry: config.Registry{Store: kind, DSN: dsn, DialTimeout: 5 * time.Second}, Segments: config.Segments{Format: "leaf"}}
	store, closeStore, err := sf.OpenNodes(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = closeStore() })
	l, _ := snowflake.Preset("twitter")
	lease, err := nodeid.Acquire(context.Background(), store, nodeid.Config{NodeBits: l.NodeBits(), Node: &node, Layout: config.SpaceID(l, nil), StartAhead: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = lease.Close(context.Background()) })
	return lease
}

// TestMigrateApplySaysWhatItReadAndWrote: with the registry in the same
// database, --apply's plan says that the node table was read before
// anything was written (missing then), which table it wrote the HWMs into,
// and what a read of it finds afterwards — never "UNREADABLE" as the last
// word on a table --apply has just written.
func TestMigrateApplySaysWhatItReadAndWrote(t *testing.T) {
	for _, kind := range []string{"mysql", "postgres"} {
		t.Run(kind, func(t *testing.T) {
			a := newAccount(t, kind)
			a.run(t, legacytest.LeafTable(kind, "leaf_alloc")...)
			tw, _ := snowflake.Preset("twitter")
			floor, _ := tw.Compose(uint64(time.Now().Add(-time.Minute).Sub(tw.Epoch)/time.Millisecond), 7, 42)
			a.run(t, "CREATE TABLE orders (id BIGINT PRIMARY KEY)", fmt.Sprintf("INSERT INTO orders VALUES (%d)", floor))
			plan, errOut, code := runCLI("migrate", "check", "--from", "leaf", "--dialect", kind, "--dsn", a.adminDSN,
				"--store", kind, "--max-id-from", "orders.id", "--apply")
			if code != 0 {
				t.Fatalf("--apply: exit %d: %s\n%s", code, errOut, plan)
			}
			before, rest, ok := strings.Cut(plan, "\napplied: ")
			if !ok {
				t.Fatalf("no applied line:\n%s", plan)
			}
			for _, want := range []string{"read before --apply wrote anything", "UNREADABLE firn_nodes"} {
				if !strings.Contains(before, want) {
					t.Errorf("the plan before its applied lines lacks %q:\n%s", want, plan)
				}
			}
			for _, want := range []string{"(table firn_nodes)", "read again after --apply:\n  ok       ", " on firn_nodes"} {
				if !strings.Contains(rest, want) {
					t.Errorf("the plan after --apply lacks %q:\n%s", want, plan)
				}
			}
			if strings.Contains(rest, "UNREADABLE") {
				t.Errorf("the plan calls a table unreadable after --apply wrote it:\n%s", plan)
			}
		})
	}
}
