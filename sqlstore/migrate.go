package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// What firn migrate check reads from a previous system's database. Every
// read here is a SELECT: nothing is created or written.

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
// real statement. denied classifies a driver's error as a refused
// privilege (see SegmentOptions.Denied).
func CheckPrivileges(ctx context.Context, db *sql.DB, d Dialect, m Mode, t Tables, denied func(error) bool) ([]PrivilegeCheck, error) {
	uses, err := Uses(m, t)
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
			probe = "INSERT INTO " + u.Table + " (" + u.column + ") SELECT " + u.column + " FROM " + u.Table + " WHERE 1 = 0"
		}
		_, err := db.ExecContext(ctx, probe)
		out = append(out, PrivilegeCheck{Use: u, Err: refusal(ctx, db, d, denied, m, t, u.Table, u.Verb, err)})
	}
	return out, nil
}

// oldName is a table or column name of a previous system: letters of
// either case (uid-generator's WORKER_NODE), digits and underscores.
var oldName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,63}$`)

// quoteOld quotes a checked name as the dialect quotes identifiers, so
// that the case of WORKER_NODE is kept.
func quoteOld(d Dialect, name string) (string, error) {
	if !oldName.MatchString(name) {
		return "", fmt.Errorf("sqlstore: name %q: want letters, digits and underscores, at most 64", name)
	}
	if d == MySQL {
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
func MaxID(ctx context.Context, db *sql.DB, d Dialect, table, column string) (int64, bool, error) {
	qt, err := quoteOld(d, table)
	if err != nil {
		return 0, false, err
	}
	qc, err := quoteOld(d, column)
	if err != nil {
		return 0, false, err
	}
	num := "CAST(" + qc + " AS DECIMAL(65,10))"
	if d == Postgres {
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
		return 0, fmt.Errorf("sqlstore: not a whole number, so not an ID")
	}
	v, err := strconv.ParseInt(whole, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("sqlstore: not an ID of at most 2^63-1 (9223372036854775807): %w", err)
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
func WorkerNodes(ctx context.Context, db *sql.DB, d Dialect, table string) ([]WorkerNode, error) {
	if table == "" {
		table = "WORKER_NODE"
	}
	qt, err := quoteOld(d, table)
	if err != nil {
		return nil, err
	}
	stamp := "UNIX_TIMESTAMP(LAUNCH_DATE), UNIX_TIMESTAMP(MODIFIED)"
	if d == Postgres {
		stamp = `CAST(EXTRACT(EPOCH FROM "LAUNCH_DATE") AS BIGINT), CAST(EXTRACT(EPOCH FROM "MODIFIED") AS BIGINT)`
	}
	cols := "ID, HOST_NAME, PORT, " + stamp
	if d == Postgres {
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

// TokenBizTypes reads Tinyid's token table as TinyidTokens does and
// returns the bizTypes its tokens cover, sorted.
func TokenBizTypes(ctx context.Context, db *sql.DB, d Dialect, table string) ([]string, error) {
	t, err := NewTinyidTokens(db, d, TinyidTokenOptions{Table: table})
	if err != nil {
		return nil, err
	}
	set, err := t.read(ctx)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrTokenTable, t.opt.Table, err)
	}
	var out []string
	for _, biz := range set {
		for b := range biz {
			if !slices.Contains(out, b) {
				out = append(out, b)
			}
		}
	}
	slices.Sort(out)
	return out, nil
}
