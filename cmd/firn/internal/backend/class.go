package backend

import (
	"context"
	"database/sql/driver"
	"errors"
	"net"
	"syscall"

	"github.com/go-sql-driver/mysql"
	"google.golang.org/grpc/codes"
	grpcstatus "google.golang.org/grpc/status"

	"github.com/firn-id/firn/sqlstore"
)

// A Class is what kind of failure kept a store from serving, in words
// that quote nothing the store or its driver said: an open readiness
// probe gives it to anyone who asks, and a driver's message may quote a
// setting, password and all (MariaDB's syntax error quoted the value
// of a DSN's ?password=).
type Class string

// The classes, most telling first.
const (
	// Refused: nothing listens at the store's address.
	Refused Class = "refused"
	// Timeout: no answer within the deadline.
	Timeout Class = "timeout"
	// Auth: the store refused the user, the password or a privilege.
	Auth Class = "auth"
	// MissingDatabase: the database the DSN names does not exist.
	MissingDatabase Class = "missing database"
	// MissingTable: the store's table does not exist, and was not
	// created.
	MissingTable Class = "missing table"
	// Other: the store, or the connection to it, failed in any other way.
	Other Class = "other"
)

// ClassOf says what kind of store failure err holds; ok is false when
// err holds none that this package recognises: it is then firn's own
// (no free node, a node held by another, a clock behind), whose message
// quotes no store.
func ClassOf(err error) (c Class, ok bool) {
	switch {
	case err == nil:
		return "", false
	case errors.Is(err, syscall.ECONNREFUSED):
		return Refused, true
	}
	switch sqlstore.Classify(err) {
	case sqlstore.Unauthenticated, sqlstore.Denied:
		return Auth, true
	case sqlstore.MissingDatabase:
		return MissingDatabase, true
	case sqlstore.MissingTable:
		return MissingTable, true
	}
	switch grpcstatus.Code(err) { // etcd's client answers with gRPC statuses
	case codes.Unauthenticated, codes.PermissionDenied:
		return Auth, true
	}
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout() {
		return Timeout, true
	}
	if fromStore(err) {
		return Other, true
	}
	return "", false
}

// fromStore reports whether err holds an error of a store or its
// driver: one with the store's own words in it.
func fromStore(err error) bool {
	var ue *UnreachableError
	var me *mysql.MySQLError
	var se interface{ SQLState() string }
	var ge interface{ GRPCStatus() *grpcstatus.Status }
	var ne net.Error
	return errors.As(err, &ue) || errors.As(err, &me) || errors.As(err, &se) || errors.As(err, &ge) ||
		errors.As(err, &ne) || errors.Is(err, driver.ErrBadConn) || errors.Is(err, mysql.ErrInvalidConn)
}

// Brief is err, a reason not to serve, as an open readiness probe may
// show it: "STORE: CLASS (...)", naming the store (an unreachable one by
// its address) and ClassOf's class, and none of the store's words; ""
// when err holds no store failure, and its own message says it. The
// message itself is for the log, and /v1/status once the server runs,
// both redacted.
func Brief(store string, err error) string {
	c, ok := ClassOf(err)
	if !ok {
		return ""
	}
	var ue *UnreachableError
	if errors.As(err, &ue) {
		store = ue.Store + " " + ue.Endpoint
	}
	return store + ": " + string(c) + " (the store's message is in the log)"
}
