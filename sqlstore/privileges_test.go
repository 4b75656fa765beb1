package sqlstore_test

import (
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
