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
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"time"

	"github.com/firn-id/firn/internal/secret"
	"github.com/firn-id/firn/nodeid"
	"github.com/firn-id/firn/segment"
	"github.com/firn-id/firn/server"
	"github.com/firn-id/firn/snowflake"
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
	Site      Site      `yaml:"site"`
	Ledger    Ledger    `yaml:"ledger"`
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
