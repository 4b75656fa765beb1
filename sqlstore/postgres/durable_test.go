package postgres

import (
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

// TestDurableCommitsOnly: a DSN that turns synchronous_commit off, in any
// spelling pgx sends to the server, is refused; durable values pass.
func TestDurableCommitsOnly(t *testing.T) {
	for dsn, refused := range map[string]bool{
		"postgres://u@h/db":                                         false,
		"postgres://u@h/db?synchronous_commit=on":                   false,
		"postgres://u@h/db?synchronous_commit=remote_apply":         false,
		"postgres://u@h/db?synchronous_commit=off":                  true,
		"postgres://u@h/db?synchronous_commit=OFF":                  true,
		"postgres://u@h/db?synchronous_commit=false":                true,
		"postgres://u@h/db?options=-c%20synchronous_commit%3Doff":   true,
		"postgres://u@h/db?options=-csynchronous_commit%3D0":        true,
		"postgres://u@h/db?options=--synchronous-commit%3Doff":      true,
		"host=h dbname=db options='-c synchronous_commit=off'":      true,
		"host=h dbname=db options='-c statement_timeout=5s'":        false,
		"postgres://u@h/db?options=-c%20synchronous_commit%3Dlocal": false,
	} {
		if _, err := pgconn.ParseConfig(dsn); err != nil {
			t.Fatalf("%s: pgx refuses it: %v", dsn, err)
		}
		_, err := endpoint(dsn)
		if got := err != nil && strings.Contains(err.Error(), "synchronous_commit"); got != refused {
			t.Errorf("%s: refused %v (%v), want %v", dsn, got, err, refused)
		}
	}
}
