// Package config is firn's configuration, for serve and every other
// command: one typed struct whose defaults come from the packages that
// own them, overlaid by one YAML file, then FIRN_… environment variables,
// then command-line flags bound onto the same fields, and validated in
// one place with errors that name the field, its variable and its flag.
// A command other than serve takes the settings it uses (For) and binds
// only their flags (Register). The sections read themselves into the
// values firn runs with — Layout into a snowflake.Layout, Opaque into the
// permutations of its ID spaces — so each rule lives here once.
package config

import (
	"bytes"
	"cmp"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"maps"
	"net"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/firn-id/firn/internal/secret"
	"github.com/firn-id/firn/nodeid"
	"github.com/firn-id/firn/segment"
	"github.com/firn-id/firn/server"
	"github.com/firn-id/firn/snowflake"
	"github.com/firn-id/firn/sqlstore"
	"github.com/firn-id/firn/store"
	"github.com/firn-id/firn/zkstore"
)

// Config is the configuration of firn serve, typed: Default fills every
// default, Load lays a file and the environment over it, For keeps what
// another command uses, Register binds the command line's flags onto the
// same fields, and Validate checks the result in one place.
type Config struct {
	HTTP      HTTP      `yaml:"http"`
	GRPC      GRPC      `yaml:"grpc"`
	Layout    Layout    `yaml:"layout"`
	Registry  Registry  `yaml:"registry"`
	Segments  Segments  `yaml:"segments"`
	ZooKeeper ZooKeeper `yaml:"zookeeper"`
	Snowflake Snowflake `yaml:"snowflake"`
	Auth      Auth      `yaml:"auth"`
	Opaque    Opaque    `yaml:"opaque"`
	Log       Log       `yaml:"log"`
}

// Log is how firn serve logs.
type Log struct {
	Level  string `yaml:"level" flag:"log-level" arg:"L" help:"debug, info, warn or error"`                                // debug, info (default), warn, error
	Format string `yaml:"format" flag:"log-format" arg:"F" help:"auto (text on a terminal, JSON otherwise), text or json"` // auto (default: text on a terminal, else JSON), text, json
}

// Auth lists the bearer tokens and the anonymous grants. With neither,
// firn serve answers every request, and only on loopback. From the file
// only.
type Auth struct {
	Tokens []Token `yaml:"tokens" flag:"-" help:"bearer tokens, each a name, a secret or a secret_file (relative to this file), scopes (snowflake, status, admin, reveal, metrics, tag:NAME, tag:*, range:NAME, range:*) and a rate (requests per second; 0: unlimited); without tokens or anonymous scopes firn serve stays on loopback"`
	// Anonymous lists the scopes whose HTTP ID routes a request without
	// credentials may use (snowflake, tag:NAME, tag:*, range:NAME,
	// range:*; never admin): Leaf's and Tinyid's clients send none. It
	// lets firn serve listen off loopback without tokens; logged at
	// start.
	Anonymous []string `yaml:"anonymous" flag:"-" help:"scopes whose HTTP ID routes requests without credentials may use (snowflake, tag:NAME, tag:*, range:NAME, range:*; never admin, reveal or metrics), as Leaf's and Tinyid's clients send none; logged at start"`
	// AnonymousRate bounds the anonymous requests of one client address
	// per second: above 0, default server.DefaultAnonymousRate.
	AnonymousRate float64 `yaml:"anonymous_rate" flag:"-" help:"anonymous requests per second per client address (an IPv4 address, an IPv6 /64): above 0"`
	// StatusAnonymousOnLoopback grants the scope status (/v1/status, the
	// status page's data, and decoding; never admin or IDs) to requests
	// without credentials from a loopback address. Default false; logged
	// at start.
	StatusAnonymousOnLoopback bool `yaml:"status_anonymous_on_loopback" flag:"-" help:"true: requests without credentials from a loopback address hold the scope status (the status page's data, and decoding; never IDs or admin); logged at start"`
}

// New returns the server's checker of these tokens and anonymous grants,
// reading each token's secret_file.
func (a Auth) New() (*server.Auth, error) {
	tokens := make([]server.Token, len(a.Tokens))
	for i, t := range a.Tokens {
		s, err := t.secret(i)
		if err != nil {
			return nil, err
		}
		tokens[i] = server.Token{Name: t.Name, Secret: s, Scopes: t.Scopes, Rate: t.Rate}
	}
	return server.NewAuth(tokens, server.Anonymous{Scopes: a.Anonymous, Rate: a.AnonymousRate, StatusOnLoopback: a.StatusAnonymousOnLoopback})
}

// Token is one bearer token. Its secret is written in the file (Secret)
// or read from the file SecretFile names, relative to the configuration
// file's directory, so that the configuration itself holds no secret.
type Token struct {
	Name       string   `yaml:"name"`
	Secret     string   `yaml:"secret"`
	SecretFile string   `yaml:"secret_file"`
	Scopes     []string `yaml:"scopes"` // snowflake, admin, tag:NAME, tag:*
	Rate       float64  `yaml:"rate"`   // requests per second; 0: unlimited
}

// secret returns the token's secret: Secret, or SecretFile's content
// without its trailing line break. The file's name is never part of a
// message — a secret given where the name goes would be printed — and
// neither is its content.
func (t Token) secret(i int) (string, error) {
	field := fmt.Sprintf("auth.tokens[%d].secret_file", i)
	switch {
	case t.SecretFile == "":
		return t.Secret, nil
	case t.Secret != "":
		return "", &FieldError{Field: field, Reason: fmt.Sprintf("token %s has a secret and a secret_file: give one", t.Name)}
	}
	b, err := secret.ReadFile(t.SecretFile)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return "", &FieldError{Field: field, Reason: fmt.Sprintf("token %s: the file it names cannot be read: %s", t.Name, err)}
	}
	s := strings.TrimRight(string(b), "\r\n")
	if strings.TrimSpace(s) == "" {
		return "", &FieldError{Field: field, Reason: fmt.Sprintf("token %s: the file it names is empty: write the secret into it (openssl rand -hex 32)", t.Name)}
	}
	return s, nil
}

// Snowflake is snowflake mode: on or off, and its migration setting.
type Snowflake struct {
	// Enabled serves snowflake IDs (the default). Off, the server takes
	// no node and serves segments only (a Leaf database with Leaf's
	// privileges alone, say).
	Enabled bool `yaml:"enabled" flag:"snowflake" help:"serve snowflake IDs; false serves segments only: no node is taken (no node table is used) and snowflake routes answer 503 snowflake_off"`
	// Floor is the largest snowflake ID a previous system issued: firn
	// refuses to start if its first ID would not exceed it. In opaque mode
	// it is an opaque ID of the namespace, revealed with the key before it
	// is compared.
	Floor uint64 `yaml:"floor" flag:"floor" arg:"ID" help:"the largest snowflake ID a previous system issued: refuse to start unless the first ID exceeds it (in opaque mode an opaque ID of the namespace, revealed first)"`
	// JavaScriptSafe refuses to start unless every snowflake ID is below
	// 2^53, an exact JavaScript Number: a layout of at most 53 bits, such
	// as the js53 preset.
	JavaScriptSafe bool `yaml:"javascript_safe" flag:"javascript-safe" help:"refuse to start unless every snowflake ID is below 2^53 (a layout of at most 53 bits, such as the js53 preset)"`
	// Exhausted is what a node does when a tick's sequence runs out:
	// wait for the next tick (the default), or borrow the next ticks, up
	// to MaxBorrow ahead of the clock, then wait (uid-generator's way:
	// bursts keep their pace, and IDs then carry times up to MaxBorrow
	// later than the clock). Borrowed ticks stay inside the node's HWM.
	Exhausted string `yaml:"exhausted" flag:"exhausted" arg:"P" help:"when a tick's sequence runs out: wait for the next tick, or borrow the next ticks, at most {snowflake.max_borrow} ahead of the clock (IDs then carry later times; borrowed ticks stay inside the node's HWM)"`
	// MaxBorrow bounds how far ahead of the clock borrowing goes, rounded
	// down to whole ticks: above 0, at most snowflake.DefaultMaxStartAhead
	// (a restart finds the HWM at most that far ahead and starts without
	// --start-ahead); default snowflake.DefaultMaxBorrow. Used with
	// exhausted borrow only.
	MaxBorrow time.Duration `yaml:"max_borrow" flag:"max-borrow" help:"how far ahead of the clock borrowing goes, in whole ticks: above 0, at most {MaxStartAhead}"`
}

// Policy returns the generator's policy when a tick's sequence runs
// out, refusing an unknown one or a bound out of range: the checks of
// Validate, for every command that issues snowflake IDs.
func (s Snowflake) Policy() (snowflake.Policy, error) {
	p, err := snowflake.ParsePolicy(s.Exhausted)
	if err != nil {
		return p, &FieldError{Field: "snowflake.exhausted", Reason: fmt.Sprintf("%q: want wait or borrow", s.Exhausted)}
	}
	if s.MaxBorrow <= 0 || s.MaxBorrow > snowflake.DefaultMaxStartAhead {
		return p, &FieldError{Field: "snowflake.max_borrow", Reason: fmt.Sprintf("%s: want a duration above 0, at most %s, such as %s",
			s.MaxBorrow, snowflake.DefaultMaxStartAhead, snowflake.DefaultMaxBorrow)}
	}
	return p, nil
}

// HTTP is the listener.
type HTTP struct {
	Listen   string `yaml:"listen" flag:"http" arg:"ADDR" help:"the HTTP listen address, host:port (port 0: any free one); off loopback it needs a shared store or a static node, and {auth.tokens} or {auth.anonymous}"` // host:port, default 127.0.0.1:8080
	MaxBatch int    `yaml:"max_batch" flag:"max-batch" help:"the largest count of a batch request: 1 to {MaxBatchLimit}"`                                                                                                 // 1..server.MaxBatchLimit, default server.DefaultMaxBatch
	TLSCert  string `yaml:"tls_cert" flag:"tls-cert" path:"true" arg:"FILE" help:"a PEM certificate: with {http.tls_key}, serve HTTPS (and gRPC over TLS), read before any store is opened"`                              // PEM files: both or neither
	TLSKey   string `yaml:"tls_key" flag:"tls-key" path:"true" arg:"FILE" help:"the PEM key of {http.tls_cert}: both or neither"`
}

// GRPC is the gRPC listener; it shares the HTTP listener's TLS files.
type GRPC struct {
	Listen string `yaml:"listen" flag:"grpc" arg:"ADDR" help:"the gRPC listen address, host:port, or off: the service firn.v1.Firn of firnpb/firn.proto, with the HTTP listener's TLS files, on a port of its own; off loopback it needs {auth.tokens}"` // host:port, default 127.0.0.1:9090; "off": none
}

// Layout is the snowflake layout: a preset, then any part overridden.
type Layout struct {
	Preset       string `yaml:"preset" flag:"layout" arg:"NAME" help:"the preset the other layout settings override: {Presets}"`
	Epoch        string `yaml:"epoch" flag:"epoch" arg:"MS|RFC3339" help:"tick 0: Unix milliseconds (not seconds: 1767225600000), or a time such as 2026-01-01T00:00:00Z"`
	Tick         string `yaml:"tick" flag:"tick" arg:"DURATION" help:"tick length, a whole number of milliseconds: 1ms, 10ms, 1s (of microseconds, such as 10us, only to decode)"`
	TimeBits     string `yaml:"time_bits" flag:"time-bits" arg:"N" help:"width of the time part"`
	NodeBits     string `yaml:"node_bits" flag:"node-bits" arg:"N[,N...]" help:"widths of the node fields, most significant first"`
	NodeNames    string `yaml:"node_names" flag:"node-names" arg:"A[,B...]" help:"names of the node fields (default node, or node1,node2...)"`
	SequenceBits string `yaml:"sequence_bits" flag:"sequence-bits" arg:"N" help:"width of the sequence part"`
	Order        string `yaml:"order" flag:"order" arg:"A,B,C" help:"parts from the top bits down (default time,node,sequence)"`
}

// Registry is where node IDs, their HWMs and the segment counters live.
type Registry struct {
	Store               string   `yaml:"store" flag:"store" arg:"KIND" help:"where node IDs, their HWMs and segment counters live"` // local, etcd, postgres, mysql
	DataDir             string   `yaml:"data_dir" flag:"data-dir" arg:"DIR" help:"local: the data directory, an absolute path (default $XDG_STATE_HOME/firn, or ~/.local/state/firn); node IDs are the user's and the layout's, locked in the default's nodes/ whichever directory is given"`
	Endpoints           []string `yaml:"endpoints" flag:"endpoints" arg:"URLS" help:"etcd: comma-separated client URLs (http://127.0.0.1:2379); zookeeper: comma-separated servers (127.0.0.1:2181)"`
	DSN                 string   `yaml:"dsn" flag:"dsn" secret:"true" arg:"DSN" help:"postgres: postgres://user@host:5432/db?sslmode=disable; mysql: user:password@tcp(host:3306)/db, where a parameter that is no driver option is sent as SET, so only a few session variables are taken (docs/config.md); its password is redacted wherever firn shows it"`
	Namespace           string   `yaml:"namespace" flag:"namespace" arg:"NAME" help:"the set of nodes that must never collide: in SQL a value of the namespace column (default \"default\"), in etcd a key prefix (default /firn/default/), in ZooKeeper a path (default /firn/default)"`
	Table               string   `yaml:"table" flag:"table" arg:"NAME" help:"SQL: the node table (default firn_nodes)"`
	Node                string   `yaml:"node" flag:"node" arg:"N" help:"the node: one number, or one per node field, most significant first (twitter: 3,17); or derived, the low bits of the host's private IPv4 address (Sonyflake's way), which needs {registry.accept_collision_risk}. Default: the lowest node free in the store. firn serve's own: --config passes it to no other command"` // a number, one per field, or "derived"
	AcceptCollisionRisk bool     `yaml:"accept_collision_risk" flag:"accept-collision-risk" help:"acknowledge that a derived node cannot see a second host with the same address bits (required with {registry.node} derived)"`
	ReservedNodes       []uint64 `yaml:"reserved_nodes" flag:"reserved-nodes" arg:"N,M" help:"nodes never handed out by default (those a previous system's workers still hold during a migration)"`
	StartAhead          bool     `yaml:"start_ahead" flag:"start-ahead" help:"start at the stored HWM even if the clock is more than {MaxStartAhead} behind it (IDs then carry later times)"`
	// LeaseTTL is how long a claim outlives its last renewal:
	// nodeid.MinTTL to nodeid.MaxTTL, default nodeid.DefaultTTL.
	LeaseTTL time.Duration `yaml:"lease_ttl" flag:"lease-ttl" help:"how long a node's claim outlives its last renewal, {MinTTL} to {MaxTTL}: a dead process's node is free after it"`
	// DialTimeout is how long to wait for etcd or the database to answer
	// before reporting it unreachable: above 0, at most MaxDialTimeout;
	// default DefaultDialTimeout.
	DialTimeout time.Duration `yaml:"dial_timeout" flag:"dial-timeout" help:"how long to wait for etcd, ZooKeeper or the database to answer before reporting it unreachable: above 0, at most {MaxDialTimeout}"`
}

// ZooKeeper is how firn reaches a ZooKeeper ensemble, with registry.store
// zookeeper (its servers are registry.endpoints, its path
// registry.namespace). zkstore's own rules check the values
// (backend.Options.Check). Digest credentials come from DigestFile or
// the variable FIRN_ZOOKEEPER_DIGEST, never from a setting.
type ZooKeeper struct {
	// SessionTimeout is asked for by the sessions that hold no node (a
	// claim's session asks for registry.lease_ttl): zkstore's bounds,
	// default zkstore.DefaultSessionTimeout.
	SessionTimeout time.Duration `yaml:"session_timeout" flag:"zk-session-timeout" help:"zookeeper: the session timeout of sessions that hold no node, {MinSessionTimeout} to {MaxSessionTimeout}; a node's session asks for {registry.lease_ttl}"`
	// RetryPause is the pause between passes over the servers while none
	// answers: zkstore's bounds, default zkstore.DefaultRetryPause.
	RetryPause time.Duration `yaml:"retry_pause" flag:"zk-retry-pause" help:"zookeeper: the pause between passes over the servers while none answers, {MinRetryPause} to {MaxRetryPause}"`
	// DigestFile holds user:password, ZooKeeper's digest identity: every
	// znode firn creates is then that identity's alone.
	DigestFile string `yaml:"digest_file" flag:"zk-digest-file" path:"true" arg:"FILE" help:"zookeeper: a file holding user:password, the digest identity every znode firn creates is then restricted to (or the variable {DigestVar}; never a flag). It travels in clear unless the connection is TLS"`
	// TLSCA, TLSCert and TLSKey are PEM files: with any set, firn
	// connects to the servers' TLS port (secureClientPort), trusting
	// TLSCA (default: the system's roots), and presents TLSCert and
	// TLSKey (both or neither) when the servers ask for a client
	// certificate.
	TLSCA   string `yaml:"tls_ca" flag:"zk-tls-ca" path:"true" arg:"FILE" help:"zookeeper: connect to the servers' TLS port (secureClientPort), trusting this PEM CA (default: the system's roots)"`
	TLSCert string `yaml:"tls_cert" flag:"zk-tls-cert" path:"true" arg:"FILE" help:"zookeeper: connect over TLS and present this PEM client certificate when the servers ask for one, with {zookeeper.tls_key}"`
	TLSKey  string `yaml:"tls_key" flag:"zk-tls-key" path:"true" arg:"FILE" help:"the PEM key of {zookeeper.tls_cert}: both or neither"`
}

// TLS reports whether the ZooKeeper connection is TLS.
func (z ZooKeeper) TLS() bool { return z.TLSCA != "" || z.TLSCert != "" || z.TLSKey != "" }

// DigestVar is the variable that may hold ZooKeeper's digest credentials
// (user:password) in place of zookeeper.digest_file: never a setting, so
// config print cannot show it.
const DigestVar = "FIRN_ZOOKEEPER_DIGEST"

// Segments is where segment mode's counters live: by default the
// registry's own store, or a database of its own (node IDs from etcd,
// segments from Leaf's MySQL table, say), or a set of databases.
type Segments struct {
	// Store, when set, is a database (postgres or mysql) that holds the
	// segment table in place of the registry's store; DSN names it.
	Store  string `yaml:"store" flag:"segment-store" arg:"KIND" help:"postgres or mysql: the segment table lives in a database of its own, named by {segments.dsn}, not in {registry.store}'s (node IDs from etcd, segments from Leaf's MySQL table, say); empty: the registry's store"`
	DSN    string `yaml:"dsn" flag:"segment-dsn" secret:"true" arg:"DSN" help:"the database of {segments.store}, written as for {registry.dsn}"`
	Format string `yaml:"format" flag:"segments" arg:"FORMAT" help:"SQL: the segment table's format: leaf (Meituan Leaf's leaf_alloc), tinyid (Didi Tinyid's tiny_id_info) or set (firn's own firn_segments, whose rows name their store set)"` // leaf, tinyid, set
	Table  string `yaml:"table" flag:"segment-table" arg:"NAME" help:"SQL: the segment table (default by format)"`
	Set    string `yaml:"set" flag:"set" arg:"NAME" help:"with {segments.format} set: the store set this database belongs to"`
	// Local serves tags from the local data directory off loopback: this
	// machine alone serves them.
	Local bool `yaml:"local" flag:"local-segments" help:"off loopback on the local store, serve segment tags from the data directory anyway: this machine alone serves them (without it, segments are off there)"`
	// TokenTable is Tinyid's token table (format tinyid): Tinyid's
	// token= parameter is checked against it. Default tiny_id_token.
	TokenTable string `yaml:"token_table" flag:"token-table" arg:"NAME" help:"with {segments.format} tinyid: Tinyid's token table, against which token= is checked; re-read every minute, and on an unknown token at most once a second"`
	// CheckTokens, with format tinyid, checks token= against TokenTable
	// (default true): a table that cannot be read refuses to start.
	// false leaves Tinyid's routes to auth.tokens and auth.anonymous.
	CheckTokens bool `yaml:"check_tokens" flag:"check-tokens" help:"with {segments.format} tinyid, check token= against {segments.token_table} (a table that cannot be read refuses to start); false leaves Tinyid's routes to {auth.tokens} and {auth.anonymous}"`
	// JavaScriptSafe lists the tags (or "*" for all) that never issue an
	// ID above 2^53−1: past it they answer 503 tag_exhausted.
	JavaScriptSafe []string `yaml:"javascript_safe" flag:"javascript-safe-tags" arg:"T,U" help:"tags (\"*\": all) that never issue an ID above 2^53-1: past it they answer 503 tag_exhausted; an opaque one is permuted over 53 bits"`
	// Stores, two or more, serve every tag together in place of the
	// registry's store: store i issues the IDs congruent to i modulo
	// their number, so their order is part of the set. File only.
	Stores []SegmentStore `yaml:"stores" flag:"-" help:"two or more databases, each a store (postgres or mysql) and a DSN, serving every tag together in place of the registry's store, with format tinyid or set: store i issues the IDs congruent to i modulo their number, so their order is part of the set"`
}

// SegmentStore is one database of a set of segment stores.
type SegmentStore struct {
	Store string `yaml:"store"` // postgres or mysql
	DSN   string `yaml:"dsn" secret:"true"`
}

// FieldError names the field at fault, where it is set, and what to
// change.
type FieldError struct {
	Field  string // its YAML path, such as registry.store
	Reason string
}

func (e *FieldError) Error() string {
	if fileOnly(e.Field) {
		return fmt.Sprintf("%s (in the configuration file only): %s", e.Field, e.Reason)
	}
	if f := flagOf(e.Field); f != "" {
		return fmt.Sprintf("%s (env %s, flag --%s): %s", e.Field, envName(e.Field), f, e.Reason)
	}
	return fmt.Sprintf("%s (env %s): %s", e.Field, envName(e.Field), e.Reason)
}

// flagOf returns the flag of the field at path, or "".
func flagOf(path string) string {
	name := ""
	var c Config
	c.fields(func(p string, _ reflect.Value, sf reflect.StructField) {
		if p == path {
			name = sf.Tag.Get("flag")
		}
	})
	return name
}

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

// Default returns the configuration firn serve runs with when nothing is
// set: each default from the package that owns it.
func Default() Config {
	return Config{
		HTTP:      HTTP{Listen: "127.0.0.1:8080", MaxBatch: server.DefaultMaxBatch},
		GRPC:      GRPC{Listen: "127.0.0.1:9090"},
		Layout:    Layout{Preset: snowflake.DefaultLayout().Name},
		Registry:  Registry{Store: store.Default(), LeaseTTL: nodeid.DefaultTTL, DialTimeout: DefaultDialTimeout},
		Segments:  Segments{Format: "leaf", TokenTable: "tiny_id_token", CheckTokens: true},
		ZooKeeper: ZooKeeper{SessionTimeout: zkstore.DefaultSessionTimeout, RetryPause: zkstore.DefaultRetryPause},
		Snowflake: Snowflake{Enabled: true, Exhausted: snowflake.Wait.String(), MaxBorrow: snowflake.DefaultMaxBorrow},
		Auth:      Auth{AnonymousRate: server.DefaultAnonymousRate},
		Log:       Log{Level: "info", Format: "auto"},
	}
}

// fileOnly reports whether a field has no environment variable.
func fileOnly(field string) bool {
	return strings.HasPrefix(field, "segments.stores") || strings.HasPrefix(field, "auth.") || field == "opaque.key"
}

func envName(field string) string {
	return "FIRN_" + strings.ToUpper(strings.ReplaceAll(field, ".", "_"))
}

// Load lays a YAML document (empty means none) and then the FIRN_…
// variables of environ over the defaults. It refuses what it cannot
// read; Validate checks the values once flags are bound too.
func Load(doc []byte, environ []string) (*Config, error) {
	return LoadFile("", doc, environ)
}

// LoadFile is Load for doc read from the file at path: a relative path
// of a file the document names (opaque.key_file, http.tls_cert,
// http.tls_key, auth.tokens[].secret_file) is taken from the document's directory, as its author
// sees it, wherever firn is started, and made absolute. Paths from the
// environment and flags stay relative to the working directory. A data
// directory must be absolute wherever it comes from (CheckDataDir). An
// empty path is Load.
func LoadFile(path string, doc []byte, environ []string) (*Config, error) {
	c := Default()
	if len(bytes.TrimSpace(doc)) > 0 {
		dec := yaml.NewDecoder(bytes.NewReader(doc))
		dec.KnownFields(true)
		if err := dec.Decode(&c); err != nil {
			return nil, fmt.Errorf("config file%s: %s", cmp.Or(" "+path, ""), yamlMessage(err))
		}
		if path != "" {
			dir, err := filepath.Abs(filepath.Dir(path))
			if err != nil {
				return nil, fmt.Errorf("config file: %w", err)
			}
			c.resolvePaths(dir)
		}
	}
	if err := c.applyEnv(environ); err != nil {
		return nil, err
	}
	return &c, nil
}

// resolvePaths joins dir to every relative path field that is set.
func (c *Config) resolvePaths(dir string) {
	c.fields(func(_ string, v reflect.Value, sf reflect.StructField) {
		if sf.Tag.Get("path") == "true" && v.String() != "" && !filepath.IsAbs(v.String()) {
			v.SetString(filepath.Join(dir, v.String()))
		}
	})
	for i, t := range c.Auth.Tokens {
		if t.SecretFile != "" && !filepath.IsAbs(t.SecretFile) {
			c.Auth.Tokens[i].SecretFile = filepath.Join(dir, t.SecretFile)
		}
	}
}

// yamlMessage says what is wrong with a file in the configuration's
// words rather than the YAML decoder's Go types.
func yamlMessage(err error) string {
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		return strings.TrimPrefix(err.Error(), "yaml: ")
	}
	msgs := make([]string, len(te.Errors))
	for i, m := range te.Errors {
		m = unknownField.ReplaceAllStringFunc(m, func(s string) string {
			sub := unknownField.FindStringSubmatch(s)
			return unknownSetting(sub[1], sub[2])
		})
		msgs[i] = wrongType.ReplaceAllStringFunc(m, func(s string) string {
			sub := wrongType.FindStringSubmatch(s)
			want := map[string]string{"int": "a whole number", "uint64": "a non-negative whole number", "bool": "true or false",
				"time.Duration": "a duration such as 10s", "float64": "a number", "string": "a string"}[sub[2]]
			if want == "" {
				want = "another kind of value"
			}
			return fmt.Sprintf("%q: want %s", sub[1], want)
		})
	}
	return strings.Join(msgs, "; ")
}

// unknownSetting says which setting key is not, in which section, and
// the section's setting nearest to it, if one is a typo away.
func unknownSetting(key, goType string) string {
	sections := reflect.TypeOf(Config{})
	for i := range sections.NumField() {
		sec := sections.Field(i)
		if sec.Type.String() != goType {
			continue
		}
		msg := fmt.Sprintf("unknown setting %q in %s", key, sec.Tag.Get("yaml"))
		var keys []string
		for j := range sec.Type.NumField() {
			if k := strings.Split(sec.Type.Field(j).Tag.Get("yaml"), ",")[0]; k != "" {
				keys = append(keys, k)
			}
		}
		if k := Suggest(key, keys); k != "" {
			return msg + fmt.Sprintf(" (did you mean %s?)", k)
		}
		return msg
	}
	return fmt.Sprintf("unknown setting %q", key)
}

// meant are names people give a setting, flag or variable that firn calls
// otherwise, with firn's names for it: a listening port is --http and
// --grpc on the command line, listen in http and grpc of the file.
var meant = map[string][]string{
	"port":    {"http", "listen"},
	"addr":    {"http", "listen"},
	"address": {"http", "listen"},
	"bind":    {"http", "listen"},
}

// Suggest returns the name of known that typed most likely stands for,
// or "" when none does: the first of known that people mean by typed
// ("port": http, listen), else the nearest one at most two edits away
// and fewer than typed has letters (a typo; the first of equals). Every
// "did you mean" of firn — setting keys, variables, flags — asks here.
func Suggest(typed string, known []string) string {
	for _, m := range meant[strings.ToLower(typed)] {
		if slices.Contains(known, m) {
			return m
		}
	}
	best, dist := "", min(3, len(typed))
	for _, k := range known {
		if d := editDistance(k, typed); d < dist {
			best, dist = k, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance of a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

var (
	unknownField = regexp.MustCompile(`field (\S+) not found in type (\S+)`)
	wrongType    = regexp.MustCompile("cannot unmarshal !!\\w+ `([^`]*)` into (\\S+)")
)

// Register defines a flag on fs for every setting with a flag that a
// command uses, bound to c's field, its usage the field's help: parsing
// fs sets c, over what the file and the environment said. uses names
// sections ("registry") or single settings ("snowflake.floor"); none
// means every setting (firn serve).
func (c *Config) Register(fs *flag.FlagSet, uses ...string) {
	c.fields(func(path string, v reflect.Value, sf reflect.StructField) {
		if used(path, uses) {
			fs.Var(&fieldValue{v: v, path: path}, sf.Tag.Get("flag"), flagUsage(path))
		}
	})
}

// For returns the configuration of a command other than firn serve: the
// defaults, with c's values of the settings the command uses (uses as for
// Register). The rest of the file and the environment is ignored, so one
// file serves every command. registry.node is never taken: it is the
// server's own node, and another command holding it beside the server
// would issue the server's IDs.
func (c *Config) For(uses ...string) *Config {
	out := Default()
	src := reflect.ValueOf(c).Elem()
	dst := reflect.ValueOf(&out).Elem()
	for i := range src.NumField() {
		sec := src.Type().Field(i)
		for j := range sec.Type.NumField() {
			path := sec.Tag.Get("yaml") + "." + sec.Type.Field(j).Tag.Get("yaml")
			if used(path, uses) && path != "registry.node" {
				dst.Field(i).Field(j).Set(src.Field(i).Field(j))
			}
		}
	}
	return &out
}

// used reports whether the setting at path is among uses: the setting
// itself or its section. No uses means every setting.
func used(path string, uses []string) bool {
	section, _, _ := strings.Cut(path, ".")
	return len(uses) == 0 || slices.Contains(uses, path) || slices.Contains(uses, section)
}

// Flags returns the flags of the settings among uses (as for Register).
func Flags(uses ...string) []string {
	var c Config
	var names []string
	c.fields(func(path string, _ reflect.Value, sf reflect.StructField) {
		if used(path, uses) {
			names = append(names, sf.Tag.Get("flag"))
		}
	})
	return names
}

// fieldValue is a setting as a flag.Value.
type fieldValue struct {
	v    reflect.Value
	path string
}

// Setting returns the path of the setting a flag bound by Register sets
// ("registry.dsn"), or "" for a flag of the command's own.
func Setting(f *flag.Flag) string {
	if v, ok := f.Value.(*fieldValue); ok {
		return v.path
	}
	return ""
}

func (f *fieldValue) String() string {
	if !f.v.IsValid() {
		return ""
	}
	return format(f.v)
}

func (f *fieldValue) Set(s string) error { return setString(f.v, s) }

// Get returns the setting's value, so that messages can say what a flag
// wants by its type.
func (f *fieldValue) Get() any { return f.v.Interface() }

// IsBoolFlag lets a boolean setting's flag be given without a value.
func (f *fieldValue) IsBoolFlag() bool { return f.v.IsValid() && f.v.Kind() == reflect.Bool }

// format writes a value as its flag would take it.
func format(v reflect.Value) string {
	if v.Type() == durationType {
		return time.Duration(v.Int()).String()
	}
	if v.Kind() == reflect.Slice {
		parts := make([]string, v.Len())
		for i := range v.Len() {
			parts[i] = fmt.Sprint(v.Index(i).Interface())
		}
		return strings.Join(parts, ",")
	}
	return fmt.Sprint(v.Interface())
}

var durationType = reflect.TypeOf(time.Duration(0))

// fields walks the leaves of c with their YAML paths.
func (c *Config) fields(f func(path string, v reflect.Value, sf reflect.StructField)) {
	root := reflect.ValueOf(c).Elem()
	for i := range root.NumField() {
		sec, st := root.Field(i), root.Type().Field(i)
		for j := range sec.NumField() {
			leaf := sec.Type().Field(j)
			if leaf.Tag.Get("flag") == "-" {
				continue // not a flag, not an environment variable
			}
			f(st.Tag.Get("yaml")+"."+leaf.Tag.Get("yaml"), sec.Field(j), leaf)
		}
	}
}

// commandVars are FIRN_ variables of the commands, not settings of
// firn serve: FIRN_TOKEN is the bearer token firn next and firn tag send
// to a running server.
var commandVars = map[string]bool{"FIRN_TOKEN": true, DigestVar: true}

// applyEnv sets every field whose FIRN_ variable is present.
func (c *Config) applyEnv(environ []string) error {
	env := map[string]string{}
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok && strings.HasPrefix(k, "FIRN_") && !strings.HasPrefix(k, "FIRN_TEST_") && !commandVars[k] {
			env[k] = v
		}
	}
	known := map[string]bool{}
	var err error
	c.fields(func(path string, v reflect.Value, _ reflect.StructField) {
		name := envName(path)
		known[name] = true
		s, ok := env[name]
		if !ok || err != nil {
			return
		}
		if e := setString(v, s); e != nil {
			err = &FieldError{Field: path, Reason: e.Error()}
		}
	})
	if err != nil {
		return err
	}
	for k := range env {
		if !known[k] {
			if s := Suggest(k, slices.Sorted(maps.Keys(known))); s != "" {
				return fmt.Errorf("config: unknown environment variable %s (did you mean %s?)", k, s)
			}
			return fmt.Errorf("config: unknown environment variable %s", k)
		}
	}
	return nil
}

func setString(v reflect.Value, s string) error {
	if v.Type() == durationType {
		d, err := time.ParseDuration(s)
		if err != nil {
			return fmt.Errorf("%q is not a duration such as 10s or 1m30s", s)
		}
		v.SetInt(int64(d))
		return nil
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(s)
	case reflect.Bool:
		b, err := strconv.ParseBool(s)
		if err != nil {
			return fmt.Errorf("%q is not true or false", s)
		}
		v.SetBool(b)
	case reflect.Int:
		n, err := strconv.Atoi(s)
		if err != nil {
			return fmt.Errorf("%q is not a whole number", s)
		}
		v.SetInt(int64(n))
	case reflect.Slice:
		parts := strings.Split(s, ",")
		out := reflect.MakeSlice(v.Type(), len(parts), len(parts))
		for i, p := range parts {
			if err := setString(out.Index(i), strings.TrimSpace(p)); err != nil {
				return err
			}
		}
		v.Set(out)
	case reflect.Uint64:
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return fmt.Errorf("%q is not a non-negative whole number", s)
		}
		v.SetUint(n)
	}
	return nil
}

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

// Redacted returns c as YAML with secrets hidden: every token's secret,
// the opaque key, the name of a file holding a secret (a key, a token's
// secret, ZooKeeper's digest) that names no file (it may be the secret
// itself: secret.File), and what hide leaves of each DSN and etcd endpoint. hide is given the
// kind of value — "endpoint" for an etcd endpoint, the store's name
// (postgres, mysql, or any other) for a DSN — and the value; it is the command's redaction, which reads
// DSNs with the SQL drivers this package may not import.
func (c *Config) Redacted(hide func(kind, value string) string) ([]byte, error) {
	r := c.redacted(hide)
	return yaml.Marshal(&r)
}

// redacted is c with what Redacted hides hidden.
func (c *Config) redacted(hide func(kind, value string) string) Config {
	r := *c
	r.Registry.DSN = hide(r.Registry.Store, r.Registry.DSN)
	r.Registry.Endpoints = slices.Clone(r.Registry.Endpoints)
	for i, e := range r.Registry.Endpoints {
		r.Registry.Endpoints[i] = hide("endpoint", e)
	}
	r.Segments.DSN = hide(r.Segments.Store, r.Segments.DSN)
	r.Segments.Stores = slices.Clone(r.Segments.Stores)
	for i, st := range r.Segments.Stores {
		r.Segments.Stores[i].DSN = hide(st.Store, st.DSN)
	}
	r.Auth.Tokens = slices.Clone(r.Auth.Tokens)
	for i, t := range r.Auth.Tokens {
		r.Auth.Tokens[i].Secret, r.Auth.Tokens[i].SecretFile = secret.Redacted, secret.File(t.SecretFile)
	}
	if r.Opaque.Key != "" {
		r.Opaque.Key = secret.Redacted
	}
	r.Opaque.KeyFile, r.HTTP.TLSKey = secret.File(r.Opaque.KeyFile), secret.File(r.HTTP.TLSKey)
	r.ZooKeeper.DigestFile, r.ZooKeeper.TLSKey = secret.File(r.ZooKeeper.DigestFile), secret.File(r.ZooKeeper.TLSKey)
	return r
}

// MaxID is the allocator's bound per tag: 2^53−1 for the tags
// JavaScriptSafe lists (all with "*"), none for the others.
func (s Segments) MaxID() func(string) int64 {
	if len(s.JavaScriptSafe) == 0 {
		return nil
	}
	all, set := slices.Contains(s.JavaScriptSafe, "*"), map[string]bool{}
	for _, t := range s.JavaScriptSafe {
		set[t] = true
	}
	return func(tag string) int64 {
		if all || set[tag] {
			return segment.JavaScriptSafe
		}
		return 0
	}
}
