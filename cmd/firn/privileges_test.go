package main

import (
	"database/sql"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/firn-id/firn/internal/legacytest"
	"github.com/firn-id/firn/internal/testenv"
)

// account is a database of its own (MySQL) or schema of its own
// (PostgreSQL) and a user created for one test, holding no privilege
// until the test grants one; both are dropped when the test ends.
type account struct {
	kind     string  // postgres or mysql
	admin    *sql.DB // the server's administrator, in the database or schema
	adminDSN string  // the same, as a DSN
	dsn      string  // the user's DSN, in the database or schema
	user     string  // the user as GRANT names it
	where    string  // the database (`db`) or schema, as GRANT qualifies a table
}

// newAccount creates the database or schema and the user.
func newAccount(t *testing.T, kind string) *account {
	t.Helper()
	root := testenv.Endpoint(t, map[string]string{"postgres": "FIRN_TEST_POSTGRES", "mysql": "FIRN_TEST_MYSQL"}[kind])
	name, user := "firn_priv_"+suffix(), "firn_u_"+suffix()
	a := &account{kind: kind}
	if kind == "mysql" {
		cfg, err := mysql.ParseDSN(root)
		if err != nil {
			t.Fatal(err)
		}
		execAs(t, kind, root, "CREATE DATABASE "+name, "CREATE USER '"+user+"'@'%'")
		t.Cleanup(func() { execAs(t, kind, root, "DROP DATABASE IF EXISTS "+name, "DROP USER IF EXISTS '"+user+"'@'%'") })
		cfg.DBName = name
		a.adminDSN = cfg.FormatDSN()
		cfg.User, cfg.Passwd = user, ""
		a.dsn, a.user, a.where = cfg.FormatDSN(), "'"+user+"'@'%'", "`"+name+"`"
	} else {
		u, err := url.Parse(root)
		if err != nil {
			t.Fatal(err)
		}
		execAs(t, kind, root, "CREATE SCHEMA "+name, "CREATE ROLE "+user+" LOGIN", "GRANT USAGE ON SCHEMA "+name+" TO "+user)
		t.Cleanup(func() {
			execAs(t, kind, root, "DROP SCHEMA IF EXISTS "+name+" CASCADE", "DROP OWNED BY "+user, "DROP ROLE IF EXISTS "+user)
		})
		q := u.Query()
		q.Set("search_path", name)
		u.RawQuery = q.Encode()
		a.adminDSN = u.String()
		u.User = url.User(user)
		a.dsn, a.user, a.where = u.String(), user, name
	}
	db, err := sql.Open(map[string]string{"postgres": "pgx", "mysql": "mysql"}[kind], a.adminDSN)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	a.admin = db
	return a
}

// execAs runs statements on dsn, failing the test on an error.
func execAs(t *testing.T, kind, dsn string, stmts ...string) {
	t.Helper()
	db, err := sql.Open(map[string]string{"postgres": "pgx", "mysql": "mysql"}[kind], dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

// run runs statements as the administrator.
func (a *account) run(t *testing.T, stmts ...string) {
	t.Helper()
	for _, s := range stmts {
		if _, err := a.admin.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

// tables lists the tables of the database or schema.
func (a *account) tables(t *testing.T) []string {
	t.Helper()
	q := "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() ORDER BY table_name"
	if a.kind == "mysql" {
		q = "SELECT table_name FROM information_schema.tables WHERE table_schema = DATABASE() ORDER BY table_name"
	}
	rows, err := a.admin.Query(q)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		out = append(out, n)
	}
	return out
}

// schemaStatements runs firn schema and returns its statements: the DDL
// and, with grants, the GRANTs of firn serve (not those firn tag adds).
func schemaStatements(t *testing.T, kind, mode, grantee string, ddl bool) []string {
	t.Helper()
	out, errOut, code := runCLI("schema", "--dialect", kind, "--mode", mode, "--grantee", grantee)
	if code != 0 {
		t.Fatalf("firn schema: exit %d: %s", code, errOut)
	}
	serveGrants, _, _ := strings.Cut(out, "-- and what firn tag create adds")
	var stmts []string
	for _, s := range strings.Split(serveGrants, ";\n") {
		var lines []string
		for _, l := range strings.Split(s, "\n") {
			if !strings.HasPrefix(l, "--") {
				lines = append(lines, l)
			}
		}
		s = strings.TrimSpace(strings.Join(lines, "\n"))
		isGrant := strings.HasPrefix(s, "GRANT ")
		if s != "" && isGrant != ddl {
			stmts = append(stmts, s)
		}
	}
	if len(stmts) == 0 {
		t.Fatalf("firn schema --mode %s printed no statements:\n%s", mode, out)
	}
	return stmts
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestLeastPrivilegeServesLeafAndTinyid serves Leaf's and Tinyid's
// tables, created with the originals' DDL and sample rows, on an account
// holding exactly the GRANTs firn schema prints for the mode: segments
// only (--snowflake=false) from Leaf's table, and snowflake with an
// explicit node and a local HWM beside segments from Tinyid's. The first
// IDs are the originals' own, and no other table appears.
func TestLeastPrivilegeServesLeafAndTinyid(t *testing.T) {
	for _, kind := range []string{"postgres", "mysql"} {
		t.Run(kind+"/leaf", func(t *testing.T) {
			a := newAccount(t, kind)
			a.run(t, legacytest.LeafTable(kind, "leaf_alloc")...)
			a.run(t, schemaStatements(t, kind, "leaf", a.user, false)...)
			p := startServe(t, "--snowflake=false", "--store", kind, "--dsn", a.dsn, "--segments", "leaf")
			for _, want := range []string{"1", "2"} {
				if code, body := get(t, p.base+"/api/segment/get/"+legacytest.LeafSampleTag); code != 200 || body != want {
					t.Fatalf("Leaf's route: %d %q; want 200 %q", code, body, want)
				}
			}
			if got := a.tables(t); strings.Join(got, ",") != "leaf_alloc" {
				t.Errorf("tables after serving: %v; want leaf_alloc alone", got)
			}
		})
		t.Run(kind+"/tinyid", func(t *testing.T) {
			a := newAccount(t, kind)
			a.run(t, legacytest.TinyidInfoTable(kind, "tiny_id_info")...)
			a.run(t, legacytest.TinyidTokenTable(kind, "tiny_id_token")...)
			a.run(t, schemaStatements(t, kind, "tinyid", a.user, false)...)
			p := startServe(t, "--node", "3", "--data-dir", t.TempDir(), "--segment-store", kind, "--segment-dsn", a.dsn, "--segments", "tinyid")
			for _, c := range []struct{ biz, want string }{{"test", "2"}, {"test_odd", "3"}, {"test", "3"}, {"test_odd", "5"}} {
				code, body := get(t, p.base+"/tinyid/id/nextIdSimple?bizType="+c.biz+"&token="+legacytest.TinyidSampleToken)
				if code != 200 || body != c.want {
					t.Fatalf("nextIdSimple %s: %d %q; want 200 %q", c.biz, code, body, c.want)
				}
			}
			if code, body := get(t, p.base+"/v1/snowflake/next"); code != 200 {
				t.Fatalf("snowflake on node 3: %d %s", code, body)
			}
			if got := a.tables(t); strings.Join(got, ",") != "tiny_id_info,tiny_id_token" {
				t.Errorf("tables after serving: %v; want Tinyid's two alone", got)
			}
		})
		t.Run(kind+"/nodes", func(t *testing.T) {
			a := newAccount(t, kind)
			a.run(t, schemaStatements(t, kind, "nodes", a.user, true)...)
			a.run(t, schemaStatements(t, kind, "nodes", a.user, false)...)
			if out, errOut, code := runCLI("next", "-n", "3", "--store", kind, "--dsn", a.dsn); code != 0 || len(strings.Fields(out)) != 3 {
				t.Fatalf("firn next on the node table: exit %d, %q, %s", code, out, errOut)
			}
		})
	}
}

// TestMissingPrivilegeIsOneLine: a statement the account may not run is
// reported in one line naming it and the GRANT that allows it, with the
// account's own name and database.
func TestMissingPrivilegeIsOneLine(t *testing.T) {
	for _, kind := range []string{"postgres", "mysql"} {
		t.Run(kind, func(t *testing.T) {
			a := newAccount(t, kind)
			a.run(t, legacytest.LeafTable(kind, "leaf_alloc")...)
			a.run(t, "GRANT SELECT ON leaf_alloc TO "+a.user) // Leaf needs UPDATE too
			a.run(t, legacytest.TinyidInfoTable(kind, "tiny_id_info")...)
			a.run(t, legacytest.TinyidTokenTable(kind, "tiny_id_token")...)
			a.run(t, "GRANT SELECT, UPDATE ON tiny_id_info TO "+a.user) // and none on tiny_id_token
			tests := []struct {
				name      string
				args      []string
				statement string
				grant     string
			}{
				{"update of Leaf's table", []string{"tag", "next", legacytest.LeafSampleTag, "--store", kind, "--dsn", a.dsn},
					"UPDATE leaf_alloc SET max_id = max_id + ?", "GRANT SELECT, UPDATE ON " + a.where + ".leaf_alloc TO " + a.user + ";"},
				{"node table", []string{"next", "--store", kind, "--dsn", a.dsn}, "firn_nodes_namespaces",
					map[string]string{
						"mysql":    "GRANT SELECT, INSERT, UPDATE ON " + a.where + ".firn_nodes_namespaces TO " + a.user + ";",
						"postgres": "GRANT CREATE ON SCHEMA " + a.where + " TO " + a.user + ";", // PostgreSQL: the table is missing, and may not be created
					}[kind]},
				{"Tinyid's tokens at the start of firn serve", []string{"serve", "--http", freePort(t), "--grpc", "off", "--snowflake=false",
					"--store", kind, "--dsn", a.dsn, "--segments", "tinyid"},
					"SELECT token, biz_type FROM tiny_id_token", "GRANT SELECT ON " + a.where + ".tiny_id_token TO " + a.user + ";"},
			}
			for _, tt := range tests {
				_, errOut, code := runCLI(tt.args...)
				msg := strings.TrimSuffix(errOut, "\n")
				if code == 0 || strings.Contains(msg, "\n") || !strings.Contains(msg, tt.statement) || !strings.Contains(msg, tt.grant) {
					t.Errorf("%s: exit %d, stderr %q; want one line naming %q and %q", tt.name, code, errOut, tt.statement, tt.grant)
				}
			}
			if got := a.tables(t); strings.Join(got, ",") != "leaf_alloc,tiny_id_info,tiny_id_token" {
				t.Errorf("tables: %v; want Leaf's and Tinyid's alone", got)
			}
			if kind != "postgres" { // MySQL's account may create tables
				return
			}
			// The other way PostgreSQL's refusal offers, followed
			// literally: the firn schema command it prints, run by the
			// owner, and the account's firn next passes.
			_, errOut, _ := runCLI("next", "--store", kind, "--dsn", a.dsn)
			m := regexp.MustCompile(`firn schema --dialect (\S+) --mode (\S+) --grantee (\S+)`).FindStringSubmatch(errOut)
			if m == nil {
				t.Fatalf("the refusal names no firn schema command: %s", errOut)
			}
			a.run(t, schemaStatements(t, m[1], m[2], m[3], true)...)
			a.run(t, schemaStatements(t, m[1], m[2], m[3], false)...)
			if out, errOut, code := runCLI("next", "-n", "2", "--store", kind, "--dsn", a.dsn); code != 0 || len(strings.Fields(out)) != 2 {
				t.Fatalf("firn next after the firn schema the refusal printed: exit %d, %q, %s", code, out, errOut)
			}
		})
	}
}
