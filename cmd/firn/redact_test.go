package main

import (
	"os"
	"strings"
	"testing"
)

func TestConfigPrintHidesEveryPassword(t *testing.T) {
	path := t.TempDir() + "/firn.yaml"
	doc := "registry:\n  store: etcd\n  endpoints: [\"http://root:pa55etcd@10.0.0.5:2379\"]\n" +
		"segments:\n  format: set\n  stores:\n" +
		"    - {store: postgres, dsn: \"host=a password='pa55 w0rd' dbname=ids\"}\n" +
		"    - {store: mysql, dsn: \"app:p@ss/w:rd@tcp(b:3306)/ids\"}\n"
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		hide []string
	}{
		{name: "keyword/value flag", args: []string{"--store", "postgres", "--dsn", "host=db password=pa55word dbname=ids"}, hide: []string{"pa55word"}},
		{name: "URL query flag", args: []string{"--store", "postgres", "--dsn", "postgres://app@db/ids?password=pa55word"}, hide: []string{"pa55word"}},
		{name: "mysql @ in the password", args: []string{"--store", "mysql", "--dsn", "app:p@ss/w:rd@tcp(db:3306)/ids"}, hide: []string{"ss/w:rd", "w:rd"}},
		{name: "mysql ?password= and ?passwd=", args: []string{"--store", "mysql", "--dsn", "app@tcp(db:3306)/ids?password=pa55word&passwd=pa55w0rd2"}, hide: []string{"pa55word", "pa55w0rd2"}},
		{name: "postgres URL ?passwd=", args: []string{"--store", "postgres", "--dsn", "postgres://app@db/ids?passwd=pa55word"}, hide: []string{"pa55word"}},
		{name: "file: endpoints and a set of stores", args: []string{"--config", path}, hide: []string{"pa55etcd", "w0rd", "ss/w:rd"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, code := runCLI(append([]string{"config", "print"}, tt.args...)...)
			if code != 0 || !strings.Contains(out, "REDACTED") {
				t.Fatalf("exit %d, %q; stdout:\n%s", code, errOut, out)
			}
			for _, pw := range tt.hide {
				if strings.Contains(out, pw) {
					t.Fatalf("config print shows %q:\n%s", pw, out)
				}
			}
		})
	}
}

func TestStoreErrorsNeverShowThePassword(t *testing.T) {
	for _, tt := range []struct {
		name, kind, dsn, password string
	}{
		{name: "postgres URL query", kind: "postgres", dsn: "postgres://app@ADDR/ids?password=pa55word", password: "pa55word"},
		{name: "postgres keyword/value quoted", kind: "postgres", dsn: "host=HOST port=PORT password='pa55 w0rd' dbname=ids", password: "w0rd"},
		{name: "mysql @ in the password", kind: "mysql", dsn: "app:p@ss/w:rd@tcp(ADDR)/ids", password: "w:rd"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			addr := closedPort(t)
			host, port, _ := strings.Cut(addr, ":")
			dsn := strings.NewReplacer("ADDR", addr, "HOST", host, "PORT", port).Replace(tt.dsn)
			_, errOut, code := runBounded(t, "next", "--store", tt.kind, "--dsn", dsn, "--dial-timeout", "500ms")
			if code != 1 || !strings.Contains(errOut, addr) || strings.Contains(errOut, tt.password) {
				t.Fatalf("exit %d, stderr %q; want exit 1 naming %s without the password", code, errOut, addr)
			}
		})
	}
}

// TestMalformedPostgresDSNRefusedBeforeDialing: pgx reads "app:hunter2
// host" as a setting's name and sends it to the server (a local socket, as
// root), whose refusal quoted the password; firn refuses such a DSN as bad
// input without dialing, and without showing it.
func TestMalformedPostgresDSNRefusedBeforeDialing(t *testing.T) {
	for _, dsn := range []string{"app:hunter2 host=x", "host=x hunter2", "host=x password='hunter2"} {
		got := runBadInput(t, "next", "--store", "postgres", "--dsn", dsn, "--dial-timeout", "500ms")
		if !strings.Contains(got, "not a PostgreSQL DSN") || strings.Contains(got, "hunter2") {
			t.Fatalf("--dsn %q: %q; want it refused as not a PostgreSQL DSN, without the password", dsn, got)
		}
	}
}
