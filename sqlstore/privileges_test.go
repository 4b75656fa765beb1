package sqlstore_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/firn-id/firn/sqlstore"
)

func ExampleGrants() {
	serve, admin, _ := sqlstore.Grants(sqlstore.MySQL, sqlstore.ModeLeaf, sqlstore.Tables{}, "'leaf'@'%'")
	fmt.Println(strings.Join(serve, "\n"))
	fmt.Println(strings.Join(admin, "\n"))
	serve, _, _ = sqlstore.Grants(sqlstore.Postgres, sqlstore.ModeTinyid, sqlstore.Tables{Tinyid: "ids"}, "tinyid")
	fmt.Println(strings.Join(serve, "\n"))
	// Output:
	// GRANT SELECT, UPDATE ON leaf_alloc TO 'leaf'@'%';
	// GRANT INSERT ON leaf_alloc TO 'leaf'@'%';
	// GRANT SELECT, UPDATE ON ids TO tinyid;
	// GRANT SELECT ON tiny_id_token TO tinyid;
}

// TestModesTouchTheirOwnTables: each mode's statements name its own
// tables only, and none needs CREATE to serve.
func TestModesTouchTheirOwnTables(t *testing.T) {
	tables := sqlstore.Tables{Nodes: "n", Leaf: "l", Tinyid: "ti", TinyidTokens: "tt", Set: "s"}
	tests := []struct {
		mode sqlstore.Mode
		want []string
	}{
		{sqlstore.ModeNodes, []string{"n", "n_namespaces"}},
		{sqlstore.ModeLeaf, []string{"l"}},
		{sqlstore.ModeTinyid, []string{"ti", "tt"}},
		{sqlstore.ModeSet, []string{"s"}},
	}
	for _, tt := range tests {
		t.Run(string(tt.mode), func(t *testing.T) {
			uses, err := sqlstore.Statements(tt.mode, tables)
			if err != nil {
				t.Fatal(err)
			}
			for _, u := range uses {
				if !slices.Contains(tt.want, u.Table) || !strings.Contains(u.Statement, " "+u.Table) {
					t.Errorf("%s %q on table %q; want one of %v, named in the statement", u.Verb, u.Statement, u.Table, tt.want)
				}
				if u.Serve && slices.Contains(u.Privileges, "CREATE") {
					t.Errorf("serving runs %q, which needs CREATE", u.Statement)
				}
			}
		})
	}
	if _, err := sqlstore.Statements("zookeeper", tables); err == nil {
		t.Error("an unknown mode has statements")
	}
	if _, err := sqlstore.Statements(sqlstore.ModeLeaf, sqlstore.Tables{Leaf: "x; DROP TABLE y"}); err == nil {
		t.Error("a table name that needs quoting is accepted")
	}
}

// TestModeSchemaIsEachModesOwn: ModeSchema is the DDL of the mode's own
// table, with the name given, for both dialects.
func TestModeSchemaIsEachModesOwn(t *testing.T) {
	tables := sqlstore.Tables{Nodes: "n_t", Leaf: "l_t", Tinyid: "t_t", Set: "s_t"}
	for _, d := range []sqlstore.Dialect{sqlstore.Postgres, sqlstore.MySQL} {
		for m, want := range map[sqlstore.Mode]func(sqlstore.Dialect, string) (string, error){
			sqlstore.ModeNodes: sqlstore.Schema, sqlstore.ModeLeaf: sqlstore.SegmentSchema,
			sqlstore.ModeTinyid: sqlstore.TinyidSchema, sqlstore.ModeSet: sqlstore.SetSchema,
		} {
			name := map[sqlstore.Mode]string{sqlstore.ModeNodes: "n_t", sqlstore.ModeLeaf: "l_t", sqlstore.ModeTinyid: "t_t", sqlstore.ModeSet: "s_t"}[m]
			got, err := sqlstore.ModeSchema(d, m, tables)
			wantDDL, wantErr := want(d, name)
			if err != nil || wantErr != nil || got != wantDDL || !strings.Contains(got, name) {
				t.Errorf("%v %s: ModeSchema %v; want the DDL of %s (%v)", d, m, err, name, wantErr)
			}
		}
		if _, err := sqlstore.ModeSchema(d, sqlstore.ModeLeaf, sqlstore.Tables{Leaf: "bad name;"}); err == nil {
			t.Errorf("%v: ModeSchema of a bad table name: no error", d)
		}
	}
}

// TestCheckPrivilegesOnTheNodeTables: on node tables firn made, an account
// that may do everything passes every probe: an INSERT probe names the
// columns that have no default, which MariaDB requires even of an INSERT
// of no row (otherwise the tables read as unreadable once they exist).
func TestCheckPrivilegesOnTheNodeTables(t *testing.T) {
	forEach(t, func(t *testing.T, b backend, dsn string) {
		db := openDB(t, b, dsn)
		table := tableOf(t, newStore(t, b, db), b, db)
		checks, err := sqlstore.CheckPrivileges(context.Background(), db, b.dialect, sqlstore.ModeNodes, sqlstore.Tables{Nodes: table})
		if err != nil || len(checks) == 0 {
			t.Fatalf("CheckPrivileges: %d checks, %v", len(checks), err)
		}
		for _, c := range checks {
			if c.Err != nil {
				t.Errorf("%s on %s: %v", c.Use.Verb, c.Use.Table, c.Err)
			}
		}
	})
}
