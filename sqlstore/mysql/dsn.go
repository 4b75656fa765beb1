package mysql

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	driver "github.com/go-sql-driver/mysql"

	"github.com/firn-id/firn/internal/secret"
)

// sessionVariables are the MySQL session variables a DSN may set, by
// their lower-case names.
//
// go-sql-driver/mysql (v1.8.1: dsn.go's parseDSNParams, connection.go's
// handleParams) reads its own options out of a DSN's query and sends
// every other parameter to the server on each new connection as
// "SET name = value", the value copied into the statement unquoted. So
// ?password='x' (pgx's URLs take ?password=) is "SET password = 'x'",
// which sets the account's password; "charset" alone is the driver's, as
// SET NAMES. Each variable here changes nothing firn's safety rests on:
//   - time_zone: the lease and HWM statements read UTC_TIMESTAMP(3),
//     which no session zone moves; a site's policy may still ask for one.
//   - innodb_lock_wait_timeout, lock_wait_timeout, max_execution_time
//     (MySQL), max_statement_time (MariaDB): bounds on a wait or a
//     statement; one cut short fails, and a failed write is taken as not
//     written (DESIGN.md §3).
//   - wait_timeout, net_read_timeout, net_write_timeout: when the server
//     drops a connection, which the pool replaces.
//
// Left out on purpose: autocommit (a fenced write left uncommitted would
// be confirmed and never land), sql_mode (without strict mode a value
// past a column's range is clipped, not refused: a segment counter could
// stop rising), transaction_isolation and tx_isolation (the claim's read
// under the row lock is what the fence rests on), unique_checks,
// foreign_key_checks, sql_log_bin, and the character_set_* and collation_*
// variables (a tag's bytes as the table compares them; the driver's
// charset and collation options set them as the driver supports).
var sessionVariables = []string{"time_zone", "innodb_lock_wait_timeout", "lock_wait_timeout", "max_execution_time",
	"max_statement_time", "wait_timeout", "net_read_timeout", "net_write_timeout"}

// mysqlLiteral is one value a session variable may be set to: a number,
// a word (SYSTEM, DEFAULT, UTC) or a single-quoted string with no quote
// or backslash in it ('+00:00', 'Europe/Berlin'). The driver copies the
// value into its SET statement as it is, so anything more — a comma
// above all — would set a second variable: "'+00:00', password = 'x'".
var mysqlLiteral = regexp.MustCompile(`^(?:[0-9]+(?:\.[0-9]+)?|[A-Za-z_][A-Za-z0-9_]*|'[^'\\]*')$`)

// mysqlCharsets is the driver's charset option: names it tries in turn
// with SET NAMES, the value copied into the statement as it is.
var mysqlCharsets = regexp.MustCompile(`^[A-Za-z0-9_]+(?:,[A-Za-z0-9_]+)*$`)

// checkMySQLParams refuses the first parameter of a MySQL DSN, by name,
// that checkMySQLParam refuses.
func checkMySQLParams(cfg *driver.Config) error {
	names := make([]string, 0, len(cfg.Params))
	for name := range cfg.Params {
		names = append(names, name)
	}
	slices.Sort(names) // one message for one DSN
	for _, name := range names {
		if err := checkMySQLParam(name, cfg.Params[name]); err != nil {
			return err
		}
	}
	return nil
}

// checkMySQLParam refuses a parameter the driver would turn into a
// statement firn has not allowed: a name that is neither the driver's
// charset nor in sessionVariables, or a value that is not one literal.
// The error names the parameter, never its value, and says what to write
// instead. redact hides the value of every parameter refused here.
func checkMySQLParam(name, value string) error {
	switch {
	case name == "charset":
		if !mysqlCharsets.MatchString(value) {
			return fmt.Errorf("parameter charset: want character set names separated by commas, such as charset=utf8mb4")
		}
	case secret.Named(name):
		return fmt.Errorf("parameter %q: the MySQL driver would send it to the server as SET %s = … (SET password = … "+
			"changes the account's password); remove ?%s= and give the password before the @: user:password@tcp(host:3306)/db",
			name, name, name)
	case !slices.Contains(sessionVariables, strings.ToLower(name)):
		return fmt.Errorf("parameter %q is no option of the MySQL driver, which would send it to the server as SET %s = …; "+
			"remove it (the session variables firn lets a DSN set: %s)", name, name, strings.Join(sessionVariables, ", "))
	case !mysqlLiteral.MatchString(value):
		return fmt.Errorf("parameter %q: the MySQL driver copies its value into SET %s = … as it is: want one number, "+
			"word or single-quoted string without quotes or backslashes inside, such as %s=%%27%%2B00:00%%27 for '+00:00'",
			name, name, name)
	}
	return nil
}
