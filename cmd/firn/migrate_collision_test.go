package main

// Ways a switch planned by firn migrate check could issue an ID the old
// system already issued, each closed (an outage misread as a missing
// table is sqlstore's TestLibraryStoreLockedTableIsAnOutage).

import (
	"fmt"
	"github.com/firn-id/firn/cmd/firn/internal/config"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/firn-id/firn/internal/legacytest"
	"github.com/firn-id/firn/snowflake"
)

var planFloor = regexp.MustCompile(`(?m)^  floor: (\d+), from`)

// TestMigrateMaxIDOverTextComparesNumbers: applications that store
// snowflake IDs as strings (for JavaScript) keep them in VARCHAR. MAX over
// a string column is lexicographic: MAX('999', '1844…') = '999', a floor
// years below the largest ID. --max-id-from compares the values as
// numbers, and refuses a largest value past 2^63-1.
func TestMigrateMaxIDOverTextComparesNumbers(t *testing.T) {
	for _, kind := range []string{"mysql", "postgres"} {
		t.Run(kind, func(t *testing.T) {
			a := newAccount(t, kind)
			a.run(t, legacytest.LeafTable(kind, "leaf_alloc")...)
			tw, _ := snowflake.Preset("twitter")
			big, _ := tw.Compose(uint64(time.Now().Add(time.Minute).Sub(tw.Epoch)/time.Millisecond), 7, 42)
			a.run(t, "CREATE TABLE orders (id VARCHAR(20) PRIMARY KEY)",
				fmt.Sprintf("INSERT INTO orders VALUES ('999'), ('%d')", big))
			plan, errOut, code := runCLI("migrate", "check", "--from", "leaf", "--dialect", kind, "--dsn", a.adminDSN,
				"--max-id-from", "orders.id")
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			m := planFloor.FindStringSubmatch(plan)
			if m == nil {
				t.Fatalf("no floor in the plan: %s\n%s", errOut, plan)
			}
			if got, _ := strconv.ParseUint(m[1], 10, 64); got < big {
				t.Errorf("floor %d from MAX over a VARCHAR column; the largest ID stored is %d (a minute ahead of the clock):\n%s", got, big, plan)
			}
			a.run(t, "INSERT INTO orders VALUES ('9223372036854775808')")
			if _, errOut, code := runCLI("migrate", "check", "--from", "leaf", "--dialect", kind, "--dsn", a.adminDSN,
				"--max-id-from", "orders.id"); code == 0 || !strings.Contains(errOut, "2^63-1") {
				t.Errorf("a value past 2^63-1 as the largest: exit %d, %s; want a refusal naming 2^63-1", code, errOut)
			}
		})
	}
}

// TestMigrateRefusesNodeFirstOrder: with --order node,time,sequence the
// largest ID is the largest node's last ID, not the last ID in time: a
// worker 0 whose clock ran a minute ahead issued later ticks below the
// floor of worker 7, so no floor bounds what each node issued, and
// Compose(floorTick+1, node 0, 0) is below the floor. The plan and
// --apply are refused, with the reason.
func TestMigrateRefusesNodeFirstOrder(t *testing.T) {
	a := newAccount(t, "mysql")
	a.run(t, legacytest.LeafTable("mysql", "leaf_alloc")...)
	layout := []string{"--layout", "twitter", "--order", "node,time,sequence"}
	l, err := config.Layout{Preset: "twitter", Order: "node,time,sequence"}.Snowflake()
	if err != nil {
		t.Fatal(err)
	}
	tick := func(d time.Duration) uint64 { return uint64(time.Now().Add(d).Sub(l.Epoch) / l.Tick) }
	floor, _ := l.Compose(tick(-time.Hour), 7, 0) // worker 7 stopped an hour ago
	w0, _ := l.Compose(tick(time.Minute), 0, 0)   // worker 0, a minute ahead
	a.run(t, "CREATE TABLE orders (id BIGINT PRIMARY KEY)", fmt.Sprintf("INSERT INTO orders VALUES (%d), (%d)", floor, w0))
	base := append([]string{"migrate", "check", "--from", "leaf", "--dsn", a.adminDSN}, layout...)
	for _, tt := range []struct {
		name string
		args []string
	}{
		{"the plan", []string{"--max-id-from", "orders.id"}},
		{"--apply", []string{"--max-id-from", "orders.id", "--apply", "--nodes", "2"}},
		{"no floor", nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			plan, errOut, code := runCLI(append(slices.Clone(base), tt.args...)...)
			if code != 2 || !strings.Contains(errOut, "time is not its top part") {
				t.Errorf("exit %d, %s; want exit 2 saying time is not the top part:\n%s", code, errOut, plan)
			}
		})
	}
	var rows int
	if err := a.admin.QueryRow("SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name LIKE 'firn_nodes%'").Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if rows != 0 {
		t.Errorf("a refused --apply created %d firn_nodes tables", rows)
	}
}

// TestMigrateApplyFencesUIDGeneratorRestarts: uid-generator's
// DisposableWorkerIdAssigner gives every start a new worker ID, the next
// AUTO_INCREMENT of WORKER_NODE. The plan reserves the IDs assigned so
// far (1, 2, 3) and firn takes 0 and then the lowest others (4, 5, …),
// so an old instance that restarted during the migration would be given
// worker 4, a node firn serves. --apply moves the AUTO_INCREMENT past the
// layout's last node, so that instance is given a worker ID its
// DefaultUidGenerator refuses (DefaultUidGenerator.java lines 91–92),
// and the plan says so and checks the ALTER privilege it needs.
func TestMigrateApplyFencesUIDGeneratorRestarts(t *testing.T) {
	a := newAccount(t, "mysql")
	a.run(t, legacytest.UidgenTable("WORKER_NODE", 3)...)
	layout := []string{"--layout", "baidu", "--time-bits", "29", "--node-bits", "21", "--sequence-bits", "13", "--epoch", "2016-09-20T00:00:00+08:00"}
	l, err := config.Layout{Preset: "baidu", TimeBits: "29", NodeBits: "21", SequenceBits: "13", Epoch: "2016-09-20T00:00:00+08:00"}.Snowflake()
	if err != nil {
		t.Fatal(err)
	}
	floor, _ := l.Compose(uint64(time.Since(l.Epoch)/time.Second), 3, 100)
	a.run(t, "CREATE TABLE orders (id BIGINT PRIMARY KEY)", fmt.Sprintf("INSERT INTO orders VALUES (%d)", floor))
	args := append([]string{"migrate", "check", "--from", "uid-generator", "--dsn", a.adminDSN, "--max-id-from", "orders.id", "--apply"}, layout...)
	plan, errOut, code := runCLI(args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	// An old instance restarts: uid-generator's own INSERT.
	a.run(t, strings.Split(legacytest.UidgenTable("WORKER_NODE", 4)[4], "\x00")[0])
	var newWorker uint64
	if err := a.admin.QueryRow("SELECT MAX(ID) FROM WORKER_NODE").Scan(&newWorker); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(plan, fmt.Sprintf("AUTO_INCREMENT = %d", l.MaxNode()+1)) || !regexp.MustCompile(`(?m)^  ok +ALTER, INSERT on WORKER_NODE`).MatchString(plan) {
		t.Errorf("the plan does not name the ALTER --apply runs, or its privilege check:\n%s", plan)
	}
	reserved := regexp.MustCompile(`reserved_nodes: \[([0-9, ]*)\]`).FindStringSubmatch(plan)
	if newWorker <= l.MaxNode() && (reserved == nil || !strings.Contains(", "+reserved[1]+",", " "+strconv.FormatUint(newWorker, 10)+",")) {
		t.Errorf("a uid-generator instance that starts after the plan gets worker %d, which firn's registry may hand out "+
			"(reserved: %v; the layout has nodes up to %d):\n%s", newWorker, reserved, l.MaxNode(), plan)
	}
}

// TestMigrateLeafSnowflakeOnlyHasNoSegments: a Leaf deployment that uses
// only the snowflake mode (leaf.segment.enable=false) has no leaf_alloc
// table: its state is all in ZooKeeper. firn migrate check --from leaf
// reads the missing table as "no segments", prints the snowflake plan
// with its floor, leaves segments out of the configuration, and --apply
// records the floor.
func TestMigrateLeafSnowflakeOnlyHasNoSegments(t *testing.T) {
	a := newAccount(t, "mysql")
	tw, _ := snowflake.Preset("twitter")
	floor, _ := tw.Compose(uint64(time.Since(tw.Epoch)/time.Millisecond), 7, 42)
	a.run(t, "CREATE TABLE orders (id BIGINT PRIMARY KEY)", fmt.Sprintf("INSERT INTO orders VALUES (%d)", floor))
	args := []string{"migrate", "check", "--from", "leaf", "--dsn", a.adminDSN, "--max-id-from", "orders.id"}
	plan, errOut, code := runCLI(args...)
	if code != 0 || !strings.Contains(plan, "floor: "+strconv.FormatUint(floor, 10)) {
		t.Errorf("Leaf in snowflake mode only: exit %d, %s\n%s", code, errOut, plan)
	}
	if !strings.Contains(plan, "segments: none") || strings.Contains(plan, "format: leaf") {
		t.Errorf("the plan does not say there are no segments, or configures them:\n%s", plan)
	}
	plan, errOut, code = runCLI(append(args, "--apply", "--nodes", "2")...)
	if code != 0 || !strings.Contains(plan, "applied: the HWM of") {
		t.Errorf("--apply, Leaf in snowflake mode only: exit %d, %s\n%s", code, errOut, plan)
	}
}
