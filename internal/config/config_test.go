package config_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/firn-id/firn/internal/config"
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

func TestLoadAndArgs(t *testing.T) {
	c, err := config.Load([]byte(doc), []string{"FIRN_HTTP_MAX_BATCH=700", "FIRN_TEST_POSTGRES=ignored", "PATH=/bin"})
	if err != nil {
		t.Fatal(err)
	}
	args := c.Args()
	for _, want := range [][]string{{"--http", "127.0.0.1:9000"}, {"--max-batch", "700"}, {"--layout", "twitter"},
		{"--store", "postgres"}, {"--reserved-nodes", "0,1"}, {"--segments", "tinyid"}} {
		i := slices.Index(args, want[0])
		if i < 0 || i+1 >= len(args) || args[i+1] != want[1] {
			t.Errorf("args %v lack %v", args, want)
		}
	}
	if len(c.Segments.Stores) != 2 || c.Segments.Stores[1].Store != "mysql" || slices.ContainsFunc(args, func(a string) bool { return strings.Contains(a, "pass") }) {
		t.Errorf("segments.stores %+v (file only, no flag in %v)", c.Segments.Stores, args)
	}
	if !slices.Contains(args, "--start-ahead=true") {
		t.Errorf("args %v lack --start-ahead=true", args)
	}
	out, err := c.Redacted(hideAll)
	if err != nil || strings.Contains(string(out), "s3cret") || strings.Contains(string(out), "pass") || !strings.Contains(string(out), "dsn: hidden postgres") {
		t.Fatalf("redacted:\n%s", out)
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
		"auth:\n  tokens:\n    - {name: n, secret: pw5, scopes: [admin]}\n"
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
		{name: "bad listen", doc: "http:\n  listen: nowhere\n", field: "http.listen"},
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
			_, err := config.Load([]byte(tt.doc), tt.env)
			if err == nil {
				t.Fatal("accepted")
			}
			var fe *config.FieldError
			if tt.field != "" && (!errors.As(err, &fe) || fe.Field != tt.field) {
				t.Fatalf("error %v, want one naming %s", err, tt.field)
			}
			if strings.HasPrefix(tt.field, "segments.stores") {
				if !strings.Contains(err.Error(), "in the file only") {
					t.Fatalf("error %q does not say the field is file only", err)
				}
				return
			}
			if tt.field != "" && !strings.Contains(err.Error(), "FIRN_"+strings.ToUpper(strings.ReplaceAll(tt.field, ".", "_"))) {
				t.Fatalf("error %q does not name the environment variable", err)
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
			_ = c.Args()
			if _, err := c.Redacted(hideAll); err != nil {
				t.Fatal(err)
			}
		}
	})
}
