package sqlstore

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/firn-id/firn/segment"
)

// Dialect selects the SQL of one database family.
type Dialect int

const (
	// Postgres is PostgreSQL 12 or later.
	Postgres Dialect = iota + 1
	// MySQL is MySQL 8 or MariaDB 10.6 or later.
	MySQL
)

// ParseDialect parses "postgres" or "mysql".
func ParseDialect(s string) (Dialect, error) {
	switch s {
	case "postgres", "postgresql":
		return Postgres, nil
	case "mysql", "mariadb":
		return MySQL, nil
	}
	return 0, fmt.Errorf("sqlstore: unknown dialect %q (want postgres or mysql)", s)
}

// String returns "postgres" or "mysql".
func (d Dialect) String() string {
	switch d {
	case Postgres:
		return "postgres"
	case MySQL:
		return "mysql"
	}
	return "Dialect(" + strconv.Itoa(int(d)) + ")"
}

var tableName = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,54}$`)

// CheckTable refuses a table name that would need quoting, with a
// *TableNameError: the rule every store's constructor applies, and firn's
// configuration before any store is opened.
func CheckTable(t string) error { return checkTable(t) }

// TableNameError is a table name that would need quoting.
type TableNameError struct{ Name string }

func (e *TableNameError) Error() string { return "sqlstore: " + e.Reason() }

// Reason is the message without the package's name, for a caller that
// names the setting itself.
func (e *TableNameError) Reason() string {
	return fmt.Sprintf("table name %q: want lower-case letters, digits and underscores, at most 55", e.Name)
}

// WithDefaults returns t with every empty name the default, each name
// checked with CheckTable.
func (t Tables) WithDefaults() (Tables, error) { return t.withDefaults() }

// checkTable refuses table names that would need quoting.
func checkTable(t string) error {
	if !tableName.MatchString(t) {
		return &TableNameError{Name: t}
	}
	return nil
}

// Schema returns the DDL that creates the node table and its namespace
// table, for teams whose application user may not create tables. Lease
// expiry is judged by the database's own clock when each statement runs:
// clock_timestamp() in PostgreSQL, UTC_TIMESTAMP(3) (NOW(3) in UTC, so
// no session's time zone matters) in MySQL, in millisecond columns.
func Schema(d Dialect, table string) (string, error) {
	if err := checkTable(table); err != nil {
		return "", err
	}
	var ddl string
	switch d {
	case Postgres:
		ddl = `CREATE TABLE IF NOT EXISTS {t}_namespaces (
    namespace   VARCHAR(128) PRIMARY KEY,
    fingerprint VARCHAR(64)  NOT NULL,  -- the layout's fingerprint
    layout      VARCHAR(512) NOT NULL   -- the layout, for error messages
);
CREATE TABLE IF NOT EXISTS {t} (
    namespace     VARCHAR(128) NOT NULL,
    node          BIGINT       NOT NULL,
    owner         VARCHAR(64),           -- token of the acquisition holding the node
    lease_expires TIMESTAMPTZ(3),        -- by the database's clock
    hwm           BIGINT       NOT NULL DEFAULT 0, -- Unix ms, exclusive; never lowered
    PRIMARY KEY (namespace, node)
);
`
	case MySQL:
		ddl = `CREATE TABLE IF NOT EXISTS {t}_namespaces (
    namespace   VARCHAR(128) NOT NULL PRIMARY KEY,
    fingerprint VARCHAR(64)  NOT NULL COMMENT 'the layout''s fingerprint',
    layout      VARCHAR(512) NOT NULL COMMENT 'the layout, for error messages'
) ENGINE=InnoDB;
CREATE TABLE IF NOT EXISTS {t} (
    namespace     VARCHAR(128) NOT NULL,
    node          BIGINT       NOT NULL,
    owner         VARCHAR(64)  NULL COMMENT 'token of the acquisition holding the node',
    lease_expires DATETIME(3)  NULL COMMENT 'UTC, by the database''s clock',
    hwm           BIGINT       NOT NULL DEFAULT 0 COMMENT 'Unix ms, exclusive; never lowered',
    PRIMARY KEY (namespace, node)
) ENGINE=InnoDB;
`
	default:
		return "", fmt.Errorf("sqlstore: unknown dialect %d", d)
	}
	return strings.ReplaceAll(ddl, "{t}", table), nil
}

// queries holds one dialect's statements, with {t} replaced and
// placeholders in the dialect's form.
type queries struct {
	now            string // the database's clock at statement time
	lockNamespace  string
	addNamespace   string
	lockNodes      string
	lockHWM        string
	addNode        string
	take           string
	renew          string // PostgreSQL: one statement with RETURNING
	lockNode       string // owner, live and HWM under the row lock
	setHWM         string
	release        string
	advance        string
	readNamespace  string
	liveNodes      string // the held nodes, read without a lock
	setRecord      string
	endLeases      string // every lease of the namespace, in Rerecord
	hwms           string
	expiryInterval func(string) string
}

func newQueries(d Dialect, table string) queries {
	var q queries
	switch d {
	case Postgres:
		q.now = "clock_timestamp()"
		q.expiryInterval = func(p string) string { return "clock_timestamp() + " + p + "::bigint * interval '1 millisecond'" }
		q.addNamespace = "INSERT INTO {t}_namespaces (namespace, fingerprint, layout) VALUES (?, ?, ?) ON CONFLICT DO NOTHING"
		q.addNode = "INSERT INTO {t} (namespace, node) VALUES (?, ?) ON CONFLICT DO NOTHING"
		q.renew = "UPDATE {t} SET hwm = GREATEST(hwm, ?), lease_expires = " + q.expiryInterval("?") +
			" WHERE namespace = ? AND node = ? AND owner = ? AND lease_expires > clock_timestamp() RETURNING hwm"
	case MySQL:
		q.now = "UTC_TIMESTAMP(3)"
		q.expiryInterval = func(p string) string { return "UTC_TIMESTAMP(3) + INTERVAL " + p + " MICROSECOND" }
		q.addNamespace = "INSERT IGNORE INTO {t}_namespaces (namespace, fingerprint, layout) VALUES (?, ?, ?)"
		q.addNode = "INSERT IGNORE INTO {t} (namespace, node) VALUES (?, ?)"
		q.setHWM = "UPDATE {t} SET hwm = ?, lease_expires = " + q.expiryInterval("?") + " WHERE namespace = ? AND node = ? AND owner = ?"
	}
	live := "COALESCE(owner IS NOT NULL AND lease_expires > " + q.now + ", FALSE)"
	q.lockNamespace = "SELECT fingerprint, layout FROM {t}_namespaces WHERE namespace = ? FOR UPDATE"
	q.readNamespace = "SELECT fingerprint, layout FROM {t}_namespaces WHERE namespace = ?"
	q.lockNode = "SELECT owner, lease_expires > " + q.now + ", hwm FROM {t} WHERE namespace = ? AND node = ? FOR UPDATE"
	q.lockNodes = "SELECT node, " + live + " FROM {t} WHERE namespace = ? ORDER BY node FOR UPDATE"
	q.liveNodes = "SELECT node FROM {t} WHERE namespace = ? AND owner IS NOT NULL AND lease_expires > " + q.now
	q.lockHWM = "SELECT hwm FROM {t} WHERE namespace = ? AND node = ? FOR UPDATE"
	q.take = "UPDATE {t} SET owner = ?, lease_expires = " + q.expiryInterval("?") + " WHERE namespace = ? AND node = ?"
	q.release = "UPDATE {t} SET owner = NULL, lease_expires = NULL WHERE namespace = ? AND node = ? AND owner = ?"
	q.advance = "UPDATE {t} SET hwm = GREATEST(hwm, ?) WHERE namespace = ? AND node = ?"
	q.setRecord = "UPDATE {t}_namespaces SET fingerprint = ?, layout = ? WHERE namespace = ?"
	q.endLeases = "UPDATE {t} SET owner = NULL, lease_expires = NULL WHERE namespace = ?"
	q.hwms = "SELECT node, hwm FROM {t} WHERE namespace = ?"
	for _, s := range []*string{&q.lockNamespace, &q.addNamespace, &q.lockNodes, &q.lockHWM, &q.addNode, &q.take, &q.renew,
		&q.lockNode, &q.setHWM, &q.release, &q.advance, &q.readNamespace, &q.liveNodes, &q.setRecord, &q.endLeases, &q.hwms} {
		*s = rebind(d, strings.ReplaceAll(*s, "{t}", table))
	}
	return q
}

// rebind turns ? placeholders into PostgreSQL's $1, $2…
func rebind(d Dialect, q string) string {
	if d != Postgres {
		return q
	}
	var b strings.Builder
	n := 0
	for _, r := range q {
		if r == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// untilOK runs a check on a store's first use, and on every later use
// until it has succeeded once.
type untilOK struct {
	mu   sync.Mutex
	done bool
}

func (o *untilOK) do(f func() error) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.done {
		return nil
	}
	if err := f(); err != nil {
		return err
	}
	o.done = true
	return nil
}

// schemaOnce creates a store's tables on first use, unless told not to.
type schemaOnce struct{ untilOK }

// ensure makes sure the tables exist, once: a table that answers a
// SELECT is used as it is, with no CREATE (an account with only its
// mode's privileges never meets one); a table the database says does not
// exist (MissingTable) is created by ddl unless skip; any other failure,
// a lock timeout or an outage, is returned as it came and tried again on
// the next use.
func (o *schemaOnce) ensure(ctx context.Context, c classifier, skip bool, tables []string, ddl string) error {
	if skip {
		return nil
	}
	return o.do(func() error { return createTables(ctx, c, tables, ddl) })
}

func createTables(ctx context.Context, c classifier, tables []string, ddl string) error {
	missing := false
	for _, t := range tables {
		// The name is checked by the store's constructor (checkTable).
		_, err := c.db.ExecContext(ctx, "SELECT 1 FROM "+t+" WHERE 1 = 0")
		switch {
		case err == nil:
		case Classify(err) == Denied:
			return fmt.Errorf("read %s: %w", t, c.refused(ctx, err, t, "SELECT"))
		case Classify(err) == MissingTable:
			missing = true
		default:
			// An outage is never taken for a missing table: a CREATE
			// would only fail again, or be refused, and say so wrongly.
			return fmt.Errorf("read %s: %w", t, err)
		}
	}
	if !missing {
		return nil
	}
	for _, stmt := range strings.Split(ddl, ";\n") {
		if stmt = strings.TrimSpace(stmt); stmt != "" {
			if _, err := c.db.ExecContext(ctx, strings.TrimSuffix(stmt, ";")); err != nil {
				// Processes that start together on a new database all
				// find the table missing; PostgreSQL's CREATE TABLE IF NOT
				// EXISTS is not atomic, and the losers fail on a catalogue
				// index. A table that answers now was made by the winner.
				if _, again := c.db.ExecContext(ctx, "SELECT 1 FROM "+createdTable(stmt)+" WHERE 1 = 0"); again == nil {
					continue
				}
				return fmt.Errorf("create tables: %w", c.refused(ctx, err, createdTable(stmt), "CREATE TABLE"))
			}
		}
	}
	return nil
}

// createdTable is the table a CREATE TABLE IF NOT EXISTS statement names.
func createdTable(stmt string) string {
	f := strings.Fields(strings.TrimPrefix(stmt, "CREATE TABLE IF NOT EXISTS "))
	if len(f) == 0 {
		return ""
	}
	return strings.Trim(f[0], "`")
}

// classifier explains a driver's errors for one store, by Classify: a
// value its column cannot hold becomes segment.ErrInvalid, a privilege
// refused a *PrivilegeError naming the statement of mode and the GRANT
// that allows it.
type classifier struct {
	db     *sql.DB
	d      Dialect
	mode   Mode
	tables Tables
}

// refused returns err as a *PrivilegeError for the statement verb on
// table when the database refused it a privilege, and err otherwise.
func (c classifier) refused(ctx context.Context, err error, table, verb string) error {
	return refusal(ctx, c.db, c.d, c.mode, c.tables, table, verb, err)
}

// wrap is refused, then classify.
func (c classifier) wrap(ctx context.Context, err error, table, verb string) error {
	if err = c.refused(ctx, err, table, verb); errors.As(err, new(*PrivilegeError)) {
		return err
	}
	return classify(err)
}

// tagIs returns the condition that matches column col to tag byte for
// byte, and its arguments. Leaf's and Tinyid's MySQL tables use case- and
// trailing-space-insensitive collations, under which "Order" and "order "
// equal "order": the first term keeps the index lookup, the second, a
// binary comparison, makes the match exact. The column is converted to
// UTF-8 before it is compared as bytes: a table in latin1 or gbk (Leaf's
// DDL names no charset, so such tables exist) holds its tags in its own
// encoding, and the tag arrives in UTF-8. _bin collations are no answer:
// they pad trailing spaces. PostgreSQL compares bytes.
func tagIs(d Dialect, col, tag string) (string, []any) {
	if d == MySQL {
		return col + " = ? AND CAST(CONVERT(" + col + " USING utf8mb4) AS BINARY) = CAST(? AS BINARY)", []any{tag, tag}
	}
	return col + " = ?", []any{tag}
}

// classify marks an error the database raised for a value its column
// cannot hold (Classify's Invalid) as segment.ErrInvalid. Other errors are
// returned as they are.
func classify(err error) error {
	if Classify(err) == Invalid {
		return segment.Errorf(segment.ErrInvalid, ": %w", err)
	}
	return err
}

// strictSQLMode is added to a MySQL session's sql_mode for the writes of
// values a lax server would truncate (tags, steps, descriptions).
const strictSQLMode = "STRICT_ALL_TABLES"

// execStrict runs one write; on MySQL in a session whose sql_mode is
// strict, so the server refuses a value it cannot hold rather than
// truncating it, whatever its default mode. The session's mode is put back
// afterwards, and a connection whose mode could not be put back is
// discarded.
func execStrict(ctx context.Context, db *sql.DB, d Dialect, query string, args ...any) (sql.Result, error) {
	if d != MySQL {
		return db.ExecContext(ctx, query, args...)
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	defer func() { _ = conn.Close() }() // returns it to the pool; a discarded one reports nothing useful
	var mode string
	if err := conn.QueryRowContext(ctx, "SELECT @@SESSION.sql_mode").Scan(&mode); err != nil {
		return nil, err
	}
	strict := strictSQLMode
	if mode != "" {
		strict = mode + "," + strictSQLMode
	}
	if _, err := conn.ExecContext(ctx, "SET SESSION sql_mode = ?", strict); err != nil {
		return nil, err
	}
	res, err := conn.ExecContext(ctx, query, args...)
	if _, rerr := conn.ExecContext(context.WithoutCancel(ctx), "SET SESSION sql_mode = ?", mode); rerr != nil {
		_ = conn.Raw(func(any) error { return driver.ErrBadConn })
	}
	return res, err
}

// columnOnce adds a column to a table made before the column existed,
// once: a table that answers a SELECT of the column is used as it is.
type columnOnce struct{ untilOK }

// ensure selects column from table and, if that fails, adds it with
// ALTER TABLE … ADD COLUMN column def; if the ALTER fails too, the column
// is selected again (another process may have added it meanwhile) and
// the ALTER's error returned if it still fails. A failure is tried again
// on the next use.
func (o *columnOnce) ensure(ctx context.Context, c classifier, table, column, def string) error {
	return o.do(func() error {
		// The names are the store's own, checked by its constructor.
		probe := "SELECT " + column + " FROM " + table + " WHERE 1 = 0"
		if _, err := c.db.ExecContext(ctx, probe); err == nil {
			return nil
		}
		_, err := c.db.ExecContext(ctx, "ALTER TABLE "+table+" ADD COLUMN "+column+" "+def)
		if err == nil {
			return nil
		}
		if _, again := c.db.ExecContext(ctx, probe); again == nil {
			return nil
		}
		return fmt.Errorf("table %s was made by an earlier firn and lacks column %s: adding it failed; run ALTER TABLE %s ADD COLUMN %s %s as the table's owner: %w",
			table, column, table, column, def, err)
	})
}

// kindOnce refuses, once per store, firn's own segment table opened in
// Tinyid's format. Tinyid's columns carry neither the store set nor the
// permutation a row records, so such a store would serve an opaque tag's
// counter plain, beside servers that permute it, and a tag of a store
// set without the set's checks. The table is firn's own if it has the
// set_name column, which every version of it has.
type kindOnce struct{ untilOK }

func (o *kindOnce) ensure(ctx context.Context, c classifier, table string) error {
	return o.do(func() error {
		own, err := hasColumn(ctx, c, table, "set_name")
		if err == nil && own {
			err = fmt.Errorf("table %s has column set_name: %w", table, ErrOwnTable)
		}
		return err
	})
}

// hasColumn reports whether table, as the store's statements name it, has
// column. It reads the catalog, which needs no grant: a query naming the
// column could not tell a missing column from an outage.
func hasColumn(ctx context.Context, c classifier, table, column string) (bool, error) {
	// The names are the store's own, checked by its constructor and the
	// caller: lower-case letters, digits and underscores.
	q := "SELECT COUNT(*) FROM information_schema.columns WHERE table_schema = DATABASE() AND table_name = '" + table + "' AND column_name = '" + column + "'"
	if c.d == Postgres {
		q = "SELECT COUNT(*) FROM pg_attribute WHERE attrelid = to_regclass('" + table + "') AND attname = '" + column + "' AND attnum > 0 AND NOT attisdropped"
	}
	var n int
	if err := c.db.QueryRowContext(ctx, q).Scan(&n); err != nil {
		return false, fmt.Errorf("read the columns of table %s: %w", table, c.wrap(ctx, err, table, "SELECT"))
	}
	return n > 0, nil
}
