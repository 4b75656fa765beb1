package backend

import (
	"strings"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/firn-id/firn/internal/secret"
)

// Redact returns value with its password replaced by REDACTED. kind is
// "postgres" or "mysql" for a DSN (any other kind tries both) or "endpoint"
// for an etcd endpoint. The value is read as its driver reads it (pgx's
// keyword/value or URL grammar; mysql.ParseDSN; net/url), and with the
// password every setting secret.Named picks out is hidden, as is
// every MySQL parameter the driver would send to the server but a session
// variable firn allows: no password the driver would use survives, nor
// one given under another name. Each one found is remembered so that
// secret.Scrub hides it in later messages. A value that cannot be read,
// or whose redaction still contains a password, is replaced whole: firn
// fails closed. Config print, errors and logs all go through here.
func Redact(kind, value string) string {
	if value == "" {
		return ""
	}
	var out string
	var passwords []string
	ok := false
	switch kind {
	case "mysql":
		out, passwords, ok = redactMySQL(value)
	case "endpoint":
		out, passwords, ok = secret.Endpoint(value)
	case "postgres":
		out, passwords, ok = redactPostgres(value)
	default: // a DSN given to another store: hide it whatever it is
		if out, passwords, ok = redactPostgres(value); !ok {
			out, passwords, ok = redactMySQL(value)
		}
	}
	secret.Remember(passwords...)
	for _, p := range passwords {
		if p != "" && p != secret.Redacted && strings.Contains(out, p) {
			ok = false
		}
	}
	if !ok {
		return secret.Redacted
	}
	return out
}

// redactMySQL reads dsn with the MySQL driver and writes it back with the
// password replaced, and the value of every parameter checkMySQLParam
// refuses: a ?password= (or ?pwd=, or a name of any other spelling) is
// no option of the driver and may hold a password, and a value that is
// more than one literal may hide one.
func redactMySQL(dsn string) (string, []string, bool) {
	cfg, err := mysql.ParseDSN(dsn)
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

// redactPostgres reads dsn as pgx does (secret.Postgres) and replaces
// each secret setting's value. When pgx itself accepts dsn, the password
// it would use is checked to be gone too.
func redactPostgres(dsn string) (string, []string, bool) {
	out, passwords, ok := secret.Postgres(dsn)
	if cfg, err := pgconn.ParseConfig(dsn); err == nil {
		passwords = append(passwords, cfg.Password)
	}
	return out, passwords, ok
}
