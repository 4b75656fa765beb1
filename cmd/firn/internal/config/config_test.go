package config_test

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/firn-id/firn/cmd/firn/internal/config"
	"github.com/firn-id/firn/segment"
	"github.com/firn-id/firn/snowflake"
)

const doc = `
http:
  listen: 127.0.0.1:9000
  max_batch: 500
layout:
  preset: twitter
registry:
  store: postgres
  dsn: postgres://app:s3cret@db:5432/ids?sslmode=disable
  reserved_nodes: [0, 1]
  start_ahead: true
segments:
  format: tinyid
  stores:
    - {store: postgres, dsn: "postgres://app:pg-pass@a:5432/ids"}
    - {store: mysql, dsn: "app:my-pass@tcp(b:3306)/ids"}
`

// TestLayers: the defaults, then the file, then the environment, then the
// flags bound onto the same typed fields.
func TestLayers(t *testing.T) {
	c, err := config.Load([]byte(doc), []string{"FIRN_HTTP_MAX_BATCH=700", "FIRN_REGISTRY_LEASE_TTL=20s", "FIRN_TEST_POSTGRES=ignored", "PATH=/bin"})
	if err != nil {
		t.Fatal(err)
	}
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	c.Register(fs)
	if err := fs.Parse([]string{"--max-batch", "800", "--dial-timeout=2s", "--accept-collision-risk"}); err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"file", c.HTTP.Listen, "127.0.0.1:9000"},
		{"flag over env over file", c.HTTP.MaxBatch, 800},
		{"env duration", c.Registry.LeaseTTL, 20 * time.Second},
		{"flag duration", c.Registry.DialTimeout, 2 * time.Second},
		{"bool flag", c.Registry.AcceptCollisionRisk, true},
		{"default kept", c.GRPC.Listen, "127.0.0.1:9090"},
		{"list", c.Registry.ReservedNodes, []uint64{0, 1}},
		{"file only", len(c.Segments.Stores), 2},
	}
	for _, ch := range checks {
		if !reflect.DeepEqual(ch.got, ch.want) {
			t.Errorf("%s: %v, want %v", ch.name, ch.got, ch.want)
		}
	}
	// What another command takes of the same file and environment: the
	// settings it uses, and nothing else.
	other := c.For("layout", "registry")
	if other.Layout.Preset != "twitter" || !slices.Equal(other.Registry.ReservedNodes, []uint64{0, 1}) || other.Registry.LeaseTTL != 20*time.Second {
		t.Errorf("For(layout, registry) = %+v", other)
	}
	if other.HTTP.MaxBatch != config.Default().HTTP.MaxBatch || len(other.Segments.Stores) != 0 {
		t.Errorf("For(layout, registry) takes a setting it does not use: %+v", other)
	}
	out, err := c.Redacted(hideAll)
	if err != nil || strings.Contains(string(out), "s3cret") || strings.Contains(string(out), "pass") || !strings.Contains(string(out), "dsn: hidden postgres") {
		t.Fatalf("redacted:\n%s", out)
	}
}

// TestDefaultsArePrinted: the default configuration is valid, and print
// shows every default rather than empty values.
func TestDefaultsArePrinted(t *testing.T) {
	c := config.Default()
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	out, err := c.Redacted(hideAll)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"listen: 127.0.0.1:8080", "listen: 127.0.0.1:9090", "max_batch: 10000", "preset: firn",
		"store: local", "lease_ttl: 10s", "dial_timeout: 5s", "format: leaf", "level: info", "anonymous_rate: 5000"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("print of the defaults lacks %q:\n%s", want, out)
		}
	}
}

// hideAll stands for the command's redaction: it names what it was given.
func hideAll(kind, value string) string {
	if value == "" {
		return ""
	}
	return "hidden " + kind
}

func TestRedactedHidesEverySecretSetting(t *testing.T) {
	doc := "registry:\n  store: etcd\n  endpoints: [http://u:pw1@a:2379, http://b:2379]\n  dsn: postgres://u:pw2@h/db\n" +
		"segments:\n  format: set\n  stores:\n    - {store: postgres, dsn: \"host=a password=pw3\"}\n    - {store: mysql, dsn: \"u:pw4@tcp(b)/db\"}\n" +
		"auth:\n  tokens:\n    - {name: n, secret: pw5-0123456789ab, scopes: [admin]}\n"
	c, err := config.Load([]byte(doc), nil)
	if err != nil {
		t.Fatal(err)
	}
	out, err := c.Redacted(hideAll)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"- hidden endpoint\n        - hidden endpoint", "dsn: hidden etcd", "dsn: hidden postgres", "dsn: hidden mysql", "secret: REDACTED"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("redacted config lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(string(out), "pw") {
		t.Errorf("redacted config shows a password:\n%s", out)
	}
}

func TestRejects(t *testing.T) {
	tests := []struct {
		name, doc string
		env       []string
		field     string // the field the error names; empty: any error
	}{
		{name: "unknown field", doc: "http:\n  port: 80\n"},
		{name: "unknown env", env: []string{"FIRN_HTTP_PORT=80"}},
		{name: "bad lease ttl", env: []string{"FIRN_REGISTRY_LEASE_TTL=500ms"}, field: "registry.lease_ttl"},
		{name: "lease ttl not a duration", doc: "registry:\n  lease_ttl: ten\n"},
		{name: "bad log level", env: []string{"FIRN_LOG_LEVEL=loud"}, field: "log.level"},
		{name: "admin anonymous", doc: "auth:\n  anonymous: [admin]\n", field: "auth.anonymous"},
		{name: "status anonymous off loopback", doc: "auth:\n  anonymous: [status]\n", field: "auth.anonymous"},
		{name: "unknown anonymous scope", doc: "auth:\n  anonymous: [order]\n", field: "auth.anonymous"},
		{name: "negative anonymous rate", doc: "auth:\n  anonymous: [snowflake]\n  anonymous_rate: -5\n", field: "auth.anonymous_rate"},
		{name: "zero anonymous rate", doc: "auth:\n  anonymous: [\"tag:order\"]\n  anonymous_rate: 0\n", field: "auth.anonymous_rate"},
		{name: "unknown scope", doc: "auth:\n  tokens:\n    - {name: a, secret: a-secret-0123456, scopes: [snowflak]}\n", field: "auth.tokens[0].scopes"},
		{name: "token name twice", doc: "auth:\n  tokens:\n    - {name: a, secret: a-secret-0123456, scopes: [admin]}\n    - {name: a, secret: a-secret-6543210, scopes: [admin]}\n", field: "auth.tokens[1].name"},
		{name: "tls key alone", doc: "http:\n  tls_key: k.pem\n", field: "http.tls_cert"},
		{name: "bad listen", doc: "http:\n  listen: nowhere\n", field: "http.listen"},
		{name: "port past 65535", doc: "http:\n  listen: 127.0.0.1:99999\n", field: "http.listen"},
		{name: "port not a number", env: []string{"FIRN_GRPC_LISTEN=127.0.0.1:grpc"}, field: "grpc.listen"},
		{name: "host not a name", env: []string{"FIRN_HTTP_LISTEN=a b:80"}, field: "http.listen"},
		{name: "one port for both listeners", doc: "http:\n  listen: 127.0.0.1:8081\ngrpc:\n  listen: 127.0.0.1:8081\n", field: "grpc.listen"},
		{name: "a port under the wildcard", env: []string{"FIRN_HTTP_LISTEN=:8081", "FIRN_GRPC_LISTEN=127.0.0.1:8081"}, field: "grpc.listen"},
		{name: "a wildcard over the port", env: []string{"FIRN_HTTP_LISTEN=[::1]:8081", "FIRN_GRPC_LISTEN=0.0.0.0:8081"}, field: "grpc.listen"},
		{name: "token secret twice", doc: "auth:\n  tokens:\n    - {name: a, secret: a-secret-0123456, scopes: [snowflake]}\n    - {name: b, secret: a-secret-0123456, scopes: [admin]}\n", field: "auth.tokens[1].secret"},
		{name: "unknown exhausted policy", doc: "snowflake:\n  exhausted: spin\n", field: "snowflake.exhausted"},
		{name: "max borrow past the start-ahead bound", env: []string{"FIRN_SNOWFLAKE_MAX_BORROW=11s"}, field: "snowflake.max_borrow"},
		{name: "no max borrow", env: []string{"FIRN_SNOWFLAKE_EXHAUSTED=borrow", "FIRN_SNOWFLAKE_MAX_BORROW=0s"}, field: "snowflake.max_borrow"},
		{name: "token table needing quotes", doc: "segments:\n  token_table: Tokens\n", field: "segments.token_table"},
		{name: "batch out of range", env: []string{"FIRN_HTTP_MAX_BATCH=0x10"}, field: "http.max_batch"},
		{name: "unknown store", doc: "registry:\n  store: redis\n", field: "registry.store"},
		{name: "etcd without endpoints", doc: "registry:\n  store: etcd\n", field: "registry.endpoints"},
		{name: "sql without dsn", doc: "registry:\n  store: mysql\n", field: "registry.dsn"},
		{name: "bad node", doc: "registry:\n  node: three\n", field: "registry.node"},
		{name: "derived unacknowledged", doc: "registry:\n  node: derived\n", field: "registry.accept_collision_risk"},
		{name: "bad format", env: []string{"FIRN_SEGMENTS_FORMAT=csv"}, field: "segments.format"},
		{name: "bad dial timeout", env: []string{"FIRN_REGISTRY_DIAL_TIMEOUT=0s"}, field: "registry.dial_timeout"},
		{name: "bad bool", env: []string{"FIRN_REGISTRY_START_AHEAD=maybe"}, field: "registry.start_ahead"},
		{name: "a set of one store", doc: "segments:\n  format: tinyid\n  stores:\n    - {store: mysql, dsn: a}\n", field: "segments.stores"},
		{name: "a set of Leaf tables", doc: "segments:\n  stores:\n    - {store: mysql, dsn: a}\n    - {store: mysql, dsn: b}\n", field: "segments.format"},
		{name: "a set store's kind", doc: "segments:\n  format: set\n  stores:\n    - {store: mysql, dsn: a}\n    - {store: etcd, dsn: b}\n", field: "segments.stores[1].store"},
		{name: "a set store without dsn", doc: "segments:\n  format: set\n  stores:\n    - {store: mysql}\n    - {store: mysql, dsn: b}\n", field: "segments.stores[0].dsn"},
		{name: "one database twice", doc: "segments:\n  format: set\n  stores:\n    - {store: mysql, dsn: a}\n    - {store: mysql, dsn: a}\n", field: "segments.stores[1]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := config.Load([]byte(tt.doc), tt.env)
			if err == nil {
				err = c.Validate()
			}
			if err == nil {
				t.Fatal("accepted")
			}
			var fe *config.FieldError
			if tt.field != "" && (!errors.As(err, &fe) || fe.Field != tt.field) {
				t.Fatalf("error %v, want one naming %s", err, tt.field)
			}
			if strings.HasPrefix(tt.field, "segments.stores") || strings.HasPrefix(tt.field, "auth.") {
				if !strings.Contains(err.Error(), "in the configuration file only") {
					t.Fatalf("error %q does not say the field is file only", err)
				}
				return
			}
			if tt.field != "" && !strings.Contains(err.Error(), "FIRN_"+strings.ToUpper(strings.ReplaceAll(tt.field, ".", "_"))) {
				t.Fatalf("error %q does not name the environment variable", err)
			}
			if tt.field != "" && !strings.Contains(tt.field, "accept_collision") && !strings.Contains(err.Error(), "flag --") {
				t.Fatalf("error %q does not name the flag", err)
			}
		})
	}
}

// TestListenersOfTheirOwn: two listeners that can both be bound pass
// Validate — port 0 twice (a free port each), one port on two loopback
// addresses of different families, two ports.
func TestListenersOfTheirOwn(t *testing.T) {
	for _, pair := range [][2]string{{"127.0.0.1:0", "127.0.0.1:0"}, {"127.0.0.1:8081", "[::1]:8081"}, {":8081", ":8082"}} {
		c, err := config.Load(nil, []string{"FIRN_HTTP_LISTEN=" + pair[0], "FIRN_GRPC_LISTEN=" + pair[1]})
		if err == nil {
			err = c.Validate()
		}
		if err != nil {
			t.Errorf("http %s, grpc %s: %v", pair[0], pair[1], err)
		}
	}
}

// TestRegisterBindsOnlyTheSettingsUsed: a command binds the flags of the
// sections and settings it names, and no other.
func TestRegisterBindsOnlyTheSettingsUsed(t *testing.T) {
	c := config.Default()
	fs := flag.NewFlagSet("next", flag.ContinueOnError)
	c.Register(fs, "layout", "snowflake.floor")
	for _, name := range []string{"layout", "epoch", "order", "floor"} {
		if fs.Lookup(name) == nil {
			t.Errorf("--%s is not bound", name)
		}
	}
	for _, name := range []string{"http", "store", "javascript-safe", "opaque"} {
		if fs.Lookup(name) != nil {
			t.Errorf("--%s is bound, but its setting is not used", name)
		}
	}
	if err := fs.Parse([]string{"--floor", "42", "--tick", "10ms"}); err != nil {
		t.Fatal(err)
	}
	if c.Snowflake.Floor != 42 || c.Layout.Tick != "10ms" {
		t.Errorf("flags did not reach the config: %+v %+v", c.Snowflake, c.Layout)
	}
	if got := config.Flags("layout"); !slices.Equal(got, []string{"layout", "epoch", "tick", "time-bits", "node-bits", "node-names", "sequence-bits", "order"}) {
		t.Errorf("Flags(layout) = %v", got)
	}
}

// TestForNeverTakesTheServersNode: registry.node in the file or the
// environment is the server's own; another command's view of the same
// configuration starts without it, while its other registry settings come
// through.
func TestForNeverTakesTheServersNode(t *testing.T) {
	c, err := config.Load([]byte("registry:\n  node: \"7\"\n  table: ids\n"), []string{"FIRN_SNOWFLAKE_FLOOR=99"})
	if err != nil {
		t.Fatal(err)
	}
	other := c.For("registry", "snowflake.floor")
	if other.Registry.Node != "" || other.Registry.Table != "ids" || other.Snowflake.Floor != 99 {
		t.Errorf("For = node %q, table %q, floor %d; want none, ids, 99", other.Registry.Node, other.Registry.Table, other.Snowflake.Floor)
	}
	if c.Registry.Node != "7" {
		t.Errorf("For changed the configuration it read: node %q", c.Registry.Node)
	}
}

// TestExhaustedPolicy: wait by default, borrow when set, as the
// generator's policy.
func TestExhaustedPolicy(t *testing.T) {
	c, err := config.Load(nil, []string{"FIRN_SNOWFLAKE_EXHAUSTED=borrow", "FIRN_SNOWFLAKE_MAX_BORROW=250ms"})
	if err != nil {
		t.Fatal(err)
	}
	if p, err := c.Snowflake.Policy(); err != nil || p != snowflake.Borrow || c.Snowflake.MaxBorrow != 250*time.Millisecond {
		t.Errorf("Policy() = %v, %v; max borrow %s", p, err, c.Snowflake.MaxBorrow)
	}
	if p, err := config.Default().Snowflake.Policy(); err != nil || p != snowflake.Wait {
		t.Errorf("default Policy() = %v, %v; want wait", p, err)
	}
}

// TestStatusAnonymousOnLoopback: the setting reaches the server's checker,
// and is off unless set.
func TestStatusAnonymousOnLoopback(t *testing.T) {
	for _, tt := range []struct {
		name, doc string
		want      bool
	}{
		{"default", "", false},
		{"set", "auth:\n  status_anonymous_on_loopback: true\n", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, err := config.Load([]byte(tt.doc), nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Validate(); err != nil {
				t.Fatal(err)
			}
			a, err := c.Auth.New()
			if err != nil {
				t.Fatal(err)
			}
			if a.StatusOnLoopback() != tt.want {
				t.Errorf("StatusOnLoopback() = %v, want %v", a.StatusOnLoopback(), tt.want)
			}
		})
	}
}

func FuzzLoad(f *testing.F) {
	f.Add(doc)
	f.Add("registry: {store: etcd, endpoints: [http://a:2379]}")
	f.Fuzz(func(t *testing.T, d string) {
		c, err := config.Load([]byte(d), nil)
		if err == nil {
			_ = c.Validate()
			_ = c.For("registry", "layout", "snowflake.floor")
			if _, err := c.Redacted(hideAll); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// TestFileErrorsInTheConfigurationsWords: a bad file is reported with its
// line and the setting, never the decoder's Go types.
func TestFileErrorsInTheConfigurationsWords(t *testing.T) {
	for _, tt := range []struct{ doc, want string }{
		{"http:\n  nosuch: 1\n", `line 2: unknown setting "nosuch" in http`},
		{"http:\n  lisen: 127.0.0.1:1\n", `line 2: unknown setting "lisen" in http (did you mean listen?)`},
		{"registry:\n  lease-ttl: 5s\n", `unknown setting "lease-ttl" in registry (did you mean lease_ttl?)`},
		{"grpc:\n  port: 9090\n", `unknown setting "port" in grpc (did you mean listen?)`},
		{"nosuch:\n  x: 1\n", `line 1: unknown setting "nosuch"`},
		{"http:\n  max_batch: abc\n", `line 2: "abc": want a whole number`},
		{"registry:\n  lease_ttl: ten\n", `line 2: "ten": want a duration such as 10s`},
		{"registry:\n  start_ahead: maybe\n", `line 2: "maybe": want true or false`},
	} {
		_, err := config.Load([]byte(tt.doc), nil)
		if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "config.") || strings.Contains(err.Error(), "!!") {
			t.Errorf("Load(%q) = %v, want %q and no Go types", tt.doc, err, tt.want)
		}
	}
}

// TestFilePathsAreRelativeToTheFile: a relative path of a file the
// document names is taken from the document's directory and made
// absolute; an absolute one, and one from the environment, are left as
// they are. A relative data directory is refused from anywhere.
func TestFilePathsAreRelativeToTheFile(t *testing.T) {
	doc := "opaque:\n  key_file: key\nhttp:\n  tls_cert: certs/c.pem\n  tls_key: /abs/k.pem\n"
	c, err := config.LoadFile("/etc/firn/firn.yaml", []byte(doc), nil)
	if err != nil {
		t.Fatal(err)
	}
	got := []string{c.Opaque.KeyFile, c.HTTP.TLSCert, c.HTTP.TLSKey}
	want := []string{"/etc/firn/key", "/etc/firn/certs/c.pem", "/abs/k.pem"}
	if !slices.Equal(got, want) {
		t.Fatalf("paths %q; want %q", got, want)
	}
	c, err = config.LoadFile("etc/firn.yaml", []byte(doc), nil)
	if err != nil {
		t.Fatal(err)
	}
	if wd, _ := os.Getwd(); c.Opaque.KeyFile != filepath.Join(wd, "etc", "key") {
		t.Fatalf("key_file of a file named relatively = %q; want it absolute, under %s", c.Opaque.KeyFile, wd)
	}
	for _, tc := range []struct {
		name    string
		doc     string
		environ []string
	}{
		{"file", "registry:\n  data_dir: state\n", nil},
		{"environment", "", []string{"FIRN_REGISTRY_DATA_DIR=./state"}},
		{"file, with etcd", "registry:\n  store: etcd\n  endpoints: [http://127.0.0.1:2379]\n  data_dir: /var/lib/firn\n", nil},
	} {
		c, err := config.LoadFile("/etc/firn/firn.yaml", []byte(tc.doc), tc.environ)
		if err != nil {
			t.Fatal(err)
		}
		var fe *config.FieldError
		if err := c.Validate(); !errors.As(err, &fe) || fe.Field != "registry.data_dir" || !strings.Contains(err.Error(), "is relative: give an absolute path") && !strings.Contains(err.Error(), "only the local store keeps a data directory") {
			t.Errorf("data_dir from the %s: %v; want it refused", tc.name, err)
		}
	}
	c, err = config.LoadFile("/etc/firn/firn.yaml", []byte(doc), []string{"FIRN_OPAQUE_KEY_FILE=mine"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Opaque.KeyFile != "mine" {
		t.Fatalf("key_file from the environment = %q; want it as given", c.Opaque.KeyFile)
	}
	c, err = config.Load([]byte(doc), nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.Opaque.KeyFile != "key" {
		t.Fatalf("key_file of a document without a file = %q; want it as given", c.Opaque.KeyFile)
	}
}

// TestSegmentsMaxID: the tags segments.javascript_safe lists, or every
// tag with "*", are bounded at 2^53−1; the others are not.
func TestSegmentsMaxID(t *testing.T) {
	if (config.Segments{}).MaxID() != nil {
		t.Fatal("no tags listed, yet a bound")
	}
	some := config.Segments{JavaScriptSafe: []string{"order"}}.MaxID()
	if some("order") != segment.JavaScriptSafe || some("user") != 0 {
		t.Fatalf("listed tag: %d, other: %d", some("order"), some("user"))
	}
	if all := (config.Segments{JavaScriptSafe: []string{"*"}}).MaxID(); all("anything") != segment.JavaScriptSafe {
		t.Fatal(`"*" leaves a tag unbounded`)
	}
}

// TestRedactedHidesEveryFieldTaggedSecret: a field tagged secret, in a
// section or in an entry of a list, never reaches config print as set.
func TestRedactedHidesEveryFieldTaggedSecret(t *testing.T) {
	const pw = "tagged-pa55word"
	c := config.Default()
	var set func(v reflect.Value) int
	set = func(v reflect.Value) (n int) {
		for i := range v.NumField() {
			f, sf := v.Field(i), v.Type().Field(i)
			switch {
			case sf.Tag.Get("secret") == "true" && f.Kind() == reflect.String:
				f.SetString(pw)
				n++
			case f.Kind() == reflect.Struct:
				n += set(f)
			case f.Kind() == reflect.Slice && f.Type().Elem().Kind() == reflect.Struct:
				f.Set(reflect.MakeSlice(f.Type(), 1, 1))
				n += set(f.Index(0))
			}
		}
		return n
	}
	if n := set(reflect.ValueOf(&c).Elem()); n < 4 {
		t.Fatalf("%d fields tagged secret, want the key and three DSNs at least", n)
	}
	out, err := c.Redacted(hideAll)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), pw) {
		t.Fatalf("config print shows a field tagged secret:\n%s", out)
	}
}

// TestListenPlaceholder: an address in angle brackets, as the example
// configurations write the one their reader must choose, is refused with
// a message that says so, on either listener, until it is replaced.
func TestListenPlaceholder(t *testing.T) {
	for _, env := range [][]string{
		{"FIRN_HTTP_LISTEN=<this-host>:8080"},
		{"FIRN_HTTP_LISTEN=127.0.0.1:8080", "FIRN_GRPC_LISTEN=<this-host>:9090"},
	} {
		c, err := config.Load(nil, env)
		if err != nil {
			t.Fatal(err)
		}
		err = c.Validate()
		if err == nil || !strings.Contains(err.Error(), "names <this-host>, a placeholder: replace it with the address this machine serves on") {
			t.Errorf("%v: %v; want the placeholder refused", env, err)
		}
	}
	c, err := config.Load(nil, []string{"FIRN_HTTP_LISTEN=192.0.2.10:8080"})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil {
		t.Fatalf("the placeholder replaced: %v", err)
	}
}

// TestTokenSecretFile: a token's secret is read from secret_file, taken
// from the configuration file's directory, without its line break; a
// file that cannot be read, an empty one, or a secret given twice is
// refused, and neither the file's name nor its content is printed.
func TestTokenSecretFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("ops", "s3cret-from-a-file\n")
	write("empty", "\n")
	load := func(tokens string) (*config.Config, error) {
		doc := "auth:\n  tokens:\n" + tokens
		c, err := config.LoadFile(filepath.Join(dir, "firn.yaml"), []byte(doc), nil)
		if err != nil {
			return nil, err
		}
		return c, c.Validate()
	}
	c, err := load("    - {name: ops, secret_file: ops, scopes: [admin]}\n")
	if err != nil {
		t.Fatal(err)
	}
	if c.Auth.Tokens[0].SecretFile != filepath.Join(dir, "ops") {
		t.Fatalf("secret_file = %q; want it under the file's directory", c.Auth.Tokens[0].SecretFile)
	}
	// The server refuses two tokens with one secret: so a second token
	// with the file's content written inline shows what was read.
	if _, err := load("    - {name: ops, secret_file: ops, scopes: [admin]}\n    - {name: twin, secret: s3cret-from-a-file, scopes: [admin]}\n"); err == nil || !strings.Contains(err.Error(), "token twin has the secret of token ops") {
		t.Fatalf("%v; want the file's secret, without its line break, to be token ops's", err)
	}
	for _, tc := range []struct{ name, tokens, want string }{
		{"missing", "    - {name: ops, secret_file: b64Z2l2ZW4taW4tdGhlLXdyb25nLXBsYWNl, scopes: [admin]}\n", "the file it names cannot be read: no such file or directory"},
		{"empty", "    - {name: ops, secret_file: empty, scopes: [admin]}\n", "the file it names is empty"},
		{"both", "    - {name: ops, secret: inline-one-01234, secret_file: ops, scopes: [admin]}\n", "has a secret and a secret_file: give one"},
	} {
		_, err := load(tc.tokens)
		var fe *config.FieldError
		if !errors.As(err, &fe) || fe.Field != "auth.tokens[0].secret_file" || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v; want auth.tokens[0].secret_file refused: %s", tc.name, err, tc.want)
			continue
		}
		for _, leak := range []string{"b64Z2l2", "s3cret", "inline-one", dir} {
			if strings.Contains(err.Error(), leak) {
				t.Errorf("%s: %v prints %q", tc.name, err, leak)
			}
		}
	}
}
