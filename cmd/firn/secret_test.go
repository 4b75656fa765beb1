package main

import (
	"cmp"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// secretValues are what a user may paste where a secret or its file's
// name goes: a base64 key (openssl rand -base64 32), a hex key (openssl
// rand -hex 32) and garbage. None names a file.
var secretValues = map[string]string{
	"base64":  "q8Vd3Yk7Jm0pZ2xW+R5/tN1cLhB9eGsAoUiF4QjK6vE=",
	"hex":     "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
	"garbage": "s3cr!t#garbage~Vz%q",
}

// secretCase is one secret setting given one way: args and a file, with
// SECRET standing for the value, and variables to set.
type secretCase struct {
	name string
	args []string
	env  map[string]string
	file string
	run  string // the command that uses it; default serve
}

func secretCases(cert string) []secretCase {
	zk := []string{"--store", "zookeeper", "--endpoints", "127.0.0.1:1", "--dial-timeout", "500ms"}
	return []secretCase{
		{name: "opaque key file flag", args: []string{"--opaque", "--opaque-key-file", "SECRET"}},
		{name: "opaque key file env", args: []string{"--opaque"}, env: map[string]string{"FIRN_OPAQUE_KEY_FILE": "SECRET"}},
		{name: "opaque key file in file", file: "opaque: {snowflake: true, key_file: \"SECRET\"}\n"},
		{name: "opaque key in file", file: "opaque: {snowflake: true, key: \"SECRET\"}\n", run: "next"},
		{name: "opaque key as a flag", args: []string{"--opaque", "--opaque-key", "SECRET"}},
		{name: "opaque key as a variable", args: []string{"--opaque"}, env: map[string]string{"FIRN_OPAQUE_KEY": "SECRET"}},
		{name: "TLS key file flag", args: []string{"--tls-cert", cert, "--tls-key", "SECRET"}},
		{name: "TLS key file env", env: map[string]string{"FIRN_HTTP_TLS_CERT": cert, "FIRN_HTTP_TLS_KEY": "SECRET"}},
		{name: "TLS key file in file", file: "http: {tls_cert: \"" + cert + "\", tls_key: \"SECRET\"}\n", run: "next"},
		{name: "token secret, bad scope", file: "auth:\n  tokens: [{name: a, secret: \"SECRET\", scopes: [everything]}]\n"},
		{name: "token secret, shared", file: "auth:\n  tokens: [{name: a, secret: \"SECRET\", scopes: [snowflake]}, {name: b, secret: \"SECRET\", scopes: [admin]}]\n"},
		{name: "token secret file", file: "auth:\n  tokens: [{name: a, secret_file: \"SECRET\", scopes: [snowflake]}]\n"},
		{name: "ZooKeeper digest file flag", args: append(zk, "--zk-digest-file", "SECRET"), run: "next"},
		{name: "ZooKeeper digest file env", args: zk, env: map[string]string{"FIRN_ZOOKEEPER_DIGEST_FILE": "SECRET"}, run: "next"},
		{name: "ZooKeeper digest file in file", args: zk, file: "zookeeper: {digest_file: \"SECRET\"}\n", run: "next"},
		{name: "ZooKeeper digest variable", args: zk, env: map[string]string{"FIRN_ZOOKEEPER_DIGEST": "SECRET"}, run: "next"},
		{name: "ZooKeeper TLS key flag", args: append(zk, "--zk-tls-cert", cert, "--zk-tls-key", "SECRET"), run: "next"},
		{name: "ZooKeeper TLS key env", args: zk, env: map[string]string{"FIRN_ZOOKEEPER_TLS_CERT": cert, "FIRN_ZOOKEEPER_TLS_KEY": "SECRET"}, run: "next"},
		{name: "client token flag", args: []string{"--server", "http://127.0.0.1:1", "--token", "SECRET"}, run: "next"},
		{name: "client token env", args: []string{"--server", "http://127.0.0.1:1"}, env: map[string]string{"FIRN_TOKEN": "SECRET"}, run: "next"},
		{name: "DSN password flag", args: []string{"--store", "postgres", "--dsn", "postgres://app:SECRET@127.0.0.1:1/ids"}, run: "next"},
		{name: "DSN password env", env: map[string]string{"FIRN_REGISTRY_STORE": "mysql", "FIRN_REGISTRY_DSN": "app:SECRET@tcp(127.0.0.1:1)/ids"}, run: "next"},
		{name: "DSN password in file", file: "registry: {store: postgres, dsn: \"host=127.0.0.1 port=1 password='SECRET' dbname=ids\"}\n", run: "next"},
	}
}

// TestSecretsAreNeverEchoed: a secret given in the wrong place, or
// malformed, appears in no output of serve, config check or config
// print, whichever way it was given.
func TestSecretsAreNeverEchoed(t *testing.T) {
	cert := t.TempDir() + "/cert.pem"
	if err := os.WriteFile(cert, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range secretCases(cert) {
		for kind, v := range secretValues {
			t.Run(c.name+"/"+kind, func(t *testing.T) {
				var args []string
				for _, a := range c.args {
					args = append(args, strings.ReplaceAll(a, "SECRET", v))
				}
				for k, e := range c.env {
					t.Setenv(k, strings.ReplaceAll(e, "SECRET", v))
				}
				if c.file != "" {
					path := filepath.Join(t.TempDir(), "firn.yaml")
					if err := os.WriteFile(path, []byte(strings.ReplaceAll(c.file, "SECRET", v)), 0o600); err != nil {
						t.Fatal(err)
					}
					args = append(args, "--config", path)
				}
				run := cmp.Or(c.run, "serve")
				for _, cmd := range [][]string{{run}, {"config", "check"}, {"config", "print"}} {
					out, errOut, code := runBounded(t, append(cmd, args...)...)
					if strings.Contains(out+errOut, v) || strings.Contains(out+errOut, v[4:16]) {
						t.Fatalf("firn %s %v (exit %d) prints the secret:\nstdout: %s\nstderr: %s", strings.Join(cmd, " "), args, code, out, errOut)
					}
				}
			})
		}
	}
}
