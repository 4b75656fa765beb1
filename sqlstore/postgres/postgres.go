// Package postgres registers PostgreSQL's row of the store table
// (package store) with the pgx driver: a program that imports it, and no
// other store, links pgx alone. firn's binary imports every store.
package postgres

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
	_ "github.com/jackc/pgx/v5/stdlib" // the pgx driver, as database/sql's "pgx"

	"github.com/firn-id/firn/internal/secret"
	"github.com/firn-id/firn/sqlstore"
	"github.com/firn-id/firn/store"
)

func init() {
	store.Register(sqlstore.Kind(sqlstore.Postgres, sqlstore.Driver{Name: "pgx", Endpoint: endpoint, Redact: redact}, store.Kind{
		Name:    "postgres",
		Title:   "PostgreSQL",
		Summary: "PostgreSQL: firn_nodes, and Leaf's or Tinyid's segment table",
		Rank:    20,
	}))
}

// notPostgres says what a PostgreSQL DSN looks like.
const notPostgres = "not a PostgreSQL DSN (postgres://user@host:5432/db or host=… dbname=…): "

// endpoint reads dsn as pgx does and returns the addresses it dials.
func endpoint(dsn string) (string, error) {
	if _, _, ok := secret.Postgres(dsn); !ok {
		// pgx would take a word that is not keyword=value as part of a
		// keyword, send it to the server as a setting and pass on the
		// server's refusal, which quotes it, password and all.
		return "", errors.New(notPostgres + "want keyword=value pairs separated by spaces, or a postgres:// URL")
	}
	cfg, err := pgconn.ParseConfig(dsn)
	if err != nil {
		// pgx's message quotes the DSN with a partial redaction: give
		// only its cause.
		cause := "cannot parse it"
		if inner := errors.Unwrap(err); inner != nil {
			cause = secret.Scrub(inner.Error())
		}
		return "", errors.New(notPostgres + cause)
	}
	if err := checkDurable(cfg.RuntimeParams); err != nil {
		return "", err
	}
	hosts := []string{net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port)))}
	for _, fb := range cfg.Fallbacks {
		if h := net.JoinHostPort(fb.Host, strconv.Itoa(int(fb.Port))); h != hosts[len(hosts)-1] {
			hosts = append(hosts, h)
		}
	}
	return strings.Join(hosts, ","), nil
}

// durableCommits are the values of synchronous_commit under which the
// server confirms a commit only once it is flushed to its own disk.
var durableCommits = map[string]bool{"on": true, "true": true, "yes": true, "1": true, "local": true, "remote_write": true, "remote_apply": true}

// checkDurable refuses a DSN whose run-time parameters — pgx sends every
// parameter it does not know to the server as a setting, and options'
// -c name=value too — set synchronous_commit to a value under which a
// confirmed HWM or lease write can be lost in a crash of the server: a
// new owner of the node would then start below IDs already issued.
func checkDurable(params map[string]string) error {
	values := []string{}
	if v, ok := params["synchronous_commit"]; ok {
		values = append(values, v)
	}
	opts := strings.Fields(params["options"])
	for i, o := range opts {
		var setting string
		switch {
		case o == "-c" && i+1 < len(opts):
			setting = opts[i+1]
		case strings.HasPrefix(o, "-c"):
			setting = o[2:]
		case strings.HasPrefix(o, "--"):
			setting = o[2:]
		}
		name, value, ok := strings.Cut(setting, "=")
		if ok && strings.ReplaceAll(strings.ToLower(name), "-", "_") == "synchronous_commit" {
			values = append(values, value)
		}
	}
	for _, v := range values {
		if !durableCommits[strings.ToLower(v)] {
			return fmt.Errorf("synchronous_commit=%s would let the server confirm a write it can lose in a crash, and firn's HWMs and leases must never be lost: remove it from the DSN (or set on, local, remote_write or remote_apply)", v)
		}
	}
	return nil
}

// redact reads dsn as pgx does (secret.Postgres) and replaces each
// secret setting's value. When pgx itself accepts dsn, the password it
// would use is checked to be gone too.
func redact(dsn string) (string, []string, bool) {
	out, passwords, ok := secret.Postgres(dsn)
	if cfg, err := pgconn.ParseConfig(dsn); err == nil {
		passwords = append(passwords, cfg.Password)
	}
	return out, passwords, ok
}
