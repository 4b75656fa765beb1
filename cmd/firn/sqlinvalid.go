package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"
)

// mysqlValueErrors are MySQL's errors for a value its column cannot hold:
// out of range (1264), truncated (1265), an incorrect value (1292, 1366),
// an invalid string for the charset (1300), too long (1406).
var mysqlValueErrors = map[uint16]bool{1264: true, 1265: true, 1292: true, 1300: true, 1366: true, 1406: true}

// invalidSQLInput reports whether err is the database refusing a value
// its column cannot hold — SQLSTATE class 22 ("data exception": too long,
// out of range, a NUL or a byte sequence the encoding refuses) or one of
// mysqlValueErrors — rather than an outage. sqlstore imports no driver;
// it gets this as an option, and answers such errors as
// segment.ErrInvalid (400, InvalidArgument, exit 2).
func invalidSQLInput(err error) bool {
	var pe *pgconn.PgError
	var me *mysql.MySQLError
	switch {
	case errors.As(err, &pe):
		return strings.HasPrefix(pe.Code, "22")
	case errors.As(err, &me):
		return mysqlValueErrors[me.Number] || me.SQLState[0] == '2' && me.SQLState[1] == '2'
	}
	return false
}

// mysqlDeniedErrors are MySQL's errors for a privilege the account lacks:
// on a table (1142), on a column (1143), on the database (1044).
var mysqlDeniedErrors = map[uint16]bool{1044: true, 1142: true, 1143: true}

// deniedSQL reports whether err is the database refusing a statement
// for want of a privilege — PostgreSQL's SQLSTATE 42501
// (insufficient_privilege) or one of mysqlDeniedErrors. sqlstore gets it
// as an option, and reports such errors as one line naming the statement
// and the GRANT that allows it (sqlstore.PrivilegeError).
func deniedSQL(err error) bool {
	var pe *pgconn.PgError
	var me *mysql.MySQLError
	switch {
	case errors.As(err, &pe):
		return pe.Code == "42501"
	case errors.As(err, &me):
		return mysqlDeniedErrors[me.Number]
	}
	return false
}

// mysqlMissingTable is MySQL's error for a table that does not exist.
const mysqlMissingTable = 1146

// missingSQL reports whether err is the database saying a table does not
// exist — PostgreSQL's SQLSTATE 42P01 (undefined_table) or MySQL's 1146 —
// rather than failing to read one that does (a lock timeout, an outage).
// sqlstore gets it as an option and creates a table on first use only
// then; firn migrate check reads a missing segment table as "no
// segments".
func missingSQL(err error) bool {
	var pe *pgconn.PgError
	var me *mysql.MySQLError
	switch {
	case errors.As(err, &pe):
		return pe.Code == "42P01"
	case errors.As(err, &me):
		return me.Number == mysqlMissingTable
	}
	return false
}

// mysqlDuplicateColumn is MySQL's error for a column a table already has.
const mysqlDuplicateColumn = 1060

// duplicateColumnSQL reports whether err is MySQL refusing to add a column
// the table already has: the answer firn migrate check expects from its
// ALTER probe when the account holds ALTER (sqlstore.CheckWorkerNodeFence).
func duplicateColumnSQL(err error) bool {
	var me *mysql.MySQLError
	return errors.As(err, &me) && me.Number == mysqlDuplicateColumn
}

// refusedSQL says why a database that answered refused the connection
// itself — no such database (PostgreSQL's SQLSTATE 3D000, MySQL's 1049),
// the user or password refused (28P01 and 28000; MySQL's SQLSTATE 28000:
// 1045, 1698), or the user not let into the database (42501, CONNECT
// revoked; MySQL's 1044, which also answers a database that does not
// exist) — and what to change; ok is false for anything else, an outage
// included. Waiting cures none of these. For errors of connecting only:
// 42501 on a statement is a missing privilege (deniedSQL).
func refusedSQL(err error) (why string, ok bool) {
	var pe *pgconn.PgError
	var me *mysql.MySQLError
	switch {
	case errors.As(err, &pe) && pe.Code == "3D000":
		return fmt.Sprintf("%s (SQLSTATE %s): create it, or name another database in the DSN", pe.Message, pe.Code), true
	case errors.As(err, &pe) && (pe.Code == "28P01" || pe.Code == "28000"):
		return fmt.Sprintf("%s (SQLSTATE %s): check the user and password of the DSN", pe.Message, pe.Code), true
	case errors.As(err, &me) && me.Number == 1049:
		return fmt.Sprintf("%s (error %d): create it, or name another database in the DSN", me.Message, me.Number), true
	case errors.As(err, &me) && string(me.SQLState[:]) == "28000":
		return fmt.Sprintf("%s (error %d): check the user and password of the DSN", me.Message, me.Number), true
	case errors.As(err, &pe) && pe.Code == "42501":
		return fmt.Sprintf("%s (SQLSTATE %s): GRANT the user CONNECT on the database, or name another in the DSN", pe.Message, pe.Code), true
	case errors.As(err, &me) && me.Number == 1044:
		return fmt.Sprintf("%s (error %d): check that the database exists, and GRANT the user access to it", me.Message, me.Number), true
	}
	return "", false
}
