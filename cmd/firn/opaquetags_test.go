package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/firn-id/firn/idtext"
)

// opaqueTagsConfig writes a configuration serving tags secret and small
// opaque (small JavaScript-safe), order plain, from dir's data directory.
func opaqueTagsConfig(t *testing.T, dir, key, tweak string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "firn.yaml")
	doc := "registry:\n  data_dir: " + dir + "\nsegments:\n  javascript_safe: [small]\n"
	if key != "" {
		doc += "opaque:\n  tags: [secret, small]\n  key_file: " + keyFile(t, key) + "\n  tweak: " + tweak + "\n"
	}
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestOpaqueTags: tags listed in opaque.tags are created opaque, by the
// CLI or a server; their IDs reveal to the tag's plain IDs in order; the
// tag refuses every other setting (plain, another key, another tweak),
// at start and on first use; a plain tag beside them stays plain.
func TestOpaqueTags(t *testing.T) {
	dir := t.TempDir()
	cfg := opaqueTagsConfig(t, dir, testKeyA, "shop")
	run := func(args ...string) (string, string, int) { return runCLI(append(args, "--config", cfg)...) }
	for _, tag := range []string{"secret", "small", "order"} {
		if out, errOut, code := run("tag", "create", tag, "--step", "40"); code != 0 {
			t.Fatalf("create %s: exit %d: %s %s", tag, code, out, errOut)
		}
	}
	out, _, code := run("tag", "list")
	for _, want := range []string{"secret", "small", "order"} {
		line := lineWith(out, want+" ")
		opaque := strings.Contains(line, "opaque ff1:")
		if code != 0 || opaque != (want != "order") {
			t.Fatalf("list: exit %d; the line of %s: %q\n%s", code, want, line, out)
		}
	}
	ids := draw(t, run, "secret", 100)
	revealed := revealAll(t, run, "secret", ids)
	for i, x := range revealed {
		if x != int64(i)+1 || strconv.FormatInt(x, 10) == ids[i] {
			t.Fatalf("secret's ID %d is %s, revealing %d; want an opaque ID revealing %d", i, ids[i], x, i+1)
		}
	}
	for _, s := range draw(t, run, "small", 100) {
		if v, err := strconv.ParseInt(s, 10, 64); err != nil || v < 0 || v >= 1<<53 {
			t.Fatalf("small's ID %s: want below 2^53", s)
		}
	}
	if got := draw(t, run, "order", 3); got[0] != "1" {
		t.Fatalf("order: %v; want plain IDs from 1", got)
	}
	// Every other setting is refused: by the CLI on first use, by serve
	// at start.
	others := map[string]string{
		"plain":         opaqueTagsConfig(t, dir, "", ""),
		"another key":   opaqueTagsConfig(t, dir, testKeyB, "shop"),
		"another tweak": opaqueTagsConfig(t, dir, testKeyA, "shop2"),
	}
	for name, other := range others {
		out, errOut, code := runCLI("tag", "next", "secret", "--config", other)
		if code == 0 || out != "" || !strings.Contains(errOut, "permutation") {
			t.Errorf("%s: tag next: exit %d, %q %q; want a refusal naming the permutation", name, code, out, errOut)
		}
		_, errOut, code = runCLI("serve", "--config", other, "--http", "127.0.0.1:0", "--grpc", "off")
		if code != 2 || !strings.Contains(errOut, `tag "secret" records opaque IDs`) {
			t.Errorf("%s: serve: exit %d, %s; want exit 2 naming the tag", name, code, errOut)
		}
	}
	// A server with the tag's own settings serves it on, past the CLI's
	// draws, and reveals its IDs over the API only with scope reveal.
	p := startServe(t, "--config", cfg)
	var body struct{ IDs []string }
	if err := json.Unmarshal([]byte(fetch(t, p.base+"/v1/segments/secret/batch?count=50")), &body); err != nil || len(body.IDs) != 50 {
		t.Fatalf("batch: %v", err)
	}
	p.stop(t)
	for i, x := range revealAll(t, run, "secret", body.IDs) {
		if x <= revealed[len(revealed)-1] || (i > 0 && x <= revealed[len(revealed)-1]+int64(i-1)) {
			t.Fatalf("the server's ID %d reveals %d: not past the CLI's last, %d, in order", i, x, revealed[len(revealed)-1])
		}
	}
}

func lineWith(text, prefix string) string {
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	return ""
}

func draw(t *testing.T, run func(...string) (string, string, int), tag string, n int) []string {
	t.Helper()
	out, errOut, code := run("tag", "next", tag, "-n", strconv.Itoa(n))
	ids := strings.Fields(out)
	if code != 0 || len(ids) != n {
		t.Fatalf("tag next %s: exit %d, %d IDs: %s", tag, code, len(ids), errOut)
	}
	seen := map[string]bool{}
	for _, id := range ids {
		if seen[id] {
			t.Fatalf("tag next %s: %s twice", tag, id)
		}
		seen[id] = true
	}
	return ids
}

func revealAll(t *testing.T, run func(...string) (string, string, int), tag string, ids []string) []int64 {
	t.Helper()
	var out []int64
	for _, id := range ids {
		s, errOut, code := run("tag", "reveal", tag, id)
		x, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		if code != 0 || err != nil {
			t.Fatalf("tag reveal %s %s: exit %d, %q %s", tag, id, code, s, errOut)
		}
		out = append(out, x)
	}
	if len(ids) > 0 {
		y, _ := strconv.ParseUint(ids[0], 10, 64)
		s, errOut, code := run("tag", "reveal", tag, string(idtext.Base32.Append(nil, y)), "--encoding", "base32")
		if code != 0 || strings.TrimSpace(s) != strconv.FormatInt(out[0], 10) {
			t.Fatalf("tag reveal %s of %s in base32: exit %d, %q %s; want %d", tag, ids[0], code, s, errOut, out[0])
		}
	}
	return out
}

// TestOpaqueTagsRefusedOnLeafAndTinyidTables: their tables have no column
// for a tag's permutation, so opaque.tags with them is a configuration
// error, said before anything starts.
func TestOpaqueTagsRefusedOnLeafAndTinyidTables(t *testing.T) {
	key := keyFile(t, testKeyA)
	for _, format := range []string{"leaf", "tinyid"} {
		_, errOut, code := runCLI("config", "check", "--store", "postgres", "--dsn", "postgres://x@127.0.0.1:1/x", "--segments", format,
			"--opaque-tags", "order", "--opaque-key-file", key)
		if code != 2 || !strings.Contains(errOut, "opaque.tags") || !strings.Contains(errOut, "segments.format "+format) {
			t.Errorf("%s: exit %d, %s; want exit 2 naming opaque.tags and the format", format, code, errOut)
		}
	}
}
