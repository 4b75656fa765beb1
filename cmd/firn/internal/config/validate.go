package config

import (
	"errors"
	"fmt"
	"net"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/firn-id/firn/nodeid"
	"github.com/firn-id/firn/segment"
	"github.com/firn-id/firn/server"
	"github.com/firn-id/firn/sqlstore"
	"github.com/firn-id/firn/store"
	"github.com/firn-id/firn/zkstore"
)

// DefaultDialTimeout and MaxDialTimeout bound the wait for a store's
// first answer (the store table's bounds).
const (
	DefaultDialTimeout = store.DefaultDialTimeout
	MaxDialTimeout     = store.MaxDialTimeout
)

// CheckDataDir refuses a data directory that is not an absolute path, or
// one given with a store that keeps none: the one rule every command
// applies (store.CheckDataDir).
func CheckDataDir(kind, dir string) error { return store.CheckDataDir(kind, dir) }

// CheckDialTimeout refuses a dial timeout that is not above 0 or is past
// MaxDialTimeout: the one rule every command applies
// (store.CheckDialTimeout).
func CheckDialTimeout(d time.Duration) error { return store.CheckDialTimeout(d) }

var nodePattern = regexp.MustCompile(`^(derived|[0-9]+(,[0-9]+)*)$`)

// AddressPlaceholder stands for the host of http.listen in a
// configuration firn writes for its reader to complete (firn migrate
// check's); Validate refuses it, saying what to put there.
const AddressPlaceholder = "<ADDRESS>"

// Validate checks every setting, in the one place they are checked: the
// same for firn serve and firn config check. The store settings are
// checked by the store table's rows (package store), which the command
// registers by importing the stores' packages. The layout and the files named are checked
// when they are read into the values firn runs with (Layout.Snowflake,
// Opaque.Permutation and TagPermutations), after these checks.
func (c *Config) Validate() error {
	fail := func(field, format string, args ...any) error {
		return &FieldError{Field: field, Reason: fmt.Sprintf(format, args...)}
	}
	if strings.Contains(c.HTTP.Listen, AddressPlaceholder) {
		return fail("http.listen", "%q: replace %s with the address this server listens on for its clients: 0.0.0.0 for every interface, "+
			"or one address of this machine they reach (such as 10.0.0.5)", c.HTTP.Listen, AddressPlaceholder)
	}
	if err := checkAddr(c.HTTP.Listen); err != nil {
		return fail("http.listen", "%q %s, such as 127.0.0.1:8080", c.HTTP.Listen, err)
	}
	if l := c.GRPC.Listen; l != "off" {
		if err := checkAddr(l); err != nil {
			return fail("grpc.listen", "%q %s, such as 127.0.0.1:9090, or off", l, err)
		}
		if sameListener(c.HTTP.Listen, l) {
			return fail("grpc.listen", "%q overlaps the address of http.listen (%q): each listener needs a port of its own, or port 0 for any free one", l, c.HTTP.Listen)
		}
	}
	if c.HTTP.MaxBatch < 1 || c.HTTP.MaxBatch > server.MaxBatchLimit {
		return fail("http.max_batch", "%d: want 1 to %d", c.HTTP.MaxBatch, server.MaxBatchLimit)
	}
	if (c.HTTP.TLSCert == "") != (c.HTTP.TLSKey == "") {
		return fail("http.tls_cert", "set both tls_cert and tls_key, or neither")
	}
	if err := c.validateAuth(); err != nil {
		return err
	}
	if err := c.validateRegistry(); err != nil {
		return err
	}
	if f := c.Segments.Format; !slices.Contains([]string{"leaf", "tinyid", "set"}, f) {
		return fail("segments.format", "%q: want leaf, tinyid or set", f)
	}
	databases := store.Names(store.IsDatabase)
	switch sg := c.Segments; {
	case isKind(sg.Store, func(k store.Kind) bool { return !k.Segments }):
		k, _ := store.Lookup(sg.Store)
		return fail("segments.store", "%q: %s holds no segment counters; name a database for them, %s (with segments.dsn), beside a %s registry", sg.Store, k.Title, databases, k.Title)
	case sg.Store != "" && !isKind(sg.Store, store.IsDatabase):
		return fail("segments.store", "%q: want %s (a database of its own for the segment table), or empty for the registry's store", sg.Store, databases)
	case sg.Store != "" && sg.DSN == "":
		return fail("segments.dsn", "segments.store %s needs a DSN", sg.Store)
	case sg.Store == "" && sg.DSN != "":
		return fail("segments.store", "segments.dsn is set: name its kind, %s", databases)
	case sg.Store != "" && len(sg.Stores) > 0:
		return fail("segments.store", "give one database of its own (segments.store) or a set (segments.stores), not both")
	}
	var bad *sqlstore.TableNameError
	if err := sqlstore.CheckTable(c.Segments.TokenTable); errors.As(err, &bad) {
		return fail("segments.token_table", "%s, such as tiny_id_token", bad.Reason())
	} else if err != nil {
		return err
	}
	if err := CheckTagList("segments.javascript_safe", c.Segments.JavaScriptSafe); err != nil {
		return err
	}
	if err := c.Opaque.Validate(); err != nil {
		return err
	}
	if len(c.Opaque.Tags) > 0 && c.sqlSegments() && c.Segments.Format != "set" {
		return &FieldError{Field: "opaque.tags", Reason: fmt.Sprintf("segments.format %s: Leaf's and Tinyid's tables have no column to record a tag's permutation; "+
			"use firn's own table (segments.format set), or the local store or etcd", c.Segments.Format)}
	}
	if err := c.Opaque.CheckNode(c.Registry.Node); err != nil {
		return err
	}
	if c.Opaque.Snowflake && !c.Snowflake.Enabled {
		return &FieldError{Field: "opaque.snowflake", Reason: "snowflake mode is off (snowflake.enabled false): nothing to make opaque"}
	}
	if _, err := c.Snowflake.Policy(); err != nil {
		return err
	}
	if !slices.Contains([]string{"debug", "info", "warn", "error"}, c.Log.Level) {
		return fail("log.level", "%q: want debug, info, warn or error", c.Log.Level)
	}
	if !slices.Contains([]string{"auto", "text", "json"}, c.Log.Format) {
		return fail("log.format", "%q: want auto, text or json", c.Log.Format)
	}
	return c.validateStores()
}

// checkAddr refuses a listen address that net.Listen would refuse for
// its form, before any listener is bound: not host:port, a port that is
// not a number from 0 (any free port) to 65535, or a host that is
// neither an IP address nor a host name; and a placeholder host in angle
// brackets (<this-host>:8080), with a message of its own.
func checkAddr(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return errors.New("is not host:port")
	}
	if len(host) > 2 && host[0] == '<' && host[len(host)-1] == '>' {
		// An example configuration names the address its reader must
		// choose, rather than the wildcard, which would expose a
		// machine's every interface to whoever copied it.
		return fmt.Errorf("names %s, a placeholder: replace it with the address this machine serves on (its IP address or host name), or 127.0.0.1 for loopback only", host)
	}
	n, err := strconv.ParseUint(port, 10, 64)
	switch {
	case err != nil && strings.Trim(port, "0123456789") == "" && port != "":
		return fmt.Errorf("has port %s, past 65535: want host:port with a port from 0 to 65535", port)
	case err != nil:
		return fmt.Errorf("has port %q, not a number: want host:port with a port from 0 to 65535", port)
	case n > 65535:
		return fmt.Errorf("has port %d, past 65535: want host:port with a port from 0 to 65535", n)
	}
	if host != "" && net.ParseIP(host) == nil && !hostName.MatchString(host) {
		return fmt.Errorf("has host %q, neither an IP address nor a host name: want host:port", host)
	}
	return nil
}

// sameListener reports whether binding b after a (both checked by
// checkAddr) would fail for a port already in use: one port other than 0
// on one host, or on any host when either is the wildcard (empty,
// 0.0.0.0 or ::), which Go binds for both IPv4 and IPv6.
func sameListener(a, b string) bool {
	ha, pa, _ := net.SplitHostPort(a)
	hb, pb, _ := net.SplitHostPort(b)
	na, _ := strconv.ParseUint(pa, 10, 16)
	nb, _ := strconv.ParseUint(pb, 10, 16)
	if na == 0 || na != nb {
		return false
	}
	wildcard := func(h string) bool { ip := net.ParseIP(h); return h == "" || (ip != nil && ip.IsUnspecified()) }
	return wildcard(ha) || wildcard(hb) || strings.EqualFold(ha, hb) || (net.ParseIP(ha) != nil && net.ParseIP(ha).Equal(net.ParseIP(hb)))
}

// hostName is a DNS name: dot-separated labels of letters, digits and
// inner hyphens.
var hostName = regexp.MustCompile(`^([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)*[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.?$`)

// sqlSegments reports whether segment counters live in a SQL table.
func (c *Config) sqlSegments() bool {
	return c.Segments.Store != "" || len(c.Segments.Stores) > 0 || isKind(c.Registry.Store, store.IsDatabase)
}

// isKind reports whether the store table has a row named name that keep
// keeps.
func isKind(name string, keep func(store.Kind) bool) bool {
	k, ok := store.Lookup(name)
	return ok && keep(k)
}

// CheckTagList checks a list of tags a setting names: each a tag any
// store may hold, or "*" alone for every tag. An entry holding "*" with
// anything else is refused: a reader of "sec*" takes it for a pattern,
// and it would name only the tag of that literal name.
func CheckTagList(field string, tags []string) error {
	for i, tag := range tags {
		if tag == "*" {
			continue
		}
		if strings.Contains(tag, "*") {
			return &FieldError{Field: field, Reason: fmt.Sprintf("entry %d, %q: a pattern; only \"*\" alone, for every tag, is one: list the tags by name", i, tag)}
		}
		if err := segment.CheckTag(tag, segment.Limits{Tag: segment.LongestTag}); err != nil {
			return &FieldError{Field: field, Reason: fmt.Sprintf("entry %d: %s; or \"*\" for every tag", i, err)}
		}
	}
	return nil
}

// validateAuth checks the tokens and anonymous grants with the server's
// own rules (server.NewAuth), naming the field at fault; a token
// without a scope, which the server would take, and an anonymous rate of
// 0, which the server reads as its default, are refused here as
// mistakes.
func (c *Config) validateAuth() error {
	if c.Auth.AnonymousRate == 0 {
		return &FieldError{Field: "auth.anonymous_rate", Reason: fmt.Sprintf("0: want requests per second per client address above 0 (default %d)", server.DefaultAnonymousRate)}
	}
	for i, t := range c.Auth.Tokens {
		if len(t.Scopes) == 0 {
			return &FieldError{Field: fmt.Sprintf("auth.tokens[%d].scopes", i), Reason: "none: a token needs at least one scope"}
		}
	}
	_, err := c.Auth.New()
	var te *server.TokenError
	switch {
	case errors.As(err, &te) && te.Index < 0:
		return &FieldError{Field: "auth." + te.Field, Reason: te.Reason}
	case errors.As(err, &te):
		return &FieldError{Field: fmt.Sprintf("auth.tokens[%d].%s", te.Index, te.Field), Reason: te.Reason}
	}
	return err
}

// validateRegistry checks where node IDs live: the store by the store
// table, and what its row requires. The rest of a store's rules — a DSN
// its driver can read, the files it names, the variable of ZooKeeper's
// digest — are its row's, which the command applies when it opens or
// checks the stores (backend.Options.Check): firn config print shows a
// configuration those rules refuse.
func (c *Config) validateRegistry() error {
	fail := func(field, format string, args ...any) error {
		return &FieldError{Field: field, Reason: fmt.Sprintf(format, args...)}
	}
	r := c.Registry
	k, ok := store.Lookup(r.Store)
	if !ok {
		return fail("registry.store", "%q: want %s", r.Store, store.Names(nil))
	}
	if key := StoreSettings(r, c.ZooKeeper, c.Segments).Missing(k); key != "" {
		return fail("registry."+key, "--store %s needs --%s", r.Store, key)
	}
	switch {
	case r.Node != "" && !nodePattern.MatchString(r.Node):
		return fail("registry.node", "%q: want a number, one per node field (3,17), or derived", r.Node)
	case r.Node == "derived" && !r.AcceptCollisionRisk:
		return fail("registry.accept_collision_risk", "a derived node cannot see a second host with the same address bits: set it to true to accept that")
	case r.LeaseTTL < nodeid.MinTTL || r.LeaseTTL > nodeid.MaxTTL:
		return fail("registry.lease_ttl", "%s: want %s to %s", r.LeaseTTL, nodeid.MinTTL, nodeid.MaxTTL)
	}
	if err := CheckDialTimeout(r.DialTimeout); err != nil {
		return fail("registry.dial_timeout", "%s", err)
	}
	if err := CheckDataDir(r.Store, r.DataDir); err != nil {
		return fail("registry.data_dir", "%s", err)
	}
	return c.ZooKeeper.validate()
}

// validate checks the ZooKeeper settings that stand alone; zkstore's
// rules check them again with the servers and the namespace.
func (z ZooKeeper) validate() error {
	if err := zkstore.CheckSessionTimeout(z.SessionTimeout); err != nil {
		return &FieldError{Field: "zookeeper.session_timeout", Reason: zkReason(err)}
	}
	if err := zkstore.CheckRetryPause(z.RetryPause); err != nil {
		return &FieldError{Field: "zookeeper.retry_pause", Reason: zkReason(err)}
	}
	if (z.TLSCert == "") != (z.TLSKey == "") {
		return &FieldError{Field: "zookeeper.tls_cert", Reason: "set both tls_cert and tls_key, or neither"}
	}
	return nil
}

// zkReason is what zkstore says is wrong with a setting's value, without
// its name for the setting: the field names it.
func zkReason(err error) string {
	var ce *zkstore.ConfigError
	if errors.As(err, &ce) {
		return ce.Reason
	}
	return err.Error()
}

// validateStores checks a set of segment stores.
func (c *Config) validateStores() error {
	stores := c.Segments.Stores
	switch {
	case len(stores) == 0:
		return nil
	case len(stores) == 1:
		return &FieldError{Field: "segments.stores", Reason: "one store: a set needs two or more (one store is the registry's own)"}
	case c.Segments.Format != "tinyid" && c.Segments.Format != "set":
		return &FieldError{Field: "segments.format", Reason: fmt.Sprintf("%q with segments.stores: want tinyid or set, whose rows record their residue class (Leaf's leaf_alloc has no such columns)", c.Segments.Format)}
	}
	for i, st := range stores {
		field := fmt.Sprintf("segments.stores[%d]", i)
		switch {
		case !isKind(st.Store, store.IsDatabase):
			return &FieldError{Field: field + ".store", Reason: fmt.Sprintf("%q: want %s", st.Store, store.Names(store.IsDatabase))}
		case st.DSN == "":
			return &FieldError{Field: field + ".dsn", Reason: "empty: name the database"}
		}
		for j := range i {
			if stores[j] == st {
				return &FieldError{Field: field, Reason: fmt.Sprintf("the same database as segments.stores[%d]: two classes in one table would share a row", j)}
			}
		}
	}
	return nil
}
