package main

import (
	"bytes"
	"context"
	"database/sql"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/firn-id/firn/internal/testenv"
)

// silentListener accepts connections and never answers: a firewall that
// drops replies, a hung server.
func silentListener(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return ln.Addr().String()
}

// closedPort returns an address nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// storeArgs are the flags that point a command at addr.
func storeArgs(kind, addr string) []string {
	switch kind {
	case "etcd":
		return []string{"--store", "etcd", "--endpoints", "http://" + addr}
	case "postgres":
		return []string{"--store", "postgres", "--dsn", "postgres://firn:s3cretpw@" + addr + "/db?sslmode=disable"}
	}
	return []string{"--store", "mysql", "--dsn", "firn:s3cretpw@tcp(" + addr + ")/db"}
}

// runBounded runs the command line, failing the test if it has not
// returned when the test's own deadline (60 s, far above any dial
// timeout used here) ends.
func runBounded(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	type result struct {
		out, errOut string
		code        int
	}
	done := make(chan result, 1)
	go func() {
		out, errOut, code := runCLI(args...)
		done <- result{out, errOut, code}
	}()
	select {
	case r := <-done:
		return r.out, r.errOut, r.code
	case <-ctx.Done():
		t.Fatalf("firn %s did not return: it waits on the store forever", strings.Join(args, " "))
		return "", "", 0
	}
}

func TestUnreachableStoreIsReportedNotWaitedOn(t *testing.T) {
	for _, kind := range []string{"etcd", "postgres", "mysql"} {
		for _, fault := range []struct {
			name string
			addr func(*testing.T) string
		}{{"silent listener", silentListener}, {"closed port", closedPort}} {
			for _, cmd := range [][]string{{"next"}, {"tag", "list"}, {"admin", "advance", "--node", "0", "--to", "2026-01-01T00:00:00Z"}} {
				name := kind + "/" + fault.name + "/" + strings.Join(cmd, " ")
				t.Run(name, func(t *testing.T) {
					addr := fault.addr(t)
					args := append(append(cmd, storeArgs(kind, addr)...), "--dial-timeout", "200ms")
					out, errOut, code := runBounded(t, args...)
					if code != 1 || out != "" {
						t.Fatalf("exit %d, stdout %q, stderr %q; want exit 1 and nothing on stdout", code, out, errOut)
					}
					if strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, kind+" ") || !strings.Contains(errOut, addr) {
						t.Fatalf("stderr %q: want one line naming %s %s", errOut, kind, addr)
					}
					if !strings.Contains(errOut, "no answer within 200ms (--dial-timeout)") && !strings.Contains(errOut, "unreachable: ") {
						t.Fatalf("stderr %q: want the dial timeout or the cause", errOut)
					}
					if strings.Contains(errOut, "s3cretpw") {
						t.Fatalf("stderr shows the password: %q", errOut)
					}
				})
			}
		}
	}
}

func TestMalformedStoreAddressIsBadInput(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{name: "etcd port", args: []string{"--store", "etcd", "--endpoints", "http://127.0.0.1:x"}, wantErr: "--endpoints http://127.0.0.1:x: want"},
		{name: "etcd scheme", args: []string{"--store", "etcd", "--endpoints", "ftp://127.0.0.1:2379"}, wantErr: "want http://host:port"},
		{name: "etcd no port", args: []string{"--store", "etcd", "--endpoints", "127.0.0.1"}, wantErr: "want host:port"},
		{name: "postgres URL", args: []string{"--store", "postgres", "--dsn", "postgres://u:s3cretpw@h:xx/db"}, wantErr: "not a PostgreSQL DSN"},
		{name: "postgres unterminated quote", args: []string{"--store", "postgres", "--dsn", "host=db password='s3cret pw port=1"}, wantErr: "not a PostgreSQL DSN"},
		{name: "mysql no slash", args: []string{"--store", "mysql", "--dsn", "u:s3cretpw@tcp(h:3306)"}, wantErr: "not a MySQL DSN"},
		{name: "dial timeout", args: []string{"--store", "mysql", "--dsn", "u@tcp(h:3306)/db", "--dial-timeout", "0s"}, wantErr: "0s: want a duration above 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, code := runBounded(t, append([]string{"next"}, tt.args...)...)
			if tt.name == "dial timeout" {
				if _, cerr, ccode := runCLI("config", "check", "--dial-timeout", "0s"); ccode != 2 || !strings.Contains(cerr, tt.wantErr) {
					t.Errorf("config check: exit %d, %q; want exit 2 and %q", ccode, cerr, tt.wantErr)
				}
			}
			if code != 2 || out != "" || !strings.Contains(errOut, tt.wantErr) || strings.Count(errOut, "\n") != 1 {
				t.Fatalf("exit %d, stdout %q, stderr %q; want exit 2 and one line with %q", code, out, errOut, tt.wantErr)
			}
			if strings.Contains(errOut, "s3cret") || strings.Contains(errOut, " pw ") {
				t.Fatalf("stderr shows (part of) the password: %q", errOut)
			}
		})
	}
}

// lockedBuffer is a log that the test reads while serve writes it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

func TestServeKeepsRetryingAnUnreachableStore(t *testing.T) {
	log := &lockedBuffer{}
	logOutput = log
	t.Cleanup(func() { logOutput = os.Stderr })
	addr := silentListener(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	httpAddr := freePort(t)
	go func() {
		done <- serve(ctx, append(storeArgs("mysql", addr), "--http", httpAddr, "--grpc", "off", "--dial-timeout", "200ms"), &bytes.Buffer{})
	}()
	deadline := time.After(time.Minute) // a bound on the test, not a speed claim
	for strings.Count(log.String(), "store unreachable: not ready, retrying") < 2 {
		select {
		case err := <-done:
			t.Fatalf("serve returned %v while the store was unreachable; log:\n%s", err, log.String())
		case <-deadline:
			t.Fatalf("serve logged no second retry; log:\n%s", log.String())
		case <-time.After(50 * time.Millisecond):
		}
	}
	if got := log.String(); !strings.Contains(got, "mysql tcp "+addr+": no answer within 200ms") || strings.Contains(got, "s3cretpw") {
		t.Fatalf("log does not name the endpoint and the cause, or shows the password:\n%s", got)
	}
	// The port answers while the store does not: the process is up, it
	// is not ready, and no request waits on the store.
	for _, tc := range []struct {
		path   string
		status int
		want   string
	}{{"/healthz", 200, "(starting)"}, {"/readyz", 503, "not_ready"}, {"/v1/snowflake/next", 503, "not_ready"}} {
		resp, err := http.Get("http://" + httpAddr + tc.path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.status || !strings.Contains(string(body), tc.want) {
			t.Errorf("%s while starting: %d %q; want %d with %q", tc.path, resp.StatusCode, body, tc.status, tc.want)
		}
	}
	// A stop while starting is a stop, not a failure.
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("serve stopped while starting returned %v", err)
	}
}

// TestRefusedConnectionIsBadInput: a database that answers but refuses
// the connection — no such database, an unknown user or a wrong
// password — is bad input (exit 2) with one line saying what to change,
// not an outage reported as unreachable.
func TestRefusedConnectionIsBadInput(t *testing.T) {
	for _, kind := range []string{"postgres", "mysql"} {
		env := map[string]string{"postgres": "FIRN_TEST_POSTGRES", "mysql": "FIRN_TEST_MYSQL"}[kind]
		for _, tc := range []struct {
			name, want string
			edit       func(u *dsnParts)
		}{
			{"no such database", "create it, or name another database in the DSN", func(u *dsnParts) { u.db = "nosuchdb_" + suffix() }},
			{"unknown user", "check the user and password of the DSN", func(u *dsnParts) { u.user, u.password = "nobody_"+suffix(), "s3cretpw" }},
			{"no access to the database", "GRANT the user", func(u *dsnParts) { u.user, u.db = lockedOut(t, kind, u) }},
		} {
			t.Run(kind+"/"+tc.name, func(t *testing.T) {
				p := parseTestDSN(t, kind, testenv.Endpoint(t, env))
				tc.edit(&p)
				out, errOut, code := runBounded(t, "next", "--store", kind, "--dsn", p.String(kind), "--dial-timeout", "5s")
				if code != 2 || out != "" || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, tc.want) || strings.Contains(errOut, "unreachable") {
					t.Fatalf("exit %d, stdout %q, stderr %q; want exit 2 and one line with %q", code, out, errOut, tc.want)
				}
				if !strings.Contains(errOut, "firn next: "+kind+" ") || strings.Contains(errOut, "s3cretpw") {
					t.Fatalf("stderr %q: want the store named, and no password", errOut)
				}
			})
		}
	}
}

// dsnParts are the parts of a test DSN the refusal test changes.
type dsnParts struct {
	user, password, db string
	pg                 *url.URL
	my                 *mysql.Config
}

func parseTestDSN(t *testing.T, kind, dsn string) dsnParts {
	t.Helper()
	if kind == "mysql" {
		c, err := mysql.ParseDSN(dsn)
		if err != nil {
			t.Fatal(err)
		}
		return dsnParts{user: c.User, password: c.Passwd, db: c.DBName, my: c}
	}
	u, err := url.Parse(dsn)
	if err != nil || u.Scheme == "" {
		t.Fatalf("FIRN_TEST_POSTGRES is not a URL DSN: %v", err)
	}
	pw, _ := u.User.Password()
	return dsnParts{user: u.User.Username(), password: pw, db: strings.TrimPrefix(u.Path, "/"), pg: u}
}

func (p dsnParts) String(kind string) string {
	if kind == "mysql" {
		c := *p.my
		c.User, c.Passwd, c.DBName = p.user, p.password, p.db
		return c.FormatDSN()
	}
	u := *p.pg
	u.User, u.Path = url.UserPassword(p.user, p.password), "/"+p.db
	if p.password == "" {
		u.User = url.User(p.user)
	}
	return u.String()
}

// lockedOut makes a user that may log in but not into the database it
// is given: on PostgreSQL a database of its own whose CONNECT is revoked
// from PUBLIC, on MySQL a user with no privilege at all. Both are
// dropped at the end of the test.
func lockedOut(t *testing.T, kind string, admin *dsnParts) (user, db string) {
	t.Helper()
	user, db = "lockedout_"+suffix(), "lockedout_"+suffix()
	conn, err := sql.Open(map[string]string{"postgres": "pgx", "mysql": "mysql"}[kind], admin.String(kind))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	var setup, cleanup []string
	if kind == "postgres" {
		setup = []string{"CREATE DATABASE " + db, "REVOKE CONNECT ON DATABASE " + db + " FROM PUBLIC", "CREATE ROLE " + user + " LOGIN"}
		cleanup = []string{"DROP DATABASE IF EXISTS " + db, "DROP ROLE IF EXISTS " + user}
	} else {
		db = admin.db
		setup = []string{"CREATE USER '" + user + "'@'%'"}
		cleanup = []string{"DROP USER IF EXISTS '" + user + "'@'%'"}
	}
	t.Cleanup(func() {
		for _, q := range cleanup {
			if _, err := conn.Exec(q); err != nil {
				t.Error(err)
			}
		}
	})
	for _, q := range setup {
		if _, err := conn.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	return user, db
}
