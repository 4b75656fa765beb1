// Package mysql registers MySQL's (and MariaDB's) row of the store table
// (package store) with go-sql-driver/mysql: a program that imports it,
// and no other store, links that driver alone. firn's binary imports
// every store.
package mysql

import (
	"errors"
	"fmt"

	driver "github.com/go-sql-driver/mysql" // the driver, as database/sql's "mysql"

	"github.com/firn-id/firn/internal/secret"
	"github.com/firn-id/firn/sqlstore"
	"github.com/firn-id/firn/store"
)

func init() {
	store.Register(sqlstore.Kind(sqlstore.MySQL, sqlstore.Driver{Name: "mysql", Endpoint: endpoint, Redact: redact, Answered: answered, ServerError: serverError}, store.Kind{
		Name:    "mysql",
		Title:   "MySQL",
		Summary: "MySQL or MariaDB, as postgres",
		Rank:    30,
	}))
}

// serverError finds the server's error in err, for sqlstore.Classify.
func serverError(err error) (sqlstore.ServerError, bool) {
	var me *driver.MySQLError
	if !errors.As(err, &me) {
		return sqlstore.ServerError{}, false
	}
	return sqlstore.ServerError{Number: me.Number, SQLState: string(me.SQLState[:]), Message: me.Message}, true
}

// endpoint reads dsn with the driver's parser and returns the address it
// dials; a DSN whose parameters would have the driver send a statement
// firn does not allow (checkMySQLParams) is refused.
func endpoint(dsn string) (string, error) {
	cfg, err := driver.ParseDSN(dsn)
	if err != nil {
		return "", fmt.Errorf("not a MySQL DSN (user:password@tcp(host:3306)/db): %s", secret.Scrub(err.Error()))
	}
	if err := checkMySQLParams(cfg); err != nil {
		return "", err
	}
	return cfg.Net + " " + cfg.Addr, nil
}

// redact reads dsn with the driver and writes it back with the password
// replaced, and the value of every parameter checkMySQLParam refuses: a
// ?password= (or ?pwd=, or a name of any other spelling) is no option of
// the driver and may hold a password, and a value that is more than one
// literal may hide one.
func redact(dsn string) (string, []string, bool) {
	cfg, err := driver.ParseDSN(dsn)
	if err != nil {
		return "", nil, false
	}
	passwords := []string{cfg.Passwd}
	if cfg.Passwd != "" {
		cfg.Passwd = secret.Redacted
	}
	for name, value := range cfg.Params {
		if checkMySQLParam(name, value) != nil {
			passwords = append(passwords, value)
			cfg.Params[name] = secret.Redacted
		}
	}
	return cfg.FormatDSN(), passwords, true
}

// answered reports whether err is the server's own answer, an error
// number, as against a connection that failed.
func answered(err error) bool {
	var me *driver.MySQLError
	return errors.As(err, &me)
}
