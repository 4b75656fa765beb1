package main

import (
	"log/slog"
	"net/url"
	"slices"
	"strings"
	"sync"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"
)

// redacted replaces a secret in everything firn prints.
const redacted = "REDACTED"

// redact returns value — a DSN of kind postgres or mysql (any other kind
// is read as either), or an etcd endpoint of kind "endpoint" — with its password replaced by REDACTED, read
// the way the driver reads it: pgx's keyword/value grammar or URL (its
// password, and the password and sslpassword parameters), mysql.ParseDSN
// and Config.FormatDSN, net/url for etcd. Every password found is also
// remembered, so that scrub hides it in any later message. A value that
// cannot be read, or whose redaction would still contain a password the
// driver reads from it, is replaced whole: firn fails closed. Config
// print, error messages and logs all go through here.
func redact(kind, value string) string {
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
		out, passwords, ok = redactEndpoint(value)
	case "postgres":
		out, passwords, ok = redactPostgres(value)
	default: // a DSN given to another store: hide it whatever it is
		if out, passwords, ok = redactPostgres(value); !ok {
			out, passwords, ok = redactMySQL(value)
		}
	}
	rememberSecrets(passwords...)
	for _, p := range passwords {
		if p != "" && p != redacted && strings.Contains(out, p) {
			ok = false
		}
	}
	if !ok {
		return redacted
	}
	return out
}

// redactMySQL reads dsn with the MySQL driver and writes it back with the
// password replaced.
func redactMySQL(dsn string) (string, []string, bool) {
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return "", nil, false
	}
	pw := cfg.Passwd
	if pw != "" {
		cfg.Passwd = redacted
	}
	return cfg.FormatDSN(), []string{pw}, true
}

// pgSecrets are the connection settings of pgx that hold a secret.
var pgSecrets = map[string]bool{"password": true, "sslpassword": true}

// redactPostgres reads dsn as pgx does — a postgres:// or postgresql://
// URL, or keyword/value pairs — and replaces each secret setting's value.
// When pgx itself accepts dsn, the password it would use is checked to be
// gone too.
func redactPostgres(dsn string) (string, []string, bool) {
	var out string
	var passwords []string
	var ok bool
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		out, passwords, ok = redactURL(dsn, pgSecrets)
	} else {
		out, passwords, ok = redactKeywordValue(dsn)
	}
	if cfg, err := pgconn.ParseConfig(dsn); err == nil {
		passwords = append(passwords, cfg.Password)
	}
	return out, passwords, ok
}

// redactURL replaces the password of a URL's user information and the
// values of the query parameters named in params.
func redactURL(s string, params map[string]bool) (string, []string, bool) {
	u, err := url.Parse(s)
	if err != nil {
		return "", nil, false
	}
	var passwords []string
	if pw, ok := u.User.Password(); ok {
		passwords = append(passwords, pw)
		u.User = url.UserPassword(u.User.Username(), redacted)
	}
	q := u.Query()
	changed := false
	for k, vs := range q {
		if params[k] {
			passwords = append(passwords, vs...)
			q.Set(k, redacted)
			changed = true
		}
	}
	if changed {
		u.RawQuery = q.Encode()
	}
	return u.String(), passwords, true
}

// redactEndpoint hides the password of an etcd endpoint given as a URL
// with user information; host:port carries none.
func redactEndpoint(s string) (string, []string, bool) {
	if !strings.Contains(s, "@") {
		return s, nil, true
	}
	return redactURL(s, nil)
}

// pgSpace is the white space of pgx's keyword/value grammar.
const pgSpace = " \t\n\r\v\f"

// redactKeywordValue walks keyword=value pairs with pgx's grammar (a
// value is bare, with backslash escapes, or single-quoted) and replaces
// the value of each secret keyword.
func redactKeywordValue(s string) (string, []string, bool) {
	var b strings.Builder
	var passwords []string
	for rest := s; len(rest) > 0; {
		eq := strings.IndexByte(rest, '=')
		if eq < 0 {
			if strings.Trim(rest, pgSpace) == "" {
				break
			}
			return "", nil, false
		}
		key := strings.Trim(rest[:eq], pgSpace)
		if key == "" {
			return "", nil, false
		}
		b.WriteString(rest[:eq+1])
		rest = rest[eq+1:]
		lead := len(rest) - len(strings.TrimLeft(rest, pgSpace))
		b.WriteString(rest[:lead])
		rest = rest[lead:]
		n, val, ok := pgValue(rest)
		if !ok {
			return "", nil, false
		}
		if pgSecrets[key] {
			passwords = append(passwords, val)
			b.WriteString(redacted)
		} else {
			b.WriteString(rest[:n])
		}
		rest = rest[n:]
	}
	return b.String(), passwords, true
}

// pgValue reads one value at the start of s: its length in s and its
// unescaped text.
func pgValue(s string) (n int, val string, ok bool) {
	unescape := strings.NewReplacer(`\\`, `\`, `\'`, `'`)
	if s == "" {
		return 0, "", true
	}
	if s[0] != '\'' {
		end := 0
		for ; end < len(s) && !strings.ContainsRune(pgSpace, rune(s[end])); end++ {
			if s[end] == '\\' {
				if end++; end == len(s) {
					return 0, "", false
				}
			}
		}
		return end, unescape.Replace(s[:end]), true
	}
	for end := 1; end < len(s); end++ {
		switch s[end] {
		case '\\':
			end++
		case '\'':
			return end + 1, unescape.Replace(s[1:end]), true
		}
	}
	return 0, "", false
}

// secrets are the passwords redact has seen, hidden by scrub.
var secrets struct {
	sync.Mutex
	list []string
}

// minSecret is the shortest password scrub replaces: shorter ones would
// blank out ordinary words of a message, and no path prints a password
// (redact, and the messages built from it, never contain one).
const minSecret = 4

func rememberSecrets(passwords ...string) {
	secrets.Lock()
	defer secrets.Unlock()
	for _, p := range passwords {
		if len(p) >= minSecret && p != redacted && !slices.Contains(secrets.list, p) {
			secrets.list = append(secrets.list, p)
		}
	}
}

// scrub replaces every password redact has seen in s: the last guard on
// messages that quote a driver, for the command's error line and the
// server's logs.
func scrub(s string) string {
	secrets.Lock()
	defer secrets.Unlock()
	for _, p := range secrets.list {
		s = strings.ReplaceAll(s, p, redacted)
	}
	return s
}

// scrubAttr is the logger's ReplaceAttr: string and error values are
// scrubbed.
func scrubAttr(_ []string, a slog.Attr) slog.Attr {
	switch v := a.Value.Any().(type) {
	case string:
		a.Value = slog.StringValue(scrub(v))
	case error:
		a.Value = slog.StringValue(scrub(v.Error()))
	}
	return a
}
