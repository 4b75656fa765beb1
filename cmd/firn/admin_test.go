package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/firn-id/firn/internal/testenv"
	"github.com/firn-id/firn/internal/testserver"
	"github.com/firn-id/firn/snowflake"
)

func TestAdminAdvanceRefusesWhatIsClearlyAMistake(t *testing.T) {
	const to = "2026-11-22T14:05:00Z"
	used := t.TempDir()
	if _, errOut, code := runCLI("next", "--data-dir", used); code != 0 {
		t.Fatalf("first run: exit %d: %s", code, errOut)
	}
	missing := filepath.Join(t.TempDir(), "typo")
	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{name: "a node outside the stored layout", args: []string{"--node", "5000", "--to", to, "--data-dir", used},
			wantErr: "node 5000 is outside the namespace's layout \"firn: epoch 2026-01-01T00:00:00.000Z, tick 1ms, 41 time + 10 node + 12 sequence = 63 bits\": its nodes are 0..1023"},
		{name: "a data directory that does not exist", args: []string{"--node", "0", "--to", to, "--data-dir", missing},
			wantErr: "data directory " + missing + ": no such file or directory"},
		{name: "a directory never used", args: []string{"--node", "0", "--to", to, "--data-dir", t.TempDir()},
			wantErr: "has never been used (no layout recorded)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, code := runCLI(append([]string{"admin", "advance"}, tt.args...)...)
			if code != 2 || out != "" || !strings.Contains(errOut, tt.wantErr) {
				t.Fatalf("exit %d, stdout %q, stderr %q; want exit 2 and %q", code, out, errOut, tt.wantErr)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(used, "nodes", "5000.hwm")); !os.IsNotExist(err) {
		t.Fatalf("node 5000's HWM was written: %v", err)
	}
	if _, err := os.Stat(missing); !os.IsNotExist(err) {
		t.Fatalf("the missing data directory was created: %v", err)
	}
}

// TestAdminAdvanceRefusesANamespaceTypo advances a misspelt namespace on
// each shared store: refused, naming the namespace that exists.
func TestAdminAdvanceRefusesANamespaceTypo(t *testing.T) {
	stores := []struct {
		name      string
		args      func(t *testing.T) []string
		real, typ string
	}{
		{"etcd", func(t *testing.T) []string {
			c := testserver.Etcd(t, 1)
			return []string{"--store", "etcd", "--endpoints", strings.Join(c.Endpoints(), ",")}
		}, "/orders-" + suffix() + "/", "/ordres/"},
		{"postgres", func(t *testing.T) []string {
			dsn := testenv.Endpoint(t, "FIRN_TEST_POSTGRES")
			table := "firn_nodes_cli_" + suffix()
			t.Cleanup(func() { dropTables(t, "postgres", dsn, table) })
			return []string{"--store", "postgres", "--dsn", dsn, "--table", table}
		}, "orders", "ordres"},
		{"mysql", func(t *testing.T) []string {
			dsn := testenv.Endpoint(t, "FIRN_TEST_MYSQL")
			table := "firn_nodes_cli_" + suffix()
			t.Cleanup(func() { dropTables(t, "mysql", dsn, table) })
			return []string{"--store", "mysql", "--dsn", dsn, "--table", table}
		}, "orders", "ordres"},
	}
	for _, st := range stores {
		t.Run(st.name, func(t *testing.T) {
			args := st.args(t)
			if _, errOut, code := runCLI(append([]string{"next", "--namespace", st.real}, args...)...); code != 0 {
				t.Fatalf("first run: exit %d: %s", code, errOut)
			}
			adv := append([]string{"admin", "advance", "--node", "0", "--to", "2026-11-22T14:05:00Z"}, args...)
			out, errOut, code := runCLI(append(adv, "--namespace", st.typ)...)
			if code != 2 || out != "" || !strings.Contains(errOut, "has never been used") || !strings.Contains(errOut, `"`+st.real+`"`) {
				t.Fatalf("exit %d, stdout %q, stderr %q; want exit 2 naming %q", code, out, errOut, st.real)
			}
			out, errOut, code = runCLI(append(adv, "--namespace", st.real, "--node", "1024")...)
			if code != 2 || !strings.Contains(errOut, "its nodes are 0..1023") {
				t.Fatalf("node 1024: exit %d, stdout %q, stderr %q; want exit 2 naming the range", code, out, errOut)
			}
			if out, errOut, code = runCLI(append(adv, "--namespace", st.real)...); code != 0 {
				t.Fatalf("the real namespace: exit %d, %q, %q", code, out, errOut)
			}
		})
	}
}

// TestNextWarnsOfANodePassedOver: firn next, like serve, says so when it
// passes over a free node whose HWM is too far ahead of the clock.
func TestNextWarnsOfANodePassedOver(t *testing.T) {
	dir := t.TempDir()
	if _, errOut, code := runCLI("next", "--data-dir", dir); code != 0 {
		t.Fatalf("first run: exit %d: %s", code, errOut)
	}
	ahead := time.Now().Add(45 * time.Minute).UTC().Format(time.RFC3339)
	if _, errOut, code := runCLI("admin", "advance", "--node", "0", "--to", ahead, "--data-dir", dir); code != 0 {
		t.Fatalf("advance: exit %d: %s", code, errOut)
	}
	var warnings bytes.Buffer
	old := logOutput
	logOutput = &warnings
	t.Cleanup(func() { logOutput = old })
	out, errOut, code := runCLI("next", "--data-dir", dir)
	if code != 0 {
		t.Fatalf("next: exit %d: %s", code, errOut)
	}
	l, _ := snowflake.Preset("firn")
	id, _ := strconv.ParseUint(strings.TrimSpace(out), 10, 64)
	parts, err := l.Decompose(id)
	if err != nil || parts.Node != 1 || !strings.Contains(warnings.String(), "passed over free node 0, whose HWM is 4") ||
		!strings.Contains(warnings.String(), "took node 1") {
		t.Fatalf("next printed %q (%+v, %v), warned %q; want node 1 and a warning naming node 0", out, parts, err, warnings.String())
	}
}
