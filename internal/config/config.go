// Package config reads firn serve's configuration: one YAML file,
// overridden by FIRN_… environment variables, then by command-line flags.
// It validates what it can name a field for, and turns the result into
// the flags the command parses, so flags override the file.
package config

import (
	"bytes"
	"fmt"
	"net"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Config is the configuration of firn serve. Every field's zero value
// means the command's default.
type Config struct {
	HTTP      HTTP      `yaml:"http"`
	GRPC      GRPC      `yaml:"grpc"`
	Layout    Layout    `yaml:"layout"`
	Registry  Registry  `yaml:"registry"`
	Segments  Segments  `yaml:"segments"`
	Snowflake Snowflake `yaml:"snowflake"`
	Auth      Auth      `yaml:"auth"`
	Log       Log       `yaml:"log"`
}

// Log is how firn serve logs.
type Log struct {
	Level  string `yaml:"level" flag:"log-level"`   // debug, info (default), warn, error
	Format string `yaml:"format" flag:"log-format"` // auto (default: text on a terminal, else JSON), text, json
}

// Auth lists the bearer tokens. With none, firn serve answers every
// request, and only on loopback. Tokens come from the file only.
type Auth struct {
	Tokens []Token `yaml:"tokens" flag:"-"`
	// Anonymous lists the scopes a request without credentials may use
	// while tokens are configured (snowflake, tag:NAME, tag:*; never
	// admin): Leaf's and Tinyid's clients send none. Logged at start.
	Anonymous []string `yaml:"anonymous" flag:"-"`
}

// Token is one bearer token.
type Token struct {
	Name   string   `yaml:"name"`
	Secret string   `yaml:"secret"`
	Scopes []string `yaml:"scopes"` // snowflake, admin, tag:NAME, tag:*
	Rate   float64  `yaml:"rate"`   // requests per second; 0: unlimited
}

// Snowflake is snowflake mode's migration setting.
type Snowflake struct {
	// Floor is the largest snowflake ID a previous system issued: firn
	// refuses to start if its first ID would not exceed it.
	Floor uint64 `yaml:"floor" flag:"floor"`
}

// HTTP is the listener.
type HTTP struct {
	Listen   string `yaml:"listen" flag:"http"`         // host:port, default 127.0.0.1:8080
	MaxBatch int    `yaml:"max_batch" flag:"max-batch"` // 1..1,000,000, default 10,000
	TLSCert  string `yaml:"tls_cert" flag:"tls-cert"`   // PEM files: both or neither
	TLSKey   string `yaml:"tls_key" flag:"tls-key"`
}

// GRPC is the gRPC listener; it shares the HTTP listener's TLS files.
type GRPC struct {
	Listen string `yaml:"listen" flag:"grpc"` // host:port, default 127.0.0.1:9090; "off": none
}

// Layout is the snowflake layout: a preset, then any part overridden.
type Layout struct {
	Preset       string `yaml:"preset" flag:"layout"`
	Epoch        string `yaml:"epoch" flag:"epoch"`
	Tick         string `yaml:"tick" flag:"tick"`
	TimeBits     string `yaml:"time_bits" flag:"time-bits"`
	NodeBits     string `yaml:"node_bits" flag:"node-bits"`
	NodeNames    string `yaml:"node_names" flag:"node-names"`
	SequenceBits string `yaml:"sequence_bits" flag:"sequence-bits"`
	Order        string `yaml:"order" flag:"order"`
}

// Registry is where node IDs, their HWMs and the segment counters live.
type Registry struct {
	Store               string   `yaml:"store" flag:"store"` // local, etcd, postgres, mysql
	DataDir             string   `yaml:"data_dir" flag:"data-dir"`
	Endpoints           []string `yaml:"endpoints" flag:"endpoints"`
	DSN                 string   `yaml:"dsn" flag:"dsn" secret:"true"`
	Namespace           string   `yaml:"namespace" flag:"namespace"`
	Table               string   `yaml:"table" flag:"table"`
	Node                string   `yaml:"node" flag:"node"` // a number, one per field, or "derived"
	AcceptCollisionRisk bool     `yaml:"accept_collision_risk" flag:"accept-collision-risk"`
	ReservedNodes       []uint64 `yaml:"reserved_nodes" flag:"reserved-nodes"`
	StartAhead          bool     `yaml:"start_ahead" flag:"start-ahead"`
	LeaseTTL            string   `yaml:"lease_ttl" flag:"lease-ttl"` // how long a claim outlives its last renewal; default 10s
	// DialTimeout is how long to wait for etcd or the database to answer
	// before reporting it unreachable: more than 0, at most 10m; default 5s.
	DialTimeout string `yaml:"dial_timeout" flag:"dial-timeout"`
}

// Segments is segment mode's table in a SQL store.
type Segments struct {
	Format string `yaml:"format" flag:"segments"` // leaf, tinyid, set
	Table  string `yaml:"table" flag:"segment-table"`
	Set    string `yaml:"set" flag:"set"`
	// Local serves tags from the local data directory off loopback: this
	// machine alone serves them.
	Local bool `yaml:"local" flag:"local-segments"`
	// Stores, two or more, serve every tag together in place of the
	// registry's store: store i issues the IDs congruent to i modulo
	// their number, so their order is part of the set. File only.
	Stores []SegmentStore `yaml:"stores" flag:"-"`
}

// SegmentStore is one database of a set of segment stores.
type SegmentStore struct {
	Store string `yaml:"store"` // postgres or mysql
	DSN   string `yaml:"dsn" secret:"true"`
}

// FieldError names the field at fault and what to change.
type FieldError struct {
	Field  string // its YAML path, such as registry.store
	Reason string
}

func (e *FieldError) Error() string {
	if fileOnly(e.Field) {
		return fmt.Sprintf("config: %s (in the file only): %s", e.Field, e.Reason)
	}
	return fmt.Sprintf("config: %s (env %s): %s", e.Field, envName(e.Field), e.Reason)
}

// fileOnly reports whether a field has no environment variable.
func fileOnly(field string) bool {
	return strings.HasPrefix(field, "segments.stores") || strings.HasPrefix(field, "auth.")
}

func envName(field string) string {
	return "FIRN_" + strings.ToUpper(strings.ReplaceAll(field, ".", "_"))
}

// Load reads a YAML document (empty means none), applies FIRN_…
// variables from environ, and validates the result.
func Load(doc []byte, environ []string) (*Config, error) {
	var c Config
	if len(bytes.TrimSpace(doc)) > 0 {
		dec := yaml.NewDecoder(bytes.NewReader(doc))
		dec.KnownFields(true)
		if err := dec.Decode(&c); err != nil {
			return nil, fmt.Errorf("config: %w", err)
		}
	}
	if err := c.applyEnv(environ); err != nil {
		return nil, err
	}
	return &c, c.Validate()
}

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

// applyEnv sets every field whose FIRN_ variable is present.
func (c *Config) applyEnv(environ []string) error {
	env := map[string]string{}
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok && strings.HasPrefix(k, "FIRN_") && !strings.HasPrefix(k, "FIRN_TEST_") {
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
			return fmt.Errorf("config: unknown environment variable %s", k)
		}
	}
	return nil
}

func setString(v reflect.Value, s string) error {
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

// Validate checks what can be checked without the command's parsers; the
// layout and the stores are checked when they are built.
func (c *Config) Validate() error {
	fail := func(field, format string, args ...any) error {
		return &FieldError{Field: field, Reason: fmt.Sprintf(format, args...)}
	}
	if c.HTTP.Listen != "" {
		if _, _, err := net.SplitHostPort(c.HTTP.Listen); err != nil {
			return fail("http.listen", "%q is not host:port, such as 127.0.0.1:8080", c.HTTP.Listen)
		}
	}
	if l := c.GRPC.Listen; l != "" && l != "off" {
		if _, _, err := net.SplitHostPort(l); err != nil {
			return fail("grpc.listen", "%q is not host:port, such as 127.0.0.1:9090, or off", l)
		}
	}
	if c.HTTP.MaxBatch != 0 && (c.HTTP.MaxBatch < 1 || c.HTTP.MaxBatch > 1_000_000) {
		return fail("http.max_batch", "%d: want 1 to 1000000", c.HTTP.MaxBatch)
	}
	if (c.HTTP.TLSCert == "") != (c.HTTP.TLSKey == "") {
		return fail("http.tls_cert", "set both tls_cert and tls_key, or neither")
	}
	for i, t := range c.Auth.Tokens {
		if t.Name == "" || t.Secret == "" || len(t.Scopes) == 0 {
			return fail(fmt.Sprintf("auth.tokens[%d]", i), "each token needs a name, a secret and at least one scope")
		}
	}
	r := c.Registry
	if r.Store != "" && !slices.Contains([]string{"local", "etcd", "postgres", "mysql"}, r.Store) {
		return fail("registry.store", "%q: want local, etcd, postgres or mysql", r.Store)
	}
	switch {
	case r.Store == "etcd" && len(r.Endpoints) == 0:
		return fail("registry.endpoints", "etcd needs at least one client URL")
	case (r.Store == "postgres" || r.Store == "mysql") && r.DSN == "":
		return fail("registry.dsn", "%s needs a DSN", r.Store)
	case r.Node != "" && !nodePattern.MatchString(r.Node):
		return fail("registry.node", "%q: want a number, one per node field (3,17), or derived", r.Node)
	case r.Node == "derived" && !r.AcceptCollisionRisk:
		return fail("registry.accept_collision_risk", "a derived node cannot see a second host with the same address bits: set it to true to accept that")
	}
	if d := r.DialTimeout; d != "" {
		if t, err := time.ParseDuration(d); err != nil || t <= 0 || t > 10*time.Minute {
			return fail("registry.dial_timeout", "%q: want a duration above 0, at most 10m, such as 5s", d)
		}
	}
	if f := c.Segments.Format; f != "" && !slices.Contains([]string{"leaf", "tinyid", "set"}, f) {
		return fail("segments.format", "%q: want leaf, tinyid or set", f)
	}
	return c.validateStores()
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
		case st.Store != "postgres" && st.Store != "mysql":
			return &FieldError{Field: field + ".store", Reason: fmt.Sprintf("%q: want postgres or mysql", st.Store)}
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

// Flags returns the command-line flag of every setting, and whether it
// is a boolean (given without a value).
func Flags() map[string]bool {
	flags := map[string]bool{}
	var c Config
	c.fields(func(_ string, v reflect.Value, sf reflect.StructField) {
		flags[sf.Tag.Get("flag")] = v.Kind() == reflect.Bool
	})
	return flags
}

// SetFlag sets the setting of a command-line flag, as the flag would.
func (c *Config) SetFlag(name, value string) error {
	err := fmt.Errorf("config: no setting has the flag --%s", name)
	c.fields(func(path string, v reflect.Value, sf reflect.StructField) {
		if sf.Tag.Get("flag") == name {
			err = nil
			if e := setString(v, value); e != nil {
				err = fmt.Errorf("--%s: %w", name, e)
			}
		}
	})
	return err
}

// Args returns the flags that say what c says, to be parsed before the
// command line's own, which then override them.
func (c *Config) Args() []string {
	var args []string
	c.fields(func(_ string, v reflect.Value, sf reflect.StructField) {
		name := sf.Tag.Get("flag")
		switch {
		case v.IsZero():
		case v.Kind() == reflect.Bool:
			args = append(args, "--"+name+"=true")
		case v.Kind() == reflect.Slice:
			parts := make([]string, v.Len())
			for i := range v.Len() {
				parts[i] = fmt.Sprint(v.Index(i).Interface())
			}
			args = append(args, "--"+name, strings.Join(parts, ","))
		default:
			args = append(args, "--"+name, fmt.Sprint(v.Interface()))
		}
	})
	return args
}

// Redacted returns c as YAML with secrets hidden: every token's secret,
// and what hide leaves of each DSN and etcd endpoint. hide is given the
// kind of value — "endpoint" for an etcd endpoint, the store's name
// (postgres, mysql, or any other) for a DSN — and the value; it is the command's redaction, which reads
// DSNs with the SQL drivers this package may not import.
func (c *Config) Redacted(hide func(kind, value string) string) ([]byte, error) {
	r := *c
	r.Registry.DSN = hide(r.Registry.Store, r.Registry.DSN)
	r.Registry.Endpoints = slices.Clone(r.Registry.Endpoints)
	for i, e := range r.Registry.Endpoints {
		r.Registry.Endpoints[i] = hide("endpoint", e)
	}
	r.Segments.Stores = slices.Clone(r.Segments.Stores)
	for i, st := range r.Segments.Stores {
		r.Segments.Stores[i].DSN = hide(st.Store, st.DSN)
	}
	r.Auth.Tokens = slices.Clone(r.Auth.Tokens)
	for i := range r.Auth.Tokens {
		r.Auth.Tokens[i].Secret = "REDACTED"
	}
	return yaml.Marshal(&r)
}
