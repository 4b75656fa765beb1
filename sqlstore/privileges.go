package sqlstore

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"time"
)

// A Mode is one way firn uses a database. Each mode touches its own
// tables only: a process serving segments from Leaf's table reads and
// writes leaf_alloc and nothing else.
type Mode string

const (
	// ModeNodes keeps snowflake node IDs and their HWMs in the node table
	// and its namespace table (--store postgres|mysql with snowflake on).
	ModeNodes Mode = "nodes"
	// ModeLeaf serves segments from Meituan Leaf's leaf_alloc
	// (--segments leaf).
	ModeLeaf Mode = "leaf"
	// ModeTinyid serves segments from Didi Tinyid's tiny_id_info and reads
	// its tokens from tiny_id_token (--segments tinyid).
	ModeTinyid Mode = "tinyid"
	// ModeSet serves segments from firn's own firn_segments (--segments set).
	ModeSet Mode = "set"
	// ModeLedger keeps the ledger of site values in a node table's
	// namespace table (--ledger-store postgres|mysql): firn site writes
	// it, firn serve of a site reads it.
	ModeLedger Mode = "ledger"
)

// Modes lists the modes in the order firn schema prints them.
var Modes = []Mode{ModeNodes, ModeLeaf, ModeTinyid, ModeSet, ModeLedger}

// ParseMode parses the name of a mode.
func ParseMode(s string) (Mode, error) {
	if m := Mode(s); slices.Contains(Modes, m) {
		return m, nil
	}
	return "", fmt.Errorf("sqlstore: unknown mode %q (want nodes, leaf, tinyid, set or ledger)", s)
}

// Tables names the tables of the modes. An empty name is the default:
// firn_nodes, leaf_alloc, tiny_id_info, tiny_id_token, firn_segments.
type Tables struct {
	Nodes, Leaf, Tinyid, TinyidTokens, Set string
}

// withDefaults fills the empty names and checks every name.
func (t Tables) withDefaults() (Tables, error) {
	for _, f := range []struct {
		name *string
		def  string
	}{{&t.Nodes, DefaultNodeTable}, {&t.Leaf, "leaf_alloc"}, {&t.Tinyid, "tiny_id_info"}, {&t.TinyidTokens, "tiny_id_token"}, {&t.Set, "firn_segments"}} {
		if *f.name == "" {
			*f.name = f.def
		}
		if err := checkTable(*f.name); err != nil {
			return t, err
		}
	}
	return t, nil
}

// A Use is one statement a mode runs on one table, and the privileges
// the database checks for it.
type Use struct {
	// Table is the table the statement reads or writes.
	Table string
	// Verb is the kind of statement: SELECT, SELECT FOR UPDATE, INSERT,
	// UPDATE, CREATE TABLE.
	Verb string
	// Statement is the statement in short, with the table's name: its
	// columns and conditions, with … for a dialect's variants (on MySQL
	// a tag is also matched byte for byte, CAST(… AS BINARY)).
	Statement string
	// Privileges are the table privileges it needs (CREATE TABLE: CREATE
	// on the database or schema).
	Privileges []string
	// By says which command runs it.
	By string
	// Serve is true for the statements of firn serve; false for those of
	// the administrative commands (firn tag, firn admin) and for CREATE
	// TABLE, which runs only while the table does not exist.
	Serve bool
	// column is a column of the table, for a probe that changes nothing;
	// insert, when set, the columns an INSERT probe names.
	column, insert string
}

// use is a row of the table below, with {t} for the table's name.
type use struct {
	table      func(Tables) string
	verb, stmt string
	privs      []string
	by         string
	serve      bool
}

var (
	sel    = []string{"SELECT"}
	selUpd = []string{"SELECT", "UPDATE"}
	ins    = []string{"INSERT"}
	create = []string{"CREATE"}
)

func nodesTable(t Tables) string      { return t.Nodes }
func namespacesTable(t Tables) string { return t.Nodes + "_namespaces" }
func leafTable(t Tables) string       { return t.Leaf }
func tinyidTable(t Tables) string     { return t.Tinyid }
func tokenTable(t Tables) string      { return t.TinyidTokens }
func setTable(t Tables) string        { return t.Set }

// segmentUses are the statements of a segment table of Tinyid's shape
// (Tinyid's own, or firn's).
func segmentUses(table func(Tables) string, col string) []use {
	return []use{
		{table, "SELECT", "SELECT max_id, step, delta, remainder, version, … FROM {t} WHERE " + col + " = ?", sel, "firn serve", true},
		{table, "UPDATE", "UPDATE {t} SET max_id = ?, update_time = now(), version = version + 1 WHERE " + col + " = ? AND max_id = ? AND version = ?", selUpd, "firn serve", true},
		{table, "UPDATE", "UPDATE {t} SET delta = ?, remainder = ?, max_id = ?, … WHERE " + col + " = ? AND delta = ? AND remainder = ? AND max_id BETWEEN ? AND ? (a tag's row moved into a site's class)", selUpd, "firn site claim", false},
		{table, "INSERT", "INSERT INTO {t} (" + col + ", begin_id, max_id, step, …)", ins, "firn tag create", false},
		{table, "CREATE TABLE", "CREATE TABLE IF NOT EXISTS {t}", create, "the first use, while the table does not exist", false},
	}
}

// ServingNeeds names what serves from mode m's tables, and so needs the
// GRANTs of its serving statements, for firn schema: "firn serve needs".
func ServingNeeds(m Mode) string {
	switch m {
	case ModeNodes:
		return "firn serve, and a program embedding package ids, need"
	case ModeLedger:
		return "firn serve of a site (reading its claim) needs"
	}
	return "firn serve needs"
}

// AdminAdds names what runs mode m's administrative statements, for firn
// schema: "firn tag create adds".
func AdminAdds(m Mode) string {
	switch m {
	case ModeNodes:
		return "firn site adds on a site's registry"
	case ModeLedger:
		return "firn site adds (the provisioning account)"
	}
	return "firn tag create adds"
}

// byNodes are the programs that run mode nodes' statements.
const byNodes = "firn serve, firn next, a program embedding package ids"

// uses is the one table of what each mode runs: firn schema prints it,
// and a statement the database refuses is reported with the GRANT of its
// row.
var uses = map[Mode][]use{
	ModeNodes: {
		{namespacesTable, "INSERT", "INSERT INTO {t} (namespace, fingerprint, layout) … (ignoring a duplicate)", ins, byNodes, true},
		{namespacesTable, "SELECT FOR UPDATE", "SELECT fingerprint, layout FROM {t} WHERE namespace = ? FOR UPDATE", selUpd, byNodes, true},
		{nodesTable, "INSERT", "INSERT INTO {t} (namespace, node) … (ignoring a duplicate)", ins, byNodes, true},
		{nodesTable, "SELECT FOR UPDATE", "SELECT node, owner, lease_expires, hwm FROM {t} WHERE namespace = ? FOR UPDATE", selUpd, byNodes, true},
		{nodesTable, "UPDATE", "UPDATE {t} SET owner = ?, lease_expires = …, hwm = … WHERE namespace = ? AND node = ? AND owner = ?", selUpd, byNodes, true},
		{namespacesTable, "UPDATE", "UPDATE {t} SET fingerprint = ?, layout = ? WHERE namespace = ? (a site's record)", selUpd, "firn site", false},
		{namespacesTable, "CREATE TABLE", "CREATE TABLE IF NOT EXISTS {t}", create, "the first use, while the table does not exist", false},
		{nodesTable, "CREATE TABLE", "CREATE TABLE IF NOT EXISTS {t}", create, "the first use, while the table does not exist", false},
	},
	ModeLedger: {
		{namespacesTable, "SELECT", "SELECT fingerprint, layout FROM {t} WHERE namespace = ?", sel, "firn serve of a site", true},
		{namespacesTable, "INSERT", "INSERT INTO {t} (namespace, fingerprint, layout) … (ignoring a duplicate)", ins, "firn site", false},
		{namespacesTable, "SELECT FOR UPDATE", "SELECT fingerprint, layout FROM {t} WHERE namespace = ? FOR UPDATE", selUpd, "firn site", false},
		{namespacesTable, "UPDATE", "UPDATE {t} SET fingerprint = ?, layout = ? WHERE namespace = ?", selUpd, "firn site", false},
		{nodesTable, "UPDATE", "UPDATE {t} SET owner = NULL, lease_expires = NULL WHERE namespace = ?", selUpd, "firn site", false},
		{namespacesTable, "CREATE TABLE", "CREATE TABLE IF NOT EXISTS {t}", create, "the first use, while the table does not exist", false},
		{nodesTable, "CREATE TABLE", "CREATE TABLE IF NOT EXISTS {t}", create, "the first use, while the table does not exist", false},
	},
	ModeLeaf: {
		{leafTable, "SELECT", "SELECT biz_tag, max_id, step, description, update_time FROM {t} WHERE biz_tag = ?", sel, "firn serve", true},
		{leafTable, "UPDATE", "UPDATE {t} SET max_id = max_id + ?, update_time = … WHERE biz_tag = ? AND max_id BETWEEN 0 AND ?", selUpd, "firn serve", true},
		{leafTable, "INSERT", "INSERT INTO {t} (biz_tag, max_id, step, description, update_time)", ins, "firn tag create", false},
		{leafTable, "CREATE TABLE", "CREATE TABLE IF NOT EXISTS {t}", create, "the first use, while the table does not exist", false},
	},
	ModeTinyid: append(segmentUses(tinyidTable, "biz_type"),
		use{tokenTable, "SELECT", "SELECT token, biz_type FROM {t}", sel, "firn serve with segments.check_tokens (the default)", true}),
	ModeSet: segmentUses(setTable, "biz_type"),
}

// probeColumns name a column of each mode's tables (of the namespace
// table: true), for the probes of CheckPrivileges.
var probeColumns = map[Mode]map[bool]string{
	ModeNodes: {false: "hwm", true: "layout"}, ModeLedger: {false: "hwm", true: "layout"}, ModeLeaf: {false: "max_id"},
	ModeTinyid: {false: "max_id"}, ModeSet: {false: "max_id"},
}

// insertColumns are the columns of the tables firn serve inserts into
// (ModeNodes': the node table, and the namespace table: true) that have
// no default, for the INSERT probe: MariaDB refuses an INSERT that leaves
// one out even when it inserts no row (error 1364), which a probe of one
// column would report as an unreadable table.
var insertColumns = map[bool]string{false: "namespace, node", true: "namespace, fingerprint, layout"}

// ModeSchema returns the DDL of the tables of mode m, named by t: the
// node table's (Schema), Leaf's (SegmentSchema), Tinyid's (TinyidSchema)
// or a set's (SetSchema).
func ModeSchema(d Dialect, m Mode, t Tables) (string, error) {
	switch m {
	case ModeNodes, ModeLedger:
		return Schema(d, t.Nodes)
	case ModeLeaf:
		return SegmentSchema(d, t.Leaf)
	case ModeTinyid:
		return TinyidSchema(d, t.Tinyid)
	}
	return SetSchema(d, t.Set)
}

// Statements returns the statements mode m runs on tables t, in order.
func Statements(m Mode, t Tables) ([]Use, error) {
	t, err := t.withDefaults()
	if err != nil {
		return nil, err
	}
	rows, ok := uses[m]
	if !ok {
		return nil, fmt.Errorf("sqlstore: unknown mode %q", m)
	}
	out := make([]Use, len(rows))
	for i, r := range rows {
		name := r.table(t)
		out[i] = Use{Table: name, Verb: r.verb, Statement: strings.ReplaceAll(r.stmt, "{t}", name),
			Privileges: r.privs, By: r.by, Serve: r.serve, column: probeColumns[m][name == namespacesTable(t)]}
		if (m == ModeNodes || m == ModeLedger) && r.verb == "INSERT" {
			out[i].insert = insertColumns[name == namespacesTable(t)]
		}
	}
	return out, nil
}

// Grants returns the GRANT statements mode m needs on tables t for
// grantee (as the database spells it: 'firn'@'%' in MySQL, firn in
// PostgreSQL): those of firn serve, then those the administrative
// commands add. CREATE is never among them: the tables are created by
// their owner (firn schema prints the DDL), or by firn on first use when
// its user may.
func Grants(d Dialect, m Mode, t Tables, grantee string) (serve, admin []string, err error) {
	us, err := Statements(m, t)
	if err != nil {
		return nil, nil, err
	}
	if d != Postgres && d != MySQL {
		return nil, nil, fmt.Errorf("sqlstore: unknown dialect %d", d)
	}
	serveBy, adminBy := map[string][]string{}, map[string][]string{}
	var order []string
	for _, u := range us {
		if u.Verb == "CREATE TABLE" {
			continue
		}
		if !slices.Contains(order, u.Table) {
			order = append(order, u.Table)
		}
		by := adminBy
		if u.Serve {
			by = serveBy
		}
		for _, p := range u.Privileges {
			if !slices.Contains(by[u.Table], p) && !slices.Contains(serveBy[u.Table], p) {
				by[u.Table] = append(by[u.Table], p)
			}
		}
	}
	for _, table := range order {
		if ps := serveBy[table]; len(ps) > 0 {
			serve = append(serve, grant(ps, table, grantee))
		}
		if ps := adminBy[table]; len(ps) > 0 {
			admin = append(admin, grant(ps, table, grantee))
			if d == Postgres && (m == ModeTinyid || m == ModeSet) {
				// The id column is a BIGSERIAL: an INSERT draws from its sequence.
				admin = append(admin, "GRANT USAGE ON SEQUENCE "+table+"_id_seq TO "+grantee+";")
			}
		}
	}
	return serve, admin, nil
}

// grant is one GRANT statement, privileges in a fixed order.
func grant(privs []string, table, grantee string) string {
	ordered := slices.Clone(privs)
	rank := map[string]int{"SELECT": 0, "INSERT": 1, "UPDATE": 2}
	slices.SortFunc(ordered, func(a, b string) int { return rank[a] - rank[b] })
	return "GRANT " + strings.Join(ordered, ", ") + " ON " + table + " TO " + grantee + ";"
}

// schemaCommand is the firn schema command that prints the DDL and the
// grants of mode m's tables t for grantee.
func schemaCommand(d Dialect, m Mode, t Tables, grantee string) string {
	cmd := "firn schema --dialect " + d.String() + " --mode " + string(m) + " --grantee " + grantee
	def, _ := Tables{}.WithDefaults()
	if t.Nodes != "" && t.Nodes != def.Nodes {
		cmd += " --table " + t.Nodes
	}
	return cmd
}

// refusal turns err into a *PrivilegeError when the database refused a
// privilege (Classify's Denied) for the statement of mode m with verb on
// table, and returns it unchanged otherwise.
func refusal(ctx context.Context, db *sql.DB, d Dialect, m Mode, t Tables, table, verb string, err error) error {
	if Classify(err) != Denied {
		return err
	}
	us, _ := Statements(m, t)
	i := slices.IndexFunc(us, func(u Use) bool { return u.Table == table && u.Verb == verb })
	stmt := ""
	if i < 0 { // the probe of a table (SELECT 1 FROM t WHERE 1 = 0): allow what serving needs
		i = slices.IndexFunc(us, func(u Use) bool { return u.Table == table && u.Serve })
		stmt = verb + " on " + table
	}
	if i < 0 {
		return err
	}
	u := us[i]
	if stmt == "" {
		stmt = u.Statement
	}
	grantee, where := whoami(ctx, db, d)
	pe := &PrivilegeError{Statement: stmt, Err: err}
	switch {
	case u.Verb == "CREATE TABLE" && d == MySQL:
		pe.Grant = "GRANT CREATE ON " + where + ".* TO " + grantee + "; or create the tables as their owner, in that database: " + schemaCommand(d, m, t, grantee)
	case u.Verb == "CREATE TABLE":
		pe.Grant = "GRANT CREATE ON SCHEMA " + where + " TO " + grantee + "; or create the tables as their owner, in that schema: " + schemaCommand(d, m, t, grantee)
	default:
		privs := u.Privileges
		if u.Serve {
			privs = nil // the whole of what serving needs on the table, in one GRANT
			for _, o := range us {
				if o.Serve && o.Table == table {
					for _, p := range o.Privileges {
						if !slices.Contains(privs, p) {
							privs = append(privs, p)
						}
					}
				}
			}
		}
		pe.Grant = grant(privs, where+"."+table, grantee)
	}
	return pe
}

// whoami names the user the database knows the connection as, and its
// current database (MySQL) or schema (PostgreSQL), for a GRANT that can be
// run as it is. It asks within a second of its own, and answers
// placeholders when it cannot.
func whoami(ctx context.Context, db *sql.DB, d Dialect) (grantee, where string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
	defer cancel()
	q := "SELECT quote_ident(current_user), quote_ident(current_schema())"
	if d == MySQL {
		q = "SELECT CURRENT_USER(), COALESCE(DATABASE(), '')"
	}
	var user, schema string
	if err := db.QueryRowContext(ctx, q).Scan(&user, &schema); err != nil {
		return "<user>", "<database>"
	}
	if d == MySQL {
		at := strings.LastIndex(user, "@") // a user name may hold an @, a host not
		name, host := user, "%"
		if at >= 0 {
			name, host = user[:at], user[at+1:]
		}
		return "'" + name + "'@'" + host + "'", "`" + schema + "`"
	}
	return user, schema
}

// PrivilegeCheck is the outcome of one statement of a mode, tried on the
// database without changing a row (see CheckPrivileges).
type PrivilegeCheck struct {
	Use Use
	// Err is nil when the database allows the statement; a
	// *PrivilegeError when it refused a privilege; another error when the
	// table cannot be read at all (most often: it does not exist).
	Err error
}

// CheckPrivileges tries each statement firn serve runs in mode m on
// tables t, in a form that changes no row: SELECT … WHERE 1 = 0, UPDATE …
// SET c = c WHERE 1 = 0, INSERT … SELECT … WHERE 1 = 0, SELECT … WHERE
// 1 = 0 FOR UPDATE. The database checks the same privileges as for the
// real statement.
func CheckPrivileges(ctx context.Context, db *sql.DB, d Dialect, m Mode, t Tables) ([]PrivilegeCheck, error) {
	uses, err := Statements(m, t)
	if err != nil {
		return nil, err
	}
	var out []PrivilegeCheck
	for _, u := range uses {
		if !u.Serve {
			continue
		}
		var probe string
		switch u.Verb {
		case "SELECT":
			probe = "SELECT 1 FROM " + u.Table + " WHERE 1 = 0"
		case "SELECT FOR UPDATE":
			probe = "SELECT 1 FROM " + u.Table + " WHERE 1 = 0 FOR UPDATE"
		case "UPDATE":
			probe = "UPDATE " + u.Table + " SET " + u.column + " = " + u.column + " WHERE 1 = 0"
		case "INSERT":
			cols := cmp.Or(u.insert, u.column)
			probe = "INSERT INTO " + u.Table + " (" + cols + ") SELECT " + cols + " FROM " + u.Table + " WHERE 1 = 0"
		}
		_, err := db.ExecContext(ctx, probe)
		out = append(out, PrivilegeCheck{Use: u, Err: refusal(ctx, db, d, m, t, u.Table, u.Verb, err)})
	}
	return out, nil
}

// Refusal returns err as a *PrivilegeError naming statement u and the
// GRANT of its privileges when the database refused a privilege
// (Classify's Denied), and err unchanged otherwise. It is for statements
// that are not a store's own (those are in Uses): package migrate's ALTER
// of uid-generator's table.
func Refusal(ctx context.Context, db *sql.DB, d Dialect, u Use, err error) error {
	if Classify(err) != Denied {
		return err
	}
	grantee, where := whoami(ctx, db, d)
	return &PrivilegeError{Statement: u.Statement, Grant: grant(u.Privileges, where+"."+u.Table, grantee), Err: err}
}
