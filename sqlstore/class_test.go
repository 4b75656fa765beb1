package sqlstore_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"

	_ "github.com/firn-id/firn/sqlstore/mysql" // the MySQL row: Classify reads its errors
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/firn-id/firn/sqlstore"
)

// pqError has the shape of lib/pq's *pq.Error as sqlstore sees it: an
// error with a SQLState method, of a type sqlstore does not know.
type pqError struct{ code, msg string }

func (e *pqError) Error() string    { return "pq: " + e.msg }
func (e *pqError) SQLState() string { return e.code }

func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want sqlstore.Class
	}{
		{"postgres: value too long", &pgconn.PgError{Code: "22001"}, sqlstore.Invalid},
		{"postgres: out of range, wrapped", fmt.Errorf("update: %w", &pgconn.PgError{Code: "22003"}), sqlstore.Invalid},
		{"postgres: a NUL", &pgconn.PgError{Code: "22021"}, sqlstore.Invalid},
		{"postgres: connection failure", &pgconn.PgError{Code: "08006"}, sqlstore.Outage},
		{"postgres: unique violation", &pgconn.PgError{Code: "23505"}, sqlstore.Outage},
		{"postgres: lock not available", &pgconn.PgError{Code: "55P03"}, sqlstore.Outage},
		{"postgres: insufficient privilege", &pgconn.PgError{Code: "42501"}, sqlstore.Denied},
		{"postgres: undefined table", &pgconn.PgError{Code: "42P01"}, sqlstore.MissingTable},
		{"lib/pq: undefined table", fmt.Errorf("read: %w", &pqError{"42P01", `relation "t" does not exist`}), sqlstore.MissingTable},
		{"lib/pq: value too long", &pqError{"22001", "value too long"}, sqlstore.Invalid},
		{"lib/pq: admin shutdown", &pqError{"57P01", "terminating connection"}, sqlstore.Outage},
		{"mysql: data too long", &mysql.MySQLError{Number: 1406}, sqlstore.Invalid},
		{"mysql: out of range", &mysql.MySQLError{Number: 1264}, sqlstore.Invalid},
		{"mysql: incorrect string value", &mysql.MySQLError{Number: 1366}, sqlstore.Invalid},
		{"mysql: another data exception", &mysql.MySQLError{Number: 1690, SQLState: [5]byte{'2', '2', '0', '0', '3'}}, sqlstore.Invalid},
		{"mysql: duplicate key", &mysql.MySQLError{Number: 1062}, sqlstore.Outage},
		{"mysql: access denied", &mysql.MySQLError{Number: 1045}, sqlstore.Unauthenticated},
		{"mysql: unknown database", &mysql.MySQLError{Number: 1049}, sqlstore.MissingDatabase},
		{"postgres: password refused", &pgconn.PgError{Code: "28P01"}, sqlstore.Unauthenticated},
		{"postgres: no such database", &pgconn.PgError{Code: "3D000"}, sqlstore.MissingDatabase},
		{"mysql: table privilege", &mysql.MySQLError{Number: 1142}, sqlstore.Denied},
		{"mysql: column privilege", &mysql.MySQLError{Number: 1143}, sqlstore.Denied},
		{"mysql: no such table", fmt.Errorf("read: %w", &mysql.MySQLError{Number: 1146}), sqlstore.MissingTable},
		{"mysql: duplicate column", &mysql.MySQLError{Number: 1060}, sqlstore.DuplicateColumn},
		{"mysql: lock wait timeout", &mysql.MySQLError{Number: 1205}, sqlstore.Outage},
		{"postgres: too many clients", &pgconn.PgError{Code: "53300"}, sqlstore.TooManyConnections},
		{"postgres: connection limit, wrapped", fmt.Errorf("connect: %w", &pgconn.PgError{Code: "53300"}), sqlstore.TooManyConnections},
		{"mysql: too many connections", &mysql.MySQLError{Number: 1040}, sqlstore.TooManyConnections},
		{"mysql: max_user_connections", &mysql.MySQLError{Number: 1203}, sqlstore.TooManyConnections},
		{"mysql: a user's MAX_USER_CONNECTIONS", &mysql.MySQLError{Number: 1226}, sqlstore.TooManyConnections},
		{"a bad connection", mysql.ErrInvalidConn, sqlstore.Outage},
		{"anything else", errors.New("boom"), sqlstore.Outage},
		{"nil", nil, sqlstore.Outage},
	} {
		if got := sqlstore.Classify(tc.err); got != tc.want {
			t.Errorf("%s: Classify = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestRefusedConnection(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want string // "" for not a refusal
	}{
		{"postgres: no such database", &pgconn.PgError{Severity: "FATAL", Code: "3D000", Message: `database "x" does not exist`},
			`database "x" does not exist (SQLSTATE 3D000): create it`},
		{"lib/pq: password refused", &pqError{"28P01", `password authentication failed for user "u"`},
			`password authentication failed for user "u" (SQLSTATE 28P01): check the user and password`},
		{"postgres: CONNECT revoked", &pgconn.PgError{Severity: "FATAL", Code: "42501", Message: "permission denied for database x"},
			"permission denied for database x (SQLSTATE 42501): GRANT the user CONNECT"},
		{"mysql: no such database", &mysql.MySQLError{Number: 1049, Message: "Unknown database 'x'"}, "Unknown database 'x' (error 1049): create it"},
		{"mysql: access denied", &mysql.MySQLError{Number: 1045, SQLState: [5]byte{'2', '8', '0', '0', '0'}, Message: "Access denied"},
			"Access denied (error 1045): check the user and password"},
		{"mysql: no access to the database", &mysql.MySQLError{Number: 1044, Message: "Access denied to x"}, "(error 1044): check that the database exists"},
		{"postgres: an outage", &pgconn.PgError{Code: "57P03"}, ""},
		{"a bad connection", mysql.ErrInvalidConn, ""},
	} {
		why, ok := sqlstore.RefusedConnection(tc.err)
		if ok != (tc.want != "") || !strings.Contains(why, tc.want) {
			t.Errorf("%s: RefusedConnection = %q, %v; want %q", tc.name, why, ok, tc.want)
		}
	}
}
