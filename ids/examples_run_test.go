package ids_test

import (
	"bytes"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"io"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/firn-id/firn/internal/testenv"
	"github.com/firn-id/firn/internal/testserver"
)

// TestExamples runs each store's Example against the real server, the
// way a reader would: the environment variable it reads set to a fresh
// database (or server, or directory), what it prints checked.
func TestExamples(t *testing.T) {
	for _, tc := range []struct {
		name string
		run  func()
		env  func(t *testing.T) (string, string)
		want string
	}{
		{"postgres", Example_postgres, freshPostgres, "true"},
		{"FromDB", ExampleFromDB, freshPostgres, "VERSION_7"},
		{"mysql", Example_mysql, freshMySQL, "true true"},
		{"etcd", ExampleNew, func(t *testing.T) (string, string) {
			return "ETCD_ENDPOINTS", strings.Join(testserver.Etcd(t, 1).Endpoints(), ",")
		}, "true"},
		{"zookeeper", Example_zooKeeper, func(t *testing.T) (string, string) {
			return "ZOOKEEPER_SERVERS", strings.Join(testserver.ZooKeeper(t).Servers(), ",")
		}, "true"},
		{"local", Example_local, func(t *testing.T) (string, string) {
			t.Setenv("XDG_STATE_HOME", t.TempDir())
			return "STATE_DIRECTORY", t.TempDir()
		}, "26"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			name, value := tc.env(t)
			t.Setenv(name, value)
			if got := strings.TrimSpace(stdoutOf(t, tc.run)); got != tc.want {
				t.Errorf("the example printed %q, want %q", got, tc.want)
			}
		})
	}
}

// stdoutOf runs f and returns what it wrote to standard output.
func stdoutOf(t *testing.T, f func()) string {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	old := os.Stdout
	os.Stdout = w
	done := make(chan []byte)
	go func() { b, _ := io.ReadAll(r); done <- b }()
	defer func() { os.Stdout = old }()
	f()
	w.Close()
	return string(bytes.TrimSpace(<-done))
}

// freshPostgres creates a database of the test's own on the test server
// and returns DATABASE_URL naming it.
func freshPostgres(t *testing.T) (string, string) {
	dsn := testenv.Endpoint(t, "FIRN_TEST_POSTGRES")
	name := freshDatabase(t, "pgx", dsn)
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + name
	return "DATABASE_URL", u.String()
}

// freshMySQL does the same on the MySQL test server, for MYSQL_DSN.
func freshMySQL(t *testing.T) (string, string) {
	dsn := testenv.Endpoint(t, "FIRN_TEST_MYSQL")
	name := freshDatabase(t, "mysql", dsn)
	base, _, _ := strings.Cut(dsn, "?")
	i := strings.LastIndex(base, "/")
	return "MYSQL_DSN", base[:i+1] + name
}

// freshDatabase creates a database with a random name and drops it when
// the test ends.
func freshDatabase(t *testing.T, driver, dsn string) string {
	t.Helper()
	db, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	b := make([]byte, 6)
	rand.Read(b)
	name := "firn_ids_" + hex.EncodeToString(b)
	if _, err := db.Exec("CREATE DATABASE " + name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Exec("DROP DATABASE " + name) })
	return name
}
