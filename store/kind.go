package store

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/firn-id/firn/internal/secret"
	"github.com/firn-id/firn/nodeid"
	"github.com/firn-id/firn/segment"
)

// A Kind is one kind of store, one row of the table: its name, its
// words for help and messages, what it holds, and the functions that
// check its settings and open it. A store's package registers its row
// in init; adding a store is that row and its package, nothing else.
type Kind struct {
	Name    string // as --store and registry.store name it
	Title   string // as prose names it: "PostgreSQL"
	Summary string // for --store's help
	// Rank orders the table in help and messages (lowest first), so the
	// list reads the same whatever order the packages register in.
	Rank int
	// Default marks the store used when the configuration names none.
	Default bool
	// DataDir says the store keeps its state in a data directory
	// (registry.data_dir); no other kind takes one.
	DataDir bool
	// Reserves says its node store keeps a reservation of its own
	// (nodeid.Reserver), which a takeover records its reserved nodes in.
	Reserves bool
	// Sites says its node store keeps a namespace record firn can read
	// and replace (nodeid.Recorder): it can be a site's registry, and a
	// ledger of site values.
	Sites bool
	// Ledgers says it can hold the ledger of site values: it keeps what
	// it confirmed, and takes no credentials the ledger section cannot
	// give (ZooKeeper's digest).
	Ledgers bool
	// Segments says the store holds segment counters beside node IDs.
	// One that holds none leaves segment mode off unless a database of
	// their own is named.
	Segments bool
	// Database says the store is a database reached by a DSN, which can
	// also hold the segment table alone (segments.store,
	// segments.stores).
	Database bool
	// Requires lists the settings the store cannot be opened without,
	// by their key in the registry section: "endpoints", "dsn"
	// (Settings.Missing).
	Requires []string
	// Namespace spells the namespace called name as the kind keeps it:
	// etcd as a key prefix ("/firn/NAME/"), ZooKeeper as a path
	// ("/firn/NAME"); nil keeps the name as it is (the value of a SQL
	// namespace column). Namespace (the function) applies it.
	Namespace func(name string) string

	// Check refuses, without I/O (but reading the files the settings
	// name), what Open would refuse before it dials; errors are
	// *FieldError. Open runs only after it passed.
	Check func(Settings) error
	// Open connects within the settings' dial timeout: a store that does
	// not answer is an *UnreachableError naming its address.
	Open func(context.Context, Settings) (*Conn, error)
	// OpenDB, for a store reached by a DSN, opens and pings the database
	// alone, as Open does: for a command that reads another system's
	// tables in it.
	OpenDB func(context.Context, Settings) (*sql.DB, error)
	// Describe, when set, names the store for messages in place of
	// "NAME namespace NS": the local store by its directory.
	Describe func(Settings) string
	// Redact, for a store reached by a DSN, reads dsn as its driver does
	// and returns it with every password hidden, and the passwords it
	// found; ok false when the driver cannot read it.
	Redact func(dsn string) (out string, passwords []string, ok bool)
	// Answered, when set, reports whether err is the store's own answer
	// (an error number of its server) rather than a failed connection.
	Answered func(err error) bool
	// Schema, when set, is what the store creates, from the settings
	// alone, for firn schema; SchemaOf names it ("its znodes"). A kind
	// without one is a SQL database, whose tables firn schema prints by
	// dialect.
	Schema   func(Settings) (string, error)
	SchemaOf string
}

// Conn is one open connection to a store: its node store, its segment
// store over the same connection, and what closes it.
type Conn struct {
	Nodes nodeid.Store
	// Segments opens the segment table over the connection; nil for a
	// store that holds none (Kind.Segments false).
	Segments func() (segment.Store, error)
	// Tokens is set by Segments when Settings.Segments.Tokens asked for
	// a reader of the store's own tokens (sqlstore's TinyidTokens) and
	// the table has them; the caller starts and closes it.
	Tokens any
	Close  func() error
}

var (
	mu    sync.RWMutex
	kinds []Kind
)

// Register adds a row to the table. It panics, as sql.Register does, if
// the name is empty or taken, or the row cannot check or open.
func Register(k Kind) {
	mu.Lock()
	defer mu.Unlock()
	switch {
	case k.Name == "" || k.Check == nil || k.Open == nil:
		panic(fmt.Sprintf("store: Register of %q without a name, Check or Open", k.Name))
	case slices.ContainsFunc(kinds, func(o Kind) bool { return o.Name == k.Name }):
		panic("store: Register called twice for " + k.Name)
	}
	kinds = append(kinds, k)
	slices.SortStableFunc(kinds, func(a, b Kind) int { return cmp.Or(cmp.Compare(a.Rank, b.Rank), strings.Compare(a.Name, b.Name)) })
}

// Lookup returns the row of the store named name.
func Lookup(name string) (Kind, bool) {
	mu.RLock()
	defer mu.RUnlock()
	i := slices.IndexFunc(kinds, func(k Kind) bool { return k.Name == name })
	if i < 0 {
		return Kind{}, false
	}
	return kinds[i], true
}

// Kinds lists the registered rows in their rank order.
func Kinds() []Kind {
	mu.RLock()
	defer mu.RUnlock()
	return slices.Clone(kinds)
}

// Names lists the registered kinds for messages, "local, etcd, postgres
// or mysql"; with keep, only the kinds it keeps.
func Names(keep func(Kind) bool) string {
	var names []string
	for _, k := range Kinds() {
		if keep == nil || keep(k) {
			names = append(names, k.Name)
		}
	}
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// IsDatabase keeps the kinds reached by a DSN, for Names.
func IsDatabase(k Kind) bool { return k.Database }

// Default is the name of the store used when none is named; "" when no
// registered kind is marked Default.
func Default() string {
	for _, k := range Kinds() {
		if k.Default {
			return k.Name
		}
	}
	return ""
}

// Help is one line per kind for --store's help, each after indent.
func Help(indent string) string {
	var b strings.Builder
	for _, k := range Kinds() {
		b.WriteString(indent + k.Name + ": " + k.Summary + "\n")
	}
	return b.String()
}

// Check refuses, without I/O, every setting Open would refuse before it
// dials: a kind that is not registered, a data directory given where
// none is kept, and the kind's own rules.
func Check(s Settings) error {
	k, ok := Lookup(s.Store)
	if !ok {
		return Fieldf(s.Field("store"), "%s %q: want %s", s.Flag("store"), s.Store, Names(nil))
	}
	if err := CheckDataDir(s.Store, s.DataDir); err != nil {
		return Fieldf(s.Field("data_dir"), "data directory (--data-dir, FIRN_REGISTRY_DATA_DIR or registry.data_dir) %s", err)
	}
	return k.Check(s)
}

// Open checks the settings as Check does and opens the store they name.
func Open(ctx context.Context, s Settings) (*Conn, error) {
	if err := Check(s); err != nil {
		return nil, err
	}
	k, _ := Lookup(s.Store)
	return k.Open(ctx, s)
}

// DefaultName is the name of the namespace an empty namespace setting
// stands for, spelled as each kind keeps it (Namespace).
const DefaultName = "default"

// Namespace is the namespace called name in the form the store kind
// keeps (Kind.Namespace): the one rule for every namespace firn names
// itself — the registry's default, the ledger's — so that each is one
// the kind's own check accepts.
func Namespace(kind, name string) string {
	if k, ok := Lookup(kind); ok && k.Namespace != nil {
		return k.Namespace(name)
	}
	return name
}

// Describe names the store for messages: "etcd namespace "/firn/ids/"",
// the local store by its data directory.
func Describe(s Settings) string {
	k, ok := Lookup(s.Store)
	if ok && k.Describe != nil {
		return k.Describe(s)
	}
	ns := cmp.Or(s.Namespace, Namespace(s.Store, DefaultName))
	return fmt.Sprintf("%s namespace %q", s.Store, ns)
}

// Redact returns value with its password replaced by REDACTED. kind is a
// store's name for a DSN (a name no row reads as a DSN tries every row
// that does) or "endpoint" for an etcd or ZooKeeper endpoint. The value
// is read as its driver reads it. Each password found is remembered so
// that secret.Scrub hides it in later messages. A value that cannot be
// read, or whose redaction still contains a password, is replaced whole:
// firn fails closed. Config print, errors and logs all go through here.
func Redact(kind, value string) string {
	if value == "" {
		return ""
	}
	var out string
	var passwords []string
	ok := false
	if kind == "endpoint" {
		out, passwords, ok = secret.Endpoint(value)
	} else if k, found := Lookup(kind); found && k.Redact != nil {
		out, passwords, ok = k.Redact(value)
	} else { // a DSN given to another store: hide it whatever it is
		for _, k := range Kinds() {
			if k.Redact == nil {
				continue
			}
			if out, passwords, ok = k.Redact(value); ok {
				break
			}
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
