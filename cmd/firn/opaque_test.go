package main

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/firn-id/firn/opaque"
	"github.com/firn-id/firn/snowflake"
)

func keyFile(t *testing.T, hexKey string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(path, []byte(hexKey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

const (
	testKeyA = "000102030405060708090a0b0c0d0e0f"
	testKeyB = "0f0e0d0c0b0a09080706050403020100"
)

// TestOpaqueNextAndParse: firn next in opaque mode prints opaque IDs,
// firn parse with the key reveals them to the increasing plain IDs of
// the node, and the namespace refuses plain IDs, another key and another
// tweak from then on.
func TestOpaqueNextAndParse(t *testing.T) {
	ownNodes(t) // a layout other than the default: one node directory holds one
	dir, key := t.TempDir(), keyFile(t, testKeyA)
	flags := []string{"--opaque", "--opaque-key-file", key, "--opaque-tweak", "orders"}
	out, errOut, code := runCLI(append([]string{"next", "-n", "200", "--data-dir", dir}, flags...)...)
	if code != 0 {
		t.Fatalf("next: exit %d: %s", code, errOut)
	}
	ids := strings.Fields(out)
	parsed, errOut, code := runCLI(append(append([]string{"parse", "--json"}, flags...), ids...)...)
	if code != 0 {
		t.Fatalf("parse: exit %d: %s", code, errOut)
	}
	var prev uint64
	opaqueDown := 0
	for i, line := range strings.Split(strings.TrimSpace(parsed), "\n") {
		var d struct {
			ID     string `json:"id"`
			UnixMS int64  `json:"unix_ms"`
		}
		if err := json.Unmarshal([]byte(line), &d); err != nil {
			t.Fatal(err)
		}
		plain, _ := strconv.ParseUint(d.ID, 10, 64)
		if i > 0 && plain <= prev {
			t.Fatalf("revealed IDs not increasing: %d after %d", plain, prev)
		}
		if i > 0 && ids[i] < ids[i-1] && len(ids[i]) == len(ids[i-1]) {
			opaqueDown++
		}
		if d.ID == ids[i] {
			t.Fatalf("ID %s came out plain", ids[i])
		}
		prev = plain
	}
	if opaqueDown < 40 {
		t.Fatalf("%d of 200 opaque IDs below their predecessor: they still show their order", opaqueDown)
	}
	refused := map[string][]string{
		"plain":         {},
		"another key":   {"--opaque", "--opaque-key-file", keyFile(t, testKeyB), "--opaque-tweak", "orders"},
		"another tweak": {"--opaque", "--opaque-key-file", key, "--opaque-tweak", "users"},
	}
	for name, flags := range refused {
		out, errOut, code := runCLI(append([]string{"next", "--data-dir", dir}, flags...)...)
		if code != 2 || out != "" || !strings.Contains(errOut, "opaque") {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit 2 naming the recorded opaque space", name, code, out, errOut)
		}
	}
}

// TestNextServerInOpaqueMode: firn next --server asks a server in opaque
// mode for one batch, permuted, and prints it: the answer says its IDs
// are unordered (Firn-Order), so the client checks them for distinct IDs
// only, where it refuses a snowflake batch out of order that says
// nothing.
func TestNextServerInOpaqueMode(t *testing.T) {
	ownNodes(t) // a layout other than the default: one node directory holds one
	flags := []string{"--opaque", "--opaque-key-file", keyFile(t, testKeyA), "--opaque-tweak", "orders"}
	base := startBeside(t, t.TempDir(), flags...)
	out, errOut, code := runCLI(append([]string{"next", "-n", "200", "--server", base}, flags...)...)
	ids := strings.Fields(out)
	if code != 0 || len(ids) != 200 {
		t.Fatalf("next --server: exit %d, %d IDs, %s", code, len(ids), errOut)
	}
	seen := map[string]bool{}
	for _, id := range ids {
		if seen[id] {
			t.Fatalf("ID %s twice", id)
		}
		seen[id] = true
	}
}

func TestOpaqueFlagsRefused(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no key", []string{"next", "--opaque"}, "opaque.key_file"},
		{"short key", []string{"next", "--opaque", "--opaque-key-file", keyFile(t, "00ff")}, "hex digits"},
		{"key without opaque", []string{"next", "--opaque-key-file", keyFile(t, testKeyA)}, "opaque mode is off"},
		{"layout under 20 bits", []string{"next", "--opaque", "--opaque-key-file", keyFile(t, testKeyA),
			"--epoch", strconv.FormatInt(time.Now().Add(-time.Minute).UnixMilli(), 10),
			"--time-bits", "12", "--node-bits", "2", "--sequence-bits", "4", "--tick", "1s"}, "needs 20 to 63"},
		{"missing file", []string{"parse", "--opaque", "--opaque-key-file", "/nonexistent/key", "1"}, "opaque.key_file"},
		{"parse without a key", []string{"parse", "--opaque", "1"}, "opaque.key_file"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args := tc.args
			if args[0] == "next" {
				args = append(args, "--data-dir", t.TempDir())
			}
			out, errOut, code := runCLI(args...)
			if code != 2 || !strings.Contains(errOut, tc.want) {
				t.Fatalf("exit %d, stdout %q, stderr %q; want exit 2 with %q", code, out, errOut, tc.want)
			}
			if strings.Contains(errOut, testKeyA) {
				t.Fatalf("the key is printed: %s", errOut)
			}
		})
	}
}

// TestServeOpaque: firn serve in opaque mode issues opaque IDs, refuses to
// decode them, and config print hides a key given in the file.
func TestServeOpaque(t *testing.T) {
	ownNodes(t) // a layout other than the default: one node directory holds one
	dir := t.TempDir()
	cfg := filepath.Join(dir, "firn.yaml")
	doc := "registry:\n  data_dir: " + filepath.Join(dir, "data") + "\nopaque:\n  snowflake: true\n  key: " + testKeyA + "\n  tweak: orders\n"
	if err := os.WriteFile(cfg, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runCLI("config", "print", "--config", cfg)
	if code != 0 || strings.Contains(out, testKeyA) || !strings.Contains(out, "REDACTED") {
		t.Fatalf("config print: exit %d, %s %s; want the key hidden", code, out, errOut)
	}
	p := startServe(t, "--config", cfg)
	var body struct{ IDs []string }
	if err := json.Unmarshal([]byte(fetch(t, p.base+"/v1/snowflake/batch?count=100")), &body); err != nil || len(body.IDs) != 100 {
		t.Fatalf("batch: %v", err)
	}
	resp, err := http.Get(p.base + "/v1/snowflake/decode/" + body.IDs[0])
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("decode in opaque mode: %d, want 400", resp.StatusCode)
	}
	p.stop(t)
	args := []string{"parse", "--json", "--opaque", "--opaque-key-file", keyFile(t, testKeyA), "--opaque-tweak", "orders"}
	out, errOut, code = runCLI(append(args, body.IDs...)...)
	if code != 0 {
		t.Fatalf("parse with the key: exit %d: %s", code, errOut)
	}
	var prev uint64
	for i, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var d struct {
			ID       string
			OpaqueID string `json:"opaque_id"`
		}
		if err := json.Unmarshal([]byte(line), &d); err != nil {
			t.Fatal(err)
		}
		if d.OpaqueID != body.IDs[i] {
			t.Fatalf("parse of %s gave opaque_id %q; want the ID given", body.IDs[i], d.OpaqueID)
		}
		plain, _ := strconv.ParseUint(d.ID, 10, 64)
		if i > 0 && plain <= prev {
			t.Fatalf("revealed batch not increasing at %d: %d after %d", i, plain, prev)
		}
		prev = plain
	}
	// In opaque mode the floor is an opaque ID, revealed before it is
	// compared: the last ID issued is below the next life's first ID.
	p = startServe(t, "--config", cfg, "--floor", body.IDs[99])
	p.stop(t)
	// A floor that reveals to an ID an hour ahead is refused.
	perm, err := opaque.New(mustKey(t, testKeyA), []byte("orders"), 63)
	if err != nil {
		t.Fatal(err)
	}
	l := snowflake.DefaultLayout()
	ahead, err := l.Compose(uint64(time.Until(l.Epoch.Add(-time.Hour))/-l.Tick), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	floor, _ := perm.Encode(ahead)
	_, errOut, code = runCLI("serve", "--config", cfg, "--http", "127.0.0.1:0", "--grpc", "off", "--floor", strconv.FormatUint(floor, 10))
	if code == 0 || !strings.Contains(errOut, "opaque; revealed") {
		t.Fatalf("floor an hour ahead: exit %d, %s", code, errOut)
	}
}

func mustKey(t *testing.T, hexKey string) []byte {
	t.Helper()
	k, err := opaque.ParseKey([]byte(hexKey))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestMigrateRefusesOpaque: opaque IDs are spread over the whole space,
// so no floor keeps them from an old system's IDs in one column.
func TestMigrateRefusesOpaque(t *testing.T) {
	_, errOut, code := runCLI("migrate", "check", "--from", "leaf", "--dsn", "root@tcp(127.0.0.1:1)/x", "--opaque", "--opaque-key-file", keyFile(t, testKeyA))
	if code != 2 || !strings.Contains(errOut, "whatever the floor") {
		t.Fatalf("exit %d, %s", code, errOut)
	}
}

func TestOpaqueRefusesWideForms(t *testing.T) {
	for _, f := range []string{"uuid", "ulid"} {
		_, errOut, code := runCLI("next", "--format", f, "--data-dir", t.TempDir(), "--opaque", "--opaque-key-file", keyFile(t, testKeyA))
		if code != 2 || !strings.Contains(errOut, "opaque mode hides") {
			t.Errorf("--format %s --opaque: exit %d, %s", f, code, errOut)
		}
	}
	if _, errOut, code := runCLI("next", "--format", "uuid", "--encoding", "base62", "--data-dir", t.TempDir()); code != 2 || !strings.Contains(errOut, "own text form") {
		t.Errorf("--format uuid --encoding base62: exit %d, %s", code, errOut)
	}
}

// TestParseNotesAFutureTime: an ID whose time under the layout lies in
// the future — what an opaque ID read without its key looks like — is
// decoded with a note saying so; a fresh ID has none, and --json keeps
// its shape.
func TestParseNotesAFutureTime(t *testing.T) {
	out, errOut, code := runCLI("parse", "5764607523034234879")
	if code != 0 || !strings.Contains(out, "note       the time is in the future") || !strings.Contains(out, "--opaque-key-file") {
		t.Fatalf("parse of a future ID: exit %d, %q, %q", code, out, errOut)
	}
	id, errOut, code := runCLI("next", "--data-dir", t.TempDir())
	if code != 0 {
		t.Fatal(errOut)
	}
	if out, _, _ := runCLI("parse", strings.TrimSpace(id)); strings.Contains(out, "note") {
		t.Fatalf("parse of a fresh ID: %q", out)
	}
	if out, _, _ := runCLI("parse", "--json", "5764607523034234879"); strings.Contains(out, "note") {
		t.Fatalf("parse --json changed shape: %q", out)
	}
}
