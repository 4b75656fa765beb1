package main

import (
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"strconv"
	"strings"
	"testing"

	"github.com/firn-id/firn/internal/etcdtest"
	"github.com/firn-id/firn/internal/testenv"
)

func suffix() string {
	b := make([]byte, 6)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// TestNextOnSharedStores runs firn next twice against each real store:
// the second run starts past the first.
func TestNextOnSharedStores(t *testing.T) {
	stores := []struct {
		name string
		args func(t *testing.T) []string
	}{
		{"etcd", func(t *testing.T) []string {
			c := etcdtest.Start(t, 1)
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
	}
	for _, st := range stores {
		t.Run(st.name, func(t *testing.T) {
			args := append([]string{"next", "-n", "1000"}, st.args(t)...)
			var last int64 = -1
			for run := range 2 {
				out, errOut, code := runCLI(args...)
				if code != 0 {
					t.Fatalf("run %d: exit %d: %s", run, code, errOut)
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
