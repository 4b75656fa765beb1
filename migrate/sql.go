package migrate

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/firn-id/firn/sqlstore"
)

// The statements migrate runs on a previous system's own tables. Every one
// but FenceWorkerNodes reads: nothing is created or written.

// oldName is a table or column name of a previous system: letters of
// either case (uid-generator's WORKER_NODE), digits and underscores.
var oldName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,63}$`)

// quoteOld quotes a checked name as the dialect quotes identifiers, so
// that the case of WORKER_NODE is kept.
func quoteOld(d sqlstore.Dialect, name string) (string, error) {
	if !oldName.MatchString(name) {
		return "", fmt.Errorf("migrate: name %q: want letters, digits and underscores, at most 64", name)
	}
	if d == sqlstore.MySQL {
		return "`" + name + "`", nil
	}
	return `"` + name + `"`, nil
}

// MaxID returns the largest value of column in table as a number, and
// false when the table holds no row. The column may hold the IDs as text
// (a VARCHAR kept for JavaScript): the values are compared as numbers —
// MAX(CAST(c AS DECIMAL(65,10))) in MySQL, MAX(c::numeric) in
// PostgreSQL — never as strings, under which '999' passes
// '1844674407370955161'. A largest value that is not a whole number, or
// is above 2^63-1 (no firn layout generates it), is an error.
func MaxID(ctx context.Context, db *sql.DB, d sqlstore.Dialect, table, column string) (int64, bool, error) {
	qt, err := quoteOld(d, table)
	if err != nil {
		return 0, false, err
	}
	qc, err := quoteOld(d, column)
	if err != nil {
		return 0, false, err
	}
	num := "CAST(" + qc + " AS DECIMAL(65,10))"
	if d == sqlstore.Postgres {
		num = qc + "::numeric"
	}
	var maxID sql.NullString
	if err := db.QueryRowContext(ctx, "SELECT CAST(MAX("+num+") AS CHAR(80)) FROM "+qt).Scan(&maxID); err != nil {
		return 0, false, fmt.Errorf("read MAX(%s) FROM %s: %w", column, table, err)
	}
	if !maxID.Valid {
		return 0, false, nil
	}
	v, err := wholeID(maxID.String)
	if err != nil {
		return 0, false, fmt.Errorf("MAX(%s) FROM %s = %s: %w", column, table, maxID.String, err)
	}
	return v, true, nil
}

// wholeID parses a decimal the database printed ("123", "123.0000000000")
// as an int64, refusing a fraction and a value past 2^63-1.
func wholeID(s string) (int64, error) {
	whole, frac, _ := strings.Cut(strings.TrimSpace(s), ".")
	if strings.Trim(frac, "0") != "" {
		return 0, fmt.Errorf("migrate: not a whole number, so not an ID")
	}
	v, err := strconv.ParseInt(whole, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("migrate: not an ID of at most 2^63-1 (9223372036854775807): %w", err)
	}
	return v, nil
}

// WorkerNode is one row of Baidu uid-generator's WORKER_NODE table: one
// start of a DisposableWorkerIdAssigner, whose ID is that process's
// worker ID.
type WorkerNode struct {
	ID       int64
	Host     string
	Port     string
	Launched time.Time // LAUNCH_DATE
	Modified time.Time // MODIFIED
}

// WorkerNodes reads uid-generator's table (default WORKER_NODE) as its
// WORKER_NODE.xml reads it, every row, in order of ID.
func WorkerNodes(ctx context.Context, db *sql.DB, d sqlstore.Dialect, table string) ([]WorkerNode, error) {
	if table == "" {
		table = "WORKER_NODE"
	}
	qt, err := quoteOld(d, table)
	if err != nil {
		return nil, err
	}
	stamp := "UNIX_TIMESTAMP(LAUNCH_DATE), UNIX_TIMESTAMP(MODIFIED)"
	if d == sqlstore.Postgres {
		stamp = `CAST(EXTRACT(EPOCH FROM "LAUNCH_DATE") AS BIGINT), CAST(EXTRACT(EPOCH FROM "MODIFIED") AS BIGINT)`
	}
	cols := "ID, HOST_NAME, PORT, " + stamp
	if d == sqlstore.Postgres {
		cols = `"ID", "HOST_NAME", "PORT", ` + stamp
	}
	rows, err := db.QueryContext(ctx, "SELECT "+cols+" FROM "+qt+" ORDER BY 1")
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", table, err)
	}
	defer rows.Close()
	var out []WorkerNode
	for rows.Next() {
		var w WorkerNode
		var launched, modified int64
		if err := rows.Scan(&w.ID, &w.Host, &w.Port, &launched, &modified); err != nil {
			return nil, fmt.Errorf("read %s: %w", table, err)
		}
		w.Launched, w.Modified = time.Unix(launched, 0).UTC(), time.Unix(modified, 0).UTC()
		out = append(out, w)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", table, err)
	}
	return out, nil
}

// fenceUse is the statement FenceWorkerNodes runs, for the plan and a
// refusal.
func fenceUse(table string, next uint64) sqlstore.Use {
	return sqlstore.Use{Table: table, Verb: "ALTER", Statement: fmt.Sprintf("ALTER TABLE %s AUTO_INCREMENT = %d, then INSERT INTO %s "+
		"(ID, …) VALUES (%d, '%s', …), a row that holds it across a restart", table, next, table, next, FenceHost),
		Privileges: []string{"ALTER", "INSERT"}, By: "firn migrate check --apply"}
}

// FenceHost is the HOST_NAME and PORT of the row FenceWorkerNodes
// inserts to hold the fence.
const FenceHost = "firn-fence"

// fenceColumns are the columns of that row: every column of
// uid-generator's WORKER_NODE.sql, each NOT NULL with no default; TYPE 1
// is ACTUAL (WorkerNodeType.java).
const fenceColumns = "(ID, HOST_NAME, PORT, TYPE, LAUNCH_DATE, MODIFIED, CREATED)"

// FenceWorkerNodes moves the AUTO_INCREMENT of uid-generator's table to
// next (the layout's last node + 1), so that every uid-generator process
// that starts from now on is given a worker ID past the layout's, which
// its DefaultUidGenerator refuses: it cannot take a node firn serves.
// It then inserts a row at ID next, unless one is there: MySQL 5.7 and
// earlier, and MariaDB before 10.2.4, set AUTO_INCREMENT back to
// MAX(ID)+1 on a restart, which without the row would undo the fence.
// uid-generator reads no row of the table (DisposableWorkerIdAssigner
// only inserts one and takes its generated key), so the row is no
// worker to it. MySQL's only (ErrFenceDialect); a refused privilege is a
// *PrivilegeError naming the GRANT.
func FenceWorkerNodes(ctx context.Context, db *sql.DB, d sqlstore.Dialect, table string, next uint64) error {
	if d != sqlstore.MySQL {
		return ErrFenceDialect
	}
	qt, err := quoteOld(d, table)
	if err != nil {
		return err
	}
	_, err = db.ExecContext(ctx, fmt.Sprintf("ALTER TABLE %s AUTO_INCREMENT = %d", qt, next))
	if err != nil {
		return fmt.Errorf("fence %s: %w", table, sqlstore.Refusal(ctx, db, d, fenceUse(table, next), err))
	}
	// A row already at next (a process that started after an earlier
	// fence, and refused to start) holds the fence as well.
	_, err = db.ExecContext(ctx, "INSERT INTO "+qt+" "+fenceColumns+
		" VALUES (?, ?, ?, 1, CURDATE(), NOW(), NOW()) ON DUPLICATE KEY UPDATE ID = ID", next, FenceHost, FenceHost)
	if err != nil {
		return fmt.Errorf("fence %s: AUTO_INCREMENT moved to %d, but no row holds it across a restart: %w",
			table, next, sqlstore.Refusal(ctx, db, d, fenceUse(table, next), err))
	}
	return nil
}

// CheckWorkerNodeFence tries whether the account may run FenceWorkerNodes,
// with an ALTER that cannot succeed and changes nothing (ADD COLUMN ID,
// which the table already has): MySQL checks ALTER before it looks at the
// columns, so a DuplicateColumn answer proves the privilege; then with an
// INSERT … SELECT of no row, into the columns of the row that holds the
// fence, which proves INSERT and writes nothing. The probe waits at most
// two seconds for the table's metadata lock.
func CheckWorkerNodeFence(ctx context.Context, db *sql.DB, d sqlstore.Dialect, table string, next uint64) (_ sqlstore.PrivilegeCheck, err error) {
	u := fenceUse(table, next)
	if d != sqlstore.MySQL {
		return sqlstore.PrivilegeCheck{Use: u, Err: ErrFenceDialect}, nil
	}
	qt, err := quoteOld(d, table)
	if err != nil {
		return sqlstore.PrivilegeCheck{}, err
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		return sqlstore.PrivilegeCheck{}, fmt.Errorf("check ALTER on %s: %w", table, err)
	}
	defer func() { err = errors.Join(err, conn.Close()) }()
	if _, err := conn.ExecContext(ctx, "SET SESSION lock_wait_timeout = 2"); err != nil {
		return sqlstore.PrivilegeCheck{}, fmt.Errorf("check ALTER on %s: %w", table, err)
	}
	_, perr := conn.ExecContext(ctx, "ALTER TABLE "+qt+" ADD COLUMN ID BIGINT")
	_, rerr := conn.ExecContext(ctx, "SET SESSION lock_wait_timeout = DEFAULT")
	switch {
	case perr == nil:
		return sqlstore.PrivilegeCheck{}, fmt.Errorf("check ALTER on %s: the table had no column ID: not uid-generator's", table)
	case sqlstore.Classify(perr) == sqlstore.DuplicateColumn:
		// The row that holds the fence needs INSERT: an INSERT of no
		// row is checked for it and writes nothing.
		_, perr = conn.ExecContext(ctx, "INSERT INTO "+qt+" "+fenceColumns+" SELECT 0, '', '', 1, CURDATE(), NOW(), NOW() FROM DUAL WHERE FALSE")
		if perr == nil {
			return sqlstore.PrivilegeCheck{Use: u}, rerr
		}
	}
	return sqlstore.PrivilegeCheck{Use: u, Err: sqlstore.Refusal(ctx, db, d, u, perr)}, rerr
}
