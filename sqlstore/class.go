package sqlstore

import (
	"errors"
	"fmt"
	"strings"
	"sync"
)

// A Class is what an error of the database means to firn (see Classify).
type Class int

const (
	// Outage is every error Classify does not recognise: the database is
	// down, unreachable, locked or slow, or said something firn has no
	// rule for. It is the zero Class on purpose: an error nobody
	// recognised is never taken for bad input or a missing table, so a
	// store never answers it with a 400 or a CREATE TABLE.
	Outage Class = iota
	// Invalid is the database refusing a value its column cannot hold:
	// SQLSTATE class 22 ("data exception": too long, out of range, a NUL
	// or a byte sequence the encoding refuses), or MySQL's 1264 (out of
	// range), 1265 (truncated), 1292 and 1366 (an incorrect value), 1300
	// (an invalid string for the charset), 1406 (too long). The stores
	// return such errors as segment.ErrInvalid.
	Invalid
	// Denied is the database refusing a statement for want of a
	// privilege: PostgreSQL's 42501 (insufficient_privilege), MySQL's
	// 1142 (on a table), 1143 (on a column), 1044 (on the database). The
	// stores return such errors as a *PrivilegeError.
	Denied
	// MissingTable is the database saying a table does not exist:
	// PostgreSQL's 42P01 (undefined_table), MySQL's 1146. Only then does a
	// store create its table on first use.
	MissingTable
	// DuplicateColumn is MySQL's 1060, a column the table already has:
	// the answer CheckWorkerNodeFence's ALTER probe expects when the
	// account may ALTER.
	DuplicateColumn
	// Unauthenticated is the database refusing the user or password:
	// PostgreSQL's 28P01 and 28000, MySQL's SQLSTATE 28000 (1045, 1698).
	// It comes from connecting, which waiting does not cure.
	Unauthenticated
	// MissingDatabase is the database named in the DSN not existing:
	// PostgreSQL's 3D000, MySQL's 1049.
	MissingDatabase
	// TooManyConnections is the database refusing a new connection for
	// want of a free one: PostgreSQL's 53300 (max_connections, a
	// database's or a role's CONNECTION LIMIT), MySQL's 1040
	// (max_connections), 1203 (max_user_connections) and 1226 (a user's
	// MAX_USER_CONNECTIONS). Connections come free in milliseconds: the
	// stores retry it within the caller's deadline (see Embed), and it is
	// never a lost lease.
	TooManyConnections
)

// String names the class.
func (c Class) String() string {
	switch c {
	case Outage:
		return "outage"
	case Invalid:
		return "invalid input"
	case Denied:
		return "permission denied"
	case MissingTable:
		return "missing table"
	case DuplicateColumn:
		return "duplicate column"
	case Unauthenticated:
		return "unauthenticated"
	case MissingDatabase:
		return "missing database"
	case TooManyConnections:
		return "too many connections"
	}
	return fmt.Sprintf("Class(%d)", int(c))
}

// mysqlClasses are the MySQL error numbers of each class but Outage.
var mysqlClasses = map[uint16]Class{
	1264: Invalid, 1265: Invalid, 1292: Invalid, 1300: Invalid, 1366: Invalid, 1406: Invalid,
	1044: Denied, 1142: Denied, 1143: Denied,
	1146: MissingTable,
	1060: DuplicateColumn,
	1045: Unauthenticated, 1698: Unauthenticated,
	1049: MissingDatabase,
	1040: TooManyConnections, 1203: TooManyConnections, 1226: TooManyConnections,
}

// ServerError is a MySQL server's error, as Driver.ServerError reads it
// from its driver's error type: sqlstore imports no driver, so a program
// on PostgreSQL links no MySQL driver.
type ServerError struct {
	Number   uint16
	SQLState string
	Message  string
}

var (
	readersMu sync.RWMutex
	readers   []func(error) (ServerError, bool)
)

// serverError finds a MySQL server's error in err with the readers the
// registered drivers gave (Kind).
func serverError(err error) (ServerError, bool) {
	readersMu.RLock()
	defer readersMu.RUnlock()
	for _, read := range readers {
		if se, ok := read(err); ok {
			return se, true
		}
	}
	return ServerError{}, false
}

// sqlStater is the method both PostgreSQL drivers' errors have (pgx's
// *pgconn.PgError, lib/pq's *pq.Error): sqlstore reads the SQLSTATE
// through it and imports neither driver.
type sqlStater interface{ SQLState() string }

// Classify says what err, an error of a store or of the PostgreSQL or
// MySQL driver under it, means: the driver's error is found with
// errors.As, so a wrapped one is classified too. Anything it does not
// recognise, nil included, is an Outage.
func Classify(err error) Class {
	var pe sqlStater
	me, isMySQL := serverError(err)
	switch {
	case err == nil:
		return Outage
	case isMySQL:
		if c, ok := mysqlClasses[me.Number]; ok {
			return c
		}
		if strings.HasPrefix(me.SQLState, "22") {
			return Invalid
		}
	case errors.As(err, &pe):
		switch code := pe.SQLState(); {
		case strings.HasPrefix(code, "22"):
			return Invalid
		case code == "42501":
			return Denied
		case code == "42P01":
			return MissingTable
		case code == "28P01", code == "28000":
			return Unauthenticated
		case code == "3D000":
			return MissingDatabase
		case code == "53300":
			return TooManyConnections
		}
	}
	return Outage
}

// RefusedConnection says why a database that answered refused the
// connection itself — no such database (PostgreSQL's 3D000, MySQL's
// 1049), the user or password refused (28P01 and 28000; MySQL's SQLSTATE
// 28000: 1045, 1698), or the user not let into the database (42501,
// CONNECT revoked; MySQL's 1044, which also answers a database that does
// not exist) — and what to change; ok is false for anything else, an
// outage included. Waiting cures none of these. It is for the errors of
// connecting only: 42501 on a statement is a missing privilege (Denied).
func RefusedConnection(err error) (why string, ok bool) {
	var pe sqlStater
	me, isMySQL := serverError(err)
	switch {
	case isMySQL && me.Number == 1049:
		return fmt.Sprintf("%s (error %d): create it, or name another database in the DSN", me.Message, me.Number), true
	case isMySQL && me.SQLState == "28000":
		return fmt.Sprintf("%s (error %d): check the user and password of the DSN", me.Message, me.Number), true
	case isMySQL && me.Number == 1044:
		return fmt.Sprintf("%s (error %d): check that the database exists, and GRANT the user access to it", me.Message, me.Number), true
	case !errors.As(err, &pe):
		return "", false
	}
	code := pe.SQLState()
	msg := pgMessage(pe.(error), code)
	switch code {
	case "3D000":
		return fmt.Sprintf("%s (SQLSTATE %s): create it, or name another database in the DSN", msg, code), true
	case "28P01", "28000":
		return fmt.Sprintf("%s (SQLSTATE %s): check the user and password of the DSN", msg, code), true
	case "42501":
		return fmt.Sprintf("%s (SQLSTATE %s): GRANT the user CONNECT on the database, or name another in the DSN", msg, code), true
	}
	return "", false
}

// pgMessage is the server's message in a PostgreSQL driver's error,
// without what the driver adds around it: pgx writes "FATAL: message
// (SQLSTATE code)", lib/pq "pq: message". Neither has a method for the
// message alone.
func pgMessage(err error, code string) string {
	msg := strings.TrimSuffix(err.Error(), " (SQLSTATE "+code+")")
	for _, prefix := range []string{"pq: ", "FATAL: ", "ERROR: ", "PANIC: "} {
		msg = strings.TrimPrefix(msg, prefix)
	}
	return msg
}
