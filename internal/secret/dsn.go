package secret

import (
	"net/url"
	"slices"
	"strings"
)

// Words mark the name of a setting or parameter that holds a
// secret wherever they appear in it, in any case: password, sslpassword,
// passwd, pwd, client_secret, token, auth_token. A store's DSN and an
// endpoint are redacted by them (Postgres, Endpoint, and the MySQL DSN
// the command reads), and so is a message that quotes name=value. A
// name that only looks like one costs a redacted value that was not
// secret; one missed could print a password.
var Words = []string{"password", "passwd", "pwd", "secret", "token"}

// Named reports whether a setting named name holds a secret: its name
// holds one of Words.
func Named(name string) bool {
	name = strings.ToLower(name)
	return slices.ContainsFunc(Words, func(w string) bool { return strings.Contains(name, w) })
}

// Postgres reads dsn as pgx does — a postgres:// or postgresql:// URL, or
// keyword/value pairs — and replaces each secret setting's value (the
// URL's password, and every setting Named picks out: password and
// sslpassword are pgx's; pgx sends any other to the server). It returns
// the passwords it replaced; ok is false when dsn follows neither form.
func Postgres(dsn string) (out string, passwords []string, ok bool) {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		return hideURL(dsn)
	}
	return keywordValue(dsn)
}

// hideURL replaces the password of a URL's user information and the values
// of the query parameters Named picks out, and returns the
// passwords it replaced; ok is false when s is not a URL.
func hideURL(s string) (out string, passwords []string, ok bool) {
	u, err := url.Parse(s)
	if err != nil {
		return "", nil, false
	}
	if pw, ok := u.User.Password(); ok {
		passwords = append(passwords, pw)
		u.User = url.UserPassword(u.User.Username(), Redacted)
	}
	q := u.Query()
	changed := false
	for k, vs := range q {
		if Named(k) {
			passwords = append(passwords, vs...)
			q.Set(k, Redacted)
			changed = true
		}
	}
	if changed {
		u.RawQuery = q.Encode()
	}
	return u.String(), passwords, true
}

// Endpoint hides the password of an etcd endpoint given as a URL with
// user information, and the secret parameters of its query; host:port
// carries neither.
func Endpoint(s string) (out string, passwords []string, ok bool) {
	if !strings.ContainsAny(s, "@?") {
		return s, nil, true
	}
	return hideURL(s)
}

// pgSpace is the white space of pgx's keyword/value grammar.
const pgSpace = " \t\n\r\v\f"

// keywordValue walks keyword=value pairs with pgx's grammar (a value is
// bare, with backslash escapes, or single-quoted) and replaces the value
// of each secret keyword; ok is false when s does not follow the grammar,
// or a keyword is not a word. pgx takes "app:pw host" of "app:pw host=db"
// as a keyword, sends it to the server as a setting, and the server's
// refusal quotes it: such a DSN is refused before it is dialed, and every
// word of it that could be a password is returned (guessed).
func keywordValue(s string) (out string, passwords []string, ok bool) {
	var b strings.Builder
	for rest := s; len(rest) > 0; {
		eq := strings.IndexByte(rest, '=')
		if eq < 0 {
			if strings.Trim(rest, pgSpace) == "" {
				break
			}
			return "", guessed(s), false
		}
		key := strings.Trim(rest[:eq], pgSpace)
		if !isKeyword(key) {
			return "", guessed(s), false
		}
		b.WriteString(rest[:eq+1])
		rest = rest[eq+1:]
		lead := len(rest) - len(strings.TrimLeft(rest, pgSpace))
		b.WriteString(rest[:lead])
		rest = rest[lead:]
		n, val, ok := pgValue(rest)
		if !ok {
			return "", guessed(s), false
		}
		if Named(key) {
			passwords = append(passwords, val)
			b.WriteString(Redacted)
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

// isKeyword reports whether key can name a setting: letters, digits and
// "_", "." or "-" (a custom server setting has a dot), and no space.
func isKeyword(key string) bool {
	if key == "" {
		return false
	}
	return strings.IndexFunc(key, func(r rune) bool {
		return (r < 'a' || r > 'z') && (r < 'A' || r > 'Z') && (r < '0' || r > '9') && !strings.ContainsRune("_.-", r)
	}) < 0
}

// guessed returns what could be a password in a DSN that could not be
// read: each white-space separated word, and what follows its first ":"
// or "=", with any quotes around it. Remembering too much only hides
// words of the messages about that DSN; too little could print a password.
func guessed(s string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(s, func(r rune) bool { return strings.ContainsRune(pgSpace, r) }) {
		out = append(out, w, strings.Trim(w, "'"))
		if i := strings.IndexAny(w, ":="); i >= 0 {
			out = append(out, w[i+1:], strings.Trim(w[i+1:], "'"))
		}
	}
	return out
}
