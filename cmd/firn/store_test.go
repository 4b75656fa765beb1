package main

import (
	"bytes"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/firn-id/firn/internal/testenv"
	"github.com/firn-id/firn/internal/testserver"
)

func suffix() string {
	b := make([]byte, 6)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// TestNextOnSharedStores runs firn next twice against each real store:
// the second run starts past the first, and each says on stderr which
// node of the shared registry it took.
func TestNextOnSharedStores(t *testing.T) {
	stores := []struct {
		name string
		args func(t *testing.T) []string
	}{
		{"etcd", func(t *testing.T) []string {
			c := testserver.Etcd(t, 1)
			return []string{"--store", "etcd", "--endpoints", strings.Join(c.Endpoints(), ","), "--namespace", "/cli-" + suffix() + "/"}
		}},
		{"postgres", func(t *testing.T) []string {
			dsn := testenv.Endpoint(t, "FIRN_TEST_POSTGRES")
			table := "firn_nodes_cli_" + suffix()
			t.Cleanup(func() { dropTables(t, "postgres", dsn, table) })
			return []string{"--store", "postgres", "--dsn", dsn, "--table", table}
		}},
		{"mysql", func(t *testing.T) []string {
			dsn := testenv.Endpoint(t, "FIRN_TEST_MYSQL")
			table := "firn_nodes_cli_" + suffix()
			t.Cleanup(func() { dropTables(t, "mysql", dsn, table) })
			return []string{"--store", "mysql", "--dsn", dsn, "--table", table}
		}},
		{"postgres", func(t *testing.T) []string { // a server's configuration file
			dsn := testenv.Endpoint(t, "FIRN_TEST_POSTGRES")
			table := "firn_nodes_cli_" + suffix()
			t.Cleanup(func() { dropTables(t, "postgres", dsn, table) })
			f := filepath.Join(t.TempDir(), "firn.yaml")
			doc := fmt.Sprintf("registry: {store: postgres, dsn: %q, table: %s, node: \"7\"}\nhttp: {listen: \"127.0.0.1:18080\"}\n", dsn, table)
			if err := os.WriteFile(f, []byte(doc), 0o600); err != nil {
				t.Fatal(err)
			}
			return []string{"--config", f}
		}},
	}
	for _, st := range stores {
		t.Run(st.name, func(t *testing.T) {
			args := append([]string{"next", "-n", "1000"}, st.args(t)...)
			var last int64 = -1
			for run := range 2 {
				var said bytes.Buffer
				old := logOutput
				logOutput = &said
				out, errOut, code := runCLI(args...)
				logOutput = old
				if code != 0 {
					t.Fatalf("run %d: exit %d: %s", run, code, errOut)
				}
				// Never silently a node of the shared pool.
				if want := "firn next: took node 0 of " + st.name + " namespace"; !strings.Contains(said.String(), want) || !strings.Contains(said.String(), "--server URL") {
					t.Fatalf("run %d said %q; want %q and how to ask a server", run, said.String(), want)
				}
				ids := strings.Fields(out)
				first, _ := strconv.ParseInt(ids[0], 10, 64)
				if first <= last {
					t.Fatalf("run %d starts at %d, not past %d", run, first, last)
				}
				last, _ = strconv.ParseInt(ids[len(ids)-1], 10, 64)
			}
		})
	}
}

func dropTables(t *testing.T, dialect, dsn, table string) {
	driver := map[string]string{"postgres": "pgx", "mysql": "mysql"}[dialect]
	db, err := sql.Open(driver, dsn)
	if err != nil {
		t.Error(err)
		return
	}
	defer db.Close()
	for _, tb := range []string{table, table + "_namespaces"} {
		if _, err := db.Exec("DROP TABLE IF EXISTS " + tb); err != nil {
			t.Error(err)
		}
	}
}

// TestSegmentsFromADatabaseOfTheirOwn: node IDs from one store (the
// local directory here) and segments from a Leaf table in MariaDB, chosen
// separately; firn tag reaches the same table with the same flags.
func TestSegmentsFromADatabaseOfTheirOwn(t *testing.T) {
	dsn := testenv.Endpoint(t, "FIRN_TEST_MYSQL")
	seg := "leaf_alloc_own_" + suffix()
	t.Cleanup(func() { dropTables(t, "mysql", dsn, seg) })
	dir := t.TempDir()
	segArgs := []string{"--segment-store", "mysql", "--segment-dsn", dsn, "--segment-table", seg}
	if _, errOut, code := runCLI(append([]string{"tag", "create", "order", "--step", "10", "--data-dir", dir}, segArgs...)...); code != 0 {
		t.Fatalf("tag create: exit %d, %s", code, errOut)
	}
	base := startBeside(t, dir, segArgs...)
	ids := strings.Fields(fetch(t, base+"/v1/segments/order/batch?count=5&format=text"))
	if len(ids) != 5 || ids[0] != "1" {
		t.Fatalf("segment IDs %v, want 1 to 5 from the Leaf table", ids)
	}
	// The tag is in the Leaf table, not in the data directory, which
	// holds the node.
	if out, errOut, code := runCLI("tag", "list", "--data-dir", t.TempDir()); code != 0 || strings.Contains(out, "order") {
		t.Fatalf("tag list on a data directory alone: exit %d, %q %s", code, out, errOut)
	}
	if out, errOut, code := runCLI(append([]string{"tag", "list", "--data-dir", t.TempDir()}, segArgs...)...); code != 0 || !strings.Contains(out, "order") {
		t.Fatalf("tag list of the Leaf table: exit %d, %q %s", code, out, errOut)
	}
	for _, tc := range []struct {
		args    []string
		wantErr string
	}{
		{[]string{"--segment-store", "etcd", "--segment-dsn", "x"}, "segments.store"},
		{[]string{"--segment-store", "mysql"}, "segments.dsn"},
		{[]string{"--segment-dsn", dsn}, "segments.store"},
	} {
		if _, errOut, code := runCLI(append([]string{"config", "check"}, tc.args...)...); code != 2 || !strings.Contains(errOut, tc.wantErr) {
			t.Errorf("config check %v: exit %d, %q; want 2 naming %s", tc.args, code, errOut, tc.wantErr)
		}
	}
}
