// Package secret keeps passwords out of what firn prints. Remember
// records a password the command has seen in a setting (a DSN, an etcd
// endpoint), Scrub replaces every one recorded in a message, and
// ScrubAttr does the same for the logger: the last guard on messages that
// quote a driver, for a command's error line and the server's logs.
// Postgres and Endpoint hide the passwords of a PostgreSQL DSN and an
// etcd endpoint, reading them as pgx and net/url do, without the drivers:
// what needs a driver's own reading (MySQL's DSN, the password pgx would
// take from the environment) stays with the command, the one place that
// imports the drivers. File and ReadFile name a file holding a secret
// only when it exists: a name that is no file may be the secret itself.
//
// The record is process-wide, not part of the configuration: every
// message of the process goes through it, whichever setting the password
// came from.
package secret

import (
	"log/slog"
	"slices"
	"strings"
	"sync"
)

// Redacted replaces a secret in everything firn prints.
const Redacted = "REDACTED"

// secrets are the passwords Remember has been given, hidden by Scrub.
var secrets struct {
	sync.Mutex
	list []string
}

// minSecret is the shortest password Scrub replaces: shorter ones would
// blank out ordinary words of a message, and no path prints a password
// (redaction, and the messages built from it, never contain one).
const minSecret = 4

// Remember records passwords for Scrub.
func Remember(passwords ...string) {
	secrets.Lock()
	defer secrets.Unlock()
	for _, p := range passwords {
		if len(p) >= minSecret && p != Redacted && !slices.Contains(secrets.list, p) {
			secrets.list = append(secrets.list, p)
		}
	}
}

// Scrub replaces every password Remember has recorded in s.
func Scrub(s string) string {
	secrets.Lock()
	defer secrets.Unlock()
	for _, p := range secrets.list {
		s = strings.ReplaceAll(s, p, Redacted)
	}
	return s
}

// ScrubAttr is the logger's ReplaceAttr: string and error values are
// scrubbed.
func ScrubAttr(_ []string, a slog.Attr) slog.Attr {
	switch v := a.Value.Any().(type) {
	case string:
		a.Value = slog.StringValue(Scrub(v))
	case error:
		a.Value = slog.StringValue(Scrub(v.Error()))
	}
	return a
}
