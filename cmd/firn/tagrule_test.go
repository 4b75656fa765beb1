package main

import (
	"database/sql"
	"strings"
	"testing"

	"github.com/firn-id/firn/internal/testenv"
	"github.com/firn-id/firn/segment"
	"github.com/firn-id/firn/segment/segmenttest"
	"github.com/firn-id/firn/sqlstore"
)

// TestTagCreateRunsTheTagRule runs the shared new-tag table through
// `firn tag create` on the data directory: exit 0 for a valid tag, 2 with
// the rule named for an invalid one.
func TestTagCreateRunsTheTagRule(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range segmenttest.NewTagCases(segment.Limits{Tag: segment.LongestTag, Description: 1024}) {
		out, errOut, code := runCLI("tag", "create", tc.Tag, "--data-dir", dir)
		switch {
		case tc.Valid && code != 0:
			t.Errorf("%s: exit %d: %s", tc.Name, code, errOut)
		case !tc.Valid && (code != 2 || out != "" || !strings.Contains(errOut, "printable")):
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit 2 naming the rule", tc.Name, code, out, errOut)
		}
	}
}

// TestTagStepPastStepLimitExits2: `firn tag step` took 2^62 on the old
// code; a step past segment.StepLimit is now bad input, and the step
// stays as it was.
func TestTagStepPastStepLimitExits2(t *testing.T) {
	dir := t.TempDir()
	run := func(args ...string) (string, string, int) { return runCLI(append(args, "--data-dir", dir)...) }
	if _, errOut, code := run("tag", "create", "order", "--step", "10"); code != 0 {
		t.Fatalf("create: exit %d: %s", code, errOut)
	}
	for _, args := range [][]string{
		{"tag", "step", "order", "4611686018427387904"}, {"tag", "step", "order", "3000000000"},
		{"tag", "create", "big", "--step", "3000000000"},
	} {
		if out, errOut, code := run(args...); code != 2 || out != "" || !strings.Contains(errOut, "want 1 to 2147483647") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 naming the bound", args, code, out, errOut)
		}
	}
	out, _, _ := run("tag", "list")
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) > 2 && f[0] == "order" && f[2] != "10" {
			t.Errorf("list after the refusals:\n%s\nwant order's step still 10", out)
		}
	}
	if !strings.Contains(out, "order") {
		t.Errorf("list:\n%s\nwant order", out)
	}
}

// TestTagCreateOnALatin1TableExits2: a tag the rule allows but the
// database cannot hold (Leaf's table in a latin1 database) reaches the
// store's classifier, given by cmd/firn: exit 2, and no row. The old
// INSERT IGNORE stored it as "??" and exited 0.
func TestTagCreateOnALatin1TableExits2(t *testing.T) {
	dsn := testenv.Endpoint(t, "FIRN_TEST_MYSQL")
	table := "leaf_alloc_cli_" + suffix()
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	t.Cleanup(func() { db.Exec("DROP TABLE IF EXISTS " + table) })
	ddl, _ := sqlstore.SegmentSchema(sqlstore.MySQL, table)
	ddl = strings.Replace(ddl, "ENGINE=InnoDB;", "ENGINE=InnoDB DEFAULT CHARSET=latin1;", 1)
	if _, err := db.Exec(strings.TrimSuffix(strings.TrimSpace(ddl), ";")); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runCLI("tag", "create", "注文", "--store", "mysql", "--dsn", dsn, "--segment-table", table)
	if code != 2 || out != "" || !strings.Contains(errOut, "invalid input") {
		t.Fatalf("exit %d, stdout %q, stderr %q; want exit 2, invalid input", code, out, errOut)
	}
	var n int
	if err := db.QueryRow("SELECT COUNT(*) FROM " + table).Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d rows, %v; want none", n, err)
	}
}
