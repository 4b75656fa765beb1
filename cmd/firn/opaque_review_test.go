package main

// Adversarial review of opaque mode (issue 16): each test here fails on
// i16-opaque and names what it found.

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/firn-id/firn/internal/testenv"
)

// TestOpaqueLongTweakOnSQLStores: the config.SpaceID fingerprint is the
// layout's (19 characters) + ";opaque=ff1:" + 16 hex + ":" + hex(tweak):
// 48 + 2·len(tweak). The SQL namespace table's fingerprint column is
// VARCHAR(64), so any tweak longer than 8 bytes ("orders-2026") is
// refused by PostgreSQL (value too long) and silently truncated by MySQL's
// INSERT IGNORE, after which every claim compares the full fingerprint
// against the truncated one and refuses: opaque mode with a tweak of 9+
// bytes can never start on a SQL registry. config validation allows 1024.
func TestOpaqueLongTweakOnSQLStores(t *testing.T) {
	for _, kind := range []string{"postgres", "mysql"} {
		t.Run(kind, func(t *testing.T) {
			dsn := testenv.Endpoint(t, map[string]string{"postgres": "FIRN_TEST_POSTGRES", "mysql": "FIRN_TEST_MYSQL"}[kind])
			table := "firn_nodes_rev_" + suffix()
			t.Cleanup(func() { dropTables(t, kind, dsn, table) })
			args := []string{"next", "-n", "3", "--store", kind, "--dsn", dsn, "--table", table,
				"--opaque", "--opaque-key-file", keyFile(t, testKeyA), "--opaque-tweak", "orders-2026"}
			for run := range 2 {
				out, errOut, code := runCLI(args...)
				if code != 0 || len(strings.Fields(out)) != 3 {
					t.Fatalf("run %d with a 11-byte tweak: exit %d, stdout %q, stderr %q; want 3 IDs", run, code, out, errOut)
				}
			}
		})
	}
}

// TestTagNextKeepsJavaScriptSafe: segments.javascript_safe in the file
// reaches firn tag next --config as it reaches firn serve: the tag is
// never drawn past 2^53−1, the bound the file asked for.
func TestTagNextKeepsJavaScriptSafe(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "firn.yaml")
	doc := "registry:\n  data_dir: " + filepath.Join(dir, "data") + "\nsegments:\n  javascript_safe: [\"js\"]\n"
	if err := os.WriteFile(cfg, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := runCLI("tag", "create", "js", "--first", strconv.FormatInt(1<<53-2, 10), "--step", "10", "--config", cfg); code != 0 {
		t.Fatalf("create: exit %d: %s", code, errOut)
	}
	out, errOut, code := runCLI("tag", "next", "js", "-n", "5", "--config", cfg)
	for _, s := range strings.Fields(out) {
		if id, _ := strconv.ParseInt(s, 10, 64); id > 1<<53-1 {
			t.Fatalf("tag next with segments.javascript_safe [js] issued %d > 2^53-1 (exit %d, %s)", id, code, errOut)
		}
	}
}

// TestOpaqueStaticNodesNeedThePromise: with a static node each machine's
// data directory records only its own key, and two keys over one space
// collide (at about N1·N2/2^bits), so opaque mode with --node is refused
// until the operator promises every machine shares the key and tweak.
func TestOpaqueStaticNodesNeedThePromise(t *testing.T) {
	ownNodes(t) // a layout other than the default: one node directory holds one
	args := []string{"next", "-n", "3", "--node", "1", "--data-dir", t.TempDir(), "--opaque", "--opaque-key-file", keyFile(t, testKeyA)}
	if _, errOut, code := runCLI(args...); code != 2 || !strings.Contains(errOut, "opaque.accept_unchecked_key") {
		t.Fatalf("static node in opaque mode without the promise: exit %d, %s", code, errOut)
	}
	if _, errOut, code := runCLI(append(args, "--opaque-accept-unchecked-key")...); code != 0 {
		t.Fatalf("with the promise: exit %d, %s", code, errOut)
	}
	if _, errOut, code := runCLI("config", "check", "--node", "1", "--opaque", "--opaque-key-file", keyFile(t, testKeyA)); code != 2 || !strings.Contains(errOut, "opaque.accept_unchecked_key") {
		t.Fatalf("serve's configuration: exit %d, %s", code, errOut)
	}
}

// TestKeyGivenAsKeyFileIsNotPrinted: the easy mistake of passing the
// key where its file is expected (--opaque-key-file $(cat key), or
// FIRN_OPAQUE_KEY_FILE set to the key) prints the key: the os.ReadFile
// error names the "path". The issue: the key is never logged or printed.
func TestKeyGivenAsKeyFileIsNotPrinted(t *testing.T) {
	for _, args := range [][]string{
		{"next", "--data-dir", t.TempDir(), "--opaque", "--opaque-key-file", testKeyA},
		{"parse", "--opaque", "--opaque-key-file", testKeyA, "1"},
		{"serve", "--data-dir", t.TempDir(), "--http", "127.0.0.1:0", "--grpc", "off", "--opaque", "--opaque-key-file", testKeyA},
	} {
		out, errOut, code := runCLI(args...)
		if strings.Contains(out+errOut, testKeyA) {
			t.Errorf("firn %s: exit %d, the key is printed: %s%s", args[0], code, out, errOut)
		}
	}
}
