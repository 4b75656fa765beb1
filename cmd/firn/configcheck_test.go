package main

import (
	"crypto/rand"
	"errors"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/firn-id/firn/cmd/firn/internal/config"
)

// TestConfigCheckRefusesWhatServeRefuses runs one table of bad settings,
// each from the file, the environment and a flag, through firn serve and
// firn config check: both exit 2 with the same message naming the field,
// and neither touches the data directory. The default ports are held
// throughout, as by the quick start's firn serve: serve checks every
// setting before it binds, so the message is the setting, never the port. A row's other settings (also)
// are set the same way; names, when set, is what the message names in
// place of the field's path; a row with yaml is a file's alone (its
// settings have no variable or flag).
func TestConfigCheckRefusesWhatServeRefuses(t *testing.T) {
	type setting struct{ path, flag, value string }
	tests := []struct {
		path, flag, value, wantErr string
		also                       []setting
		names                      string
		yaml                       string
	}{
		{"http.listen", "http", "nowhere", "is not host:port", nil, "", ""},
		{"http.max_batch", "max-batch", "0", "want 1 to 1000000", nil, "", ""},
		{"grpc.listen", "grpc", "x", "is not host:port", nil, "", ""},
		{"http.listen", "http", "127.0.0.1:99999", `"127.0.0.1:99999" has port 99999, past 65535`, nil, "", ""},
		{"http.listen", "http", "127.0.0.1:80x", `has port "80x", not a number`, nil, "", ""},
		{"http.listen", "http", "no_such/host:80", `has host "no_such/host", neither an IP address nor a host name`, nil, "", ""},
		{"grpc.listen", "grpc", "127.0.0.1:70000", "has port 70000, past 65535", nil, "", ""},
		{"snowflake.exhausted", "exhausted", "sometimes", `"sometimes": want wait or borrow`, nil, "", ""},
		{"snowflake.max_borrow", "max-borrow", "0s", "want a duration above 0, at most 10s", nil, "", ""},
		{"snowflake.max_borrow", "max-borrow", "1m", "want a duration above 0, at most 10s", nil, "", ""},
		{"registry.store", "store", "redis", `"redis": want local, etcd, postgres, mysql`, nil, "", ""},
		{"registry.lease_ttl", "lease-ttl", "500ms", "want 1s to 10m0s", nil, "", ""},
		{"registry.dial_timeout", "dial-timeout", "0s", "want a duration above 0", nil, "", ""},
		{"registry.node", "node", "three", "want a number", nil, "", ""},
		{"segments.format", "segments", "csv", "want leaf, tinyid or set", nil, "", ""},
		{"log.level", "log-level", "loud", "want debug, info, warn or error", nil, "", ""},
		{"log.format", "log-format", "xml", "want auto, text or json", nil, "", ""},
		{"layout.preset", "layout", "nope", `unknown layout "nope"`, nil, "", ""},
		{"http.tls_key", "tls-key", "key.pem", "set both tls_cert and tls_key", nil, "", ""},
		{"registry.dsn", "dsn", "postgres://app:hunter2@db:99999/ids", "not a PostgreSQL DSN",
			[]setting{{"registry.store", "store", "postgres"}}, "--dsn postgres://app:REDACTED@db:99999/ids", ""},
		{"registry.dsn", "dsn", "postgres://app:hunter2@127.0.0.1:1:2/ids", "not a PostgreSQL DSN",
			[]setting{{"registry.store", "store", "postgres"}}, "--dsn postgres://app:REDACTED@", ""},
		{"registry.dsn", "dsn", "root:hunter2@tcp(127.0.0.1:1/leaf", "not a MySQL DSN",
			[]setting{{"registry.store", "store", "mysql"}}, "--dsn ", ""},
		{"registry.endpoints", "endpoints", "notaurl", "--endpoints notaurl: want host:port, such as http://127.0.0.1:2379",
			[]setting{{"registry.store", "store", "etcd"}}, "--endpoints", ""},
		{"grpc.listen", "grpc", "127.0.0.1:8081", "overlaps the address of http.listen",
			[]setting{{"http.listen", "http", "127.0.0.1:8081"}}, "", ""},
		{"opaque.tags", "opaque-tags", "sec*", `entry 0, "sec*": a pattern; only "*" alone`,
			[]setting{{"opaque.key_file", "opaque-key-file", "/dev/null"}}, "", ""},
		{"segments.javascript_safe", "javascript-safe-tags", "user*", `entry 0, "user*": a pattern`, nil, "", ""},
		{"zookeeper.session_timeout", "zk-session-timeout", "500ms", "want 1s to 10m0s", nil, "", ""},
		{"zookeeper.retry_pause", "zk-retry-pause", "5ms", "want 10ms to 10s", nil, "", ""},
		{"zookeeper.retry_pause", "zk-retry-pause", "1m", "want 10ms to 10s", nil, "", ""},
		{"zookeeper.tls_key", "zk-tls-key", "key.pem", "set both tls_cert and tls_key", nil, "", ""},
		{"segments.store", "segment-store", "zookeeper", "ZooKeeper holds no segment counters", []setting{{"segments.dsn", "segment-dsn", "x"}}, "", ""},
		{"registry.endpoints", "endpoints", "zk1", `server address "zk1": want host:port`,
			[]setting{{"registry.store", "store", "zookeeper"}}, "--store zookeeper", ""},
		{"registry.namespace", "namespace", "/zookeeper/ids", "/zookeeper is ZooKeeper's own",
			[]setting{{"registry.store", "store", "zookeeper"}, {"registry.endpoints", "endpoints", "127.0.0.1:2181"}}, "--store zookeeper", ""},
		{"auth.tokens", "", "", "auth.tokens[1].secret", nil, "", "auth:\n  tokens:\n" +
			"    - {name: a, secret: samesecret1-0123, scopes: [snowflake]}\n" +
			"    - {name: b, secret: samesecret1-0123, scopes: [admin]}\n"},
		{"auth.tokens", "", "", "token a has the example secret of firn's documentation", nil, "", "auth:\n  tokens:\n" +
			"    - {name: a, secret: change-me, scopes: [snowflake]}\n"},
		{"auth.tokens", "", "", "token a has a secret shorter than 16 bytes", nil, "", "auth:\n  tokens:\n" +
			"    - {name: a, secret: short-secret, scopes: [snowflake]}\n"},
	}
	holdDefaultPorts(t)
	for _, tt := range tests {
		settings := append([]setting{{tt.path, tt.flag, tt.value}}, tt.also...)
		ways := map[string]func(t *testing.T) []string{
			"file": func(t *testing.T) []string {
				yaml := tt.yaml
				if yaml == "" {
					sections := map[string]string{}
					for _, s := range settings {
						section, key, _ := strings.Cut(s.path, ".")
						value := s.value
						switch s.path { // a list in the file
						case "registry.endpoints", "opaque.tags", "segments.javascript_safe":
							value = "[\"" + value + "\"]"
						}
						sections[section] += "  " + key + ": " + value + "\n"
					}
					for section, keys := range sections {
						yaml += section + ":\n" + keys
					}
				}
				f := filepath.Join(t.TempDir(), "firn.yaml")
				if err := os.WriteFile(f, []byte(yaml), 0o600); err != nil {
					t.Fatal(err)
				}
				return []string{"--config", f}
			},
			"env": func(t *testing.T) []string {
				for _, s := range settings {
					t.Setenv("FIRN_"+strings.ToUpper(strings.ReplaceAll(s.path, ".", "_")), s.value)
				}
				return nil
			},
			"flag": func(*testing.T) []string {
				var args []string
				for _, s := range settings {
					args = append(args, "--"+s.flag, s.value)
				}
				return args
			},
		}
		if tt.yaml != "" {
			ways = map[string]func(t *testing.T) []string{"file": ways["file"]}
		}
		for way, set := range ways {
			t.Run(tt.path+"/"+way, func(t *testing.T) {
				dir := filepath.Join(t.TempDir(), "state")
				args := set(t)
				if !slices.ContainsFunc(settings, func(s setting) bool { return s.path == "registry.store" }) {
					// Only the local store takes a data directory.
					args = append([]string{"--data-dir", dir}, args...)
				}
				// config check first: serve given what check accepts would
				// run until stopped.
				_, checkErr, checkCode := runCLI(append([]string{"config", "check"}, args...)...)
				if checkCode != 2 {
					t.Fatalf("config check exit %d (%q); want 2", checkCode, checkErr)
				}
				_, serveErr, serveCode := runCLI(append([]string{"serve"}, args...)...)
				if serveCode != 2 || checkCode != 2 {
					t.Fatalf("serve exit %d (%q), config check exit %d (%q); want 2 and 2", serveCode, serveErr, checkCode, checkErr)
				}
				if strings.Contains(serveErr, "listen on") {
					t.Fatalf("serve reported a port, not the setting: %q", serveErr)
				}
				serveMsg := strings.TrimPrefix(serveErr, "firn serve: ")
				checkMsg := strings.TrimPrefix(checkErr, "firn config: ")
				if serveMsg != checkMsg || !strings.Contains(serveMsg, tt.wantErr) {
					t.Fatalf("serve said %q, config check %q; want the same, with %q", serveMsg, checkMsg, tt.wantErr)
				}
				names := tt.path
				if tt.names != "" {
					names = tt.names
				}
				if !strings.HasPrefix(tt.path, "layout.") && !strings.Contains(serveMsg, names) && !strings.Contains(serveMsg, "tls_cert") {
					t.Fatalf("%q does not name the field %s", serveMsg, names)
				}
				if strings.Contains(serveErr+checkErr, "hunter2") || strings.Contains(serveErr+checkErr, "samesecret1") {
					t.Fatalf("a secret was printed: serve %q, config check %q", serveErr, checkErr)
				}
				if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
					t.Fatalf("the data directory was touched: %v", err)
				}
			})
		}
	}
}

// holdDefaultPorts holds firn serve's default HTTP and gRPC addresses
// until the test ends, as the quick start's firn serve does. An address
// already held by another process is the same situation and is left to
// it.
func holdDefaultPorts(t *testing.T) {
	t.Helper()
	d := config.Default()
	for _, addr := range []string{d.HTTP.Listen, d.GRPC.Listen} {
		ln, err := net.Listen("tcp", addr)
		if errors.Is(err, syscall.EADDRINUSE) {
			continue
		}
		if err != nil {
			t.Fatalf("hold %s: %v", addr, err)
		}
		t.Cleanup(func() { ln.Close() })
	}
}

// TestConfigPrintShowsEveryEffectiveValue: the defaults, then the file,
// environment and flags over them.
func TestConfigPrintShowsEveryEffectiveValue(t *testing.T) {
	t.Setenv("FIRN_REGISTRY_LEASE_TTL", "30s")
	out, errOut, code := runCLI("config", "print", "--max-batch", "500")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"listen: 127.0.0.1:8080", "listen: 127.0.0.1:9090", "store: local", "lease_ttl: 30s",
		"max_batch: 500", "dial_timeout: 5s", "preset: firn", "format: leaf", "level: info"} {
		if !strings.Contains(out, want) {
			t.Errorf("config print lacks %q:\n%s", want, out)
		}
	}
}

// TestDocsSampleConfigChecks: the sample configuration of docs/config.md
// is one YAML block that firn config check accepts, with a token file
// beside it as the sample says to write one.
func TestDocsSampleConfigChecks(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "config.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), "```yaml\n")
	sample, _, closed := strings.Cut(rest, "```")
	if !ok || !closed {
		t.Fatal("docs/config.md has no closed ```yaml block")
	}
	dir := t.TempDir()
	f := filepath.Join(dir, "firn.yaml")
	if err := os.WriteFile(f, []byte(sample), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "orders-service.token"), []byte(rand.Text()+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, errOut, code := runCLI("config", "check", "--config", f); code != 0 {
		t.Fatalf("config check of the sample: exit %d, %s%s", code, out, errOut)
	}
}

// TestConfigFilePathsAreRelativeToTheFile: opaque.key_file: key in a
// configuration file names the key beside the file, wherever firn is
// started; a missing one is reported without its name, which may be the
// key itself.
func TestConfigFilePathsAreRelativeToTheFile(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "firn.yaml")
	if err := os.WriteFile(conf, []byte("opaque:\n  snowflake: true\n  key_file: key\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "key"), []byte(testKeyA+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	args := []string{"config", "check", "--config", conf, "--data-dir", t.TempDir()}
	if out, errOut, code := runCLI(args...); code != 0 {
		t.Fatalf("config check of a file whose key is beside it: exit %d, %s %s", code, out, errOut)
	}
	// A data directory is never relative, not even to the file.
	rel := filepath.Join(dir, "rel.yaml")
	if err := os.WriteFile(rel, []byte("registry:\n  data_dir: state\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range [][]string{{"serve"}, {"config", "check"}, {"next"}} {
		_, errOut, code := runCLI(append(cmd, "--config", rel)...)
		if code != 2 || !strings.Contains(errOut, `"state" is relative: give an absolute path`) {
			t.Fatalf("%v of a file with data_dir: state: exit %d, %q; want 2, refused as relative", cmd, code, errOut)
		}
	}
	if err := os.Remove(filepath.Join(dir, "key")); err != nil {
		t.Fatal(err)
	}
	_, errOut, code := runCLI(args...)
	want := "opaque.key_file (env FIRN_OPAQUE_KEY_FILE, flag --opaque-key-file): no such file or directory (the name given is not printed"
	if code != 2 || !strings.Contains(errOut, want) || strings.Contains(errOut, filepath.Join(dir, "key")) {
		t.Fatalf("config check without the key: exit %d, %q; want 2 with %q", code, errOut, want)
	}
}
