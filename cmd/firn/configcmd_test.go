package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestConfigCheckNotes: config check names what changes the IDs or who
// may draw them — opaque mode (by fingerprint, never the key), the
// JavaScript-safe bounds, borrowing, the tokens and anonymous grants.
func TestConfigCheckNotes(t *testing.T) {
	dir := t.TempDir()
	key := "00112233445566778899aabbccddeeff"
	doc := "registry:\n  data_dir: " + dir + "\nlayout:\n  preset: js53\nsnowflake:\n  javascript_safe: true\n  exhausted: borrow\n  max_borrow: 2s\n" +
		"segments:\n  javascript_safe: [order, user]\nopaque:\n  snowflake: true\n  tags: [order]\n  key: " + key + "\n" +
		"auth:\n  tokens:\n    - {name: a, secret: s3cret-token-value, scopes: [snowflake]}\n  anonymous: [\"tag:order\"]\n"
	path := filepath.Join(dir, "firn.yaml")
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runCLI("config", "check", "--config", path)
	if code != 0 {
		t.Fatalf("config check: exit %d, %q", code, errOut)
	}
	for _, want := range []string{"config ok: http ", "  opaque: every snowflake ID is permuted (ff1:", "  opaque: the IDs of tags order are permuted", "snowflake IDs stay below 2^53",
		"the IDs of tags order,user stay below 2^53", "  exhausted: borrow: when a tick's sequence runs out, the next ticks are taken, up to 2s ahead",
		"  auth: 1 tokens; anonymous scopes tag:order"} {
		if !strings.Contains(out, want) {
			t.Errorf("config check says %q; want %q in it", out, want)
		}
	}
	if strings.Contains(out+errOut, key) || strings.Contains(out+errOut, "s3cret") {
		t.Errorf("config check printed a secret: %q %q", out, errOut)
	}
	out, _, _ = runCLI("config", "check", "--data-dir", dir)
	if !strings.Contains(out, "auth: 0 tokens (no token: anyone on loopback, and loopback only)") || strings.Contains(out, "opaque") || strings.Contains(out, "borrow") {
		t.Errorf("config check of the defaults: %q", out)
	}
}
