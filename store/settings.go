package store

import (
	"cmp"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"time"
)

// Settings are what a row needs to check and open its store: the
// registry section of firn's configuration with what its command adds.
// cmd/firn/internal/config maps its sections here in one function.
type Settings struct {
	Store string // the kind's name
	// Section is the configuration section these come from, which
	// FieldError names: "registry" (empty), "segments",
	// "segments.stores[1]".
	Section string
	// Flags names the command-line flag of a field path, such as
	// "ledger-dsn" for "ledger.dsn", or "" for a field without one (the
	// caller's configuration knows its flags); nil: the registry's, the
	// key itself (--dsn).
	Flags       func(field string) string
	DataDir     string
	Endpoints   []string // a comma inside one separates endpoints too
	DSN         string
	Namespace   string
	Table       string // the node table
	DialTimeout time.Duration
	ZooKeeper   ZooKeeper
	Segments    Segments
	// MustExist refuses a data directory that does not exist, rather
	// than create it.
	MustExist bool
	// StateHome and Home are the user's $XDG_STATE_HOME and home
	// directory, which choose the local store's default directory: the
	// caller reads the environment.
	StateHome, Home string
	// Log receives what a store's background readers report.
	Log *slog.Logger
	// Embedded says the store is opened by an application's process, one
	// of a fleet on one database (package ids), rather than by firn's
	// own commands. A SQL store then keeps no connection open between
	// its statements (sqlstore.Embed): a fleet then costs the database
	// the connections in use at one moment, not one per process, and
	// starts past the database's connection limit.
	Embedded bool
}

// ZooKeeper are the settings of a ZooKeeper session.
type ZooKeeper struct {
	SessionTimeout, RetryPause time.Duration
	// DigestFile holds user:password; Digest is the same from the
	// variable DigestVar names (the caller reads the environment).
	DigestFile, Digest, DigestVar string
	TLSCA, TLSCert, TLSKey        string
}

// TLS reports whether the ZooKeeper connection is TLS.
func (z ZooKeeper) TLS() bool { return z.TLSCA != "" || z.TLSCert != "" || z.TLSKey != "" }

// Segments is the segment table a database holds.
type Segments struct {
	Format     string // leaf, tinyid or set
	Table      string
	Set        string
	TokenTable string
	// Tokens asks the segment opener for a reader of Tinyid's token
	// table (Conn.Tokens).
	Tokens bool
}

// Field is the configuration path of the setting key in the settings'
// section: Field("dsn") is registry.dsn.
func (s Settings) Field(key string) string { return cmp.Or(s.Section, "registry") + "." + key }

// Flag is the setting key of the settings' section as the user gives it
// on the command line, for advice: Flag("dsn") is --dsn in the registry
// section, --ledger-dsn in the ledger's; a field with no flag (in
// segments.stores[1], set in the configuration file only) is its key
// there, "dsn", which the caller's message puts in its section.
func (s Settings) Flag(key string) string {
	if s.Flags == nil {
		return "--" + strings.ReplaceAll(key, "_", "-")
	}
	if f := s.Flags(s.Field(key)); f != "" {
		return "--" + f
	}
	return key
}

// EndpointList is the endpoints, a comma inside one setting separating
// endpoints too, as on the command line.
func (s Settings) EndpointList() []string {
	if joined := strings.Join(s.Endpoints, ","); joined != "" {
		return strings.Split(joined, ",")
	}
	return nil
}

// Missing is the first setting k requires (Kind.Requires) that s leaves
// empty, or "": a check that reads nothing but the settings, for a
// command that validates a configuration it does not open.
func (s Settings) Missing(k Kind) string {
	for _, key := range k.Requires {
		if key == "endpoints" && len(s.EndpointList()) == 0 || key == "dsn" && s.DSN == "" {
			return key
		}
	}
	return ""
}

// DefaultDialTimeout and MaxDialTimeout bound the wait for a store's
// first answer.
const (
	DefaultDialTimeout = 5 * time.Second
	MaxDialTimeout     = 10 * time.Minute
)

// CheckDialTimeout refuses a dial timeout that is not above 0 or is past
// MaxDialTimeout: the one rule every command applies.
func CheckDialTimeout(d time.Duration) error {
	if d <= 0 || d > MaxDialTimeout {
		return fmt.Errorf("%s: want a duration above 0, at most %s, such as 5s", d, MaxDialTimeout)
	}
	return nil
}

// CheckDialTimeout refuses the settings' dial timeout as the package's
// CheckDialTimeout does, naming the setting.
func (s Settings) CheckDialTimeout() error {
	if err := CheckDialTimeout(s.DialTimeout); err != nil {
		return Fieldf(s.Field("dial_timeout"), "%s %s", s.Flag("dial_timeout"), err)
	}
	return nil
}

// CheckDataDir refuses a data directory that is not an absolute path, or
// one given with a store that keeps none: the one rule every command
// applies. A relative one would name another directory — another lock,
// other segment counters — from another working directory. With etcd or SQL nothing is kept
// there, and a command given the directory a server was started with
// would open a local store of its own beside that server's registry.
// Empty is the user's default, which is absolute.
func CheckDataDir(store, dir string) error {
	k, _ := Lookup(store)
	switch {
	case dir == "":
		return nil
	case !k.DataDir:
		return fmt.Errorf("%q: only the %s store keeps a data directory; with store %s nothing is kept there: remove it (firn next and firn tag reach a running server with --server URL)", dir, Names(func(k Kind) bool { return k.DataDir }), store)
	case !filepath.IsAbs(dir):
		return fmt.Errorf("%q is relative: give an absolute path, such as /var/lib/firn (a relative one is another directory, with another lock and other segment counters, from elsewhere)", dir)
	}
	return nil
}
