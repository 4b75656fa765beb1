package config_test

import (
	"strings"
	"testing"

	"github.com/firn-id/firn/cmd/firn/internal/config"
)

// TestExcerpt: an excerpt writes the settings that differ from the
// defaults and those kept, redacted, with comments above their settings,
// lists on one line and strings quoted (in a list all, elsewhere those
// other than plain words); Load reads it
// back as the configuration it was written from.
func TestExcerpt(t *testing.T) {
	c := config.Default()
	c.Registry.Store, c.Registry.DSN, c.Registry.ReservedNodes = "mysql", "u:pw@tcp(h)/db", []uint64{1, 2}
	c.HTTP.Listen = config.AddressPlaceholder + ":8080"
	c.Auth.Anonymous = []string{"snowflake", "tag:order"}
	hide := func(kind, v string) string { return strings.ReplaceAll(v, "pw", "REDACTED") }
	out, err := c.Excerpt(hide, config.Excerpt{Keep: []string{"segments.format"},
		Comments: map[string]string{"http.listen": "# put the address here"}})
	if err != nil {
		t.Fatal(err)
	}
	got := string(out)
	for _, want := range []string{"# put the address here\n  listen: '<ADDRESS>:8080'\n", "store: mysql\n", "dsn: 'u:REDACTED@tcp(h)/db'\n",
		"reserved_nodes: [1, 2]\n", "anonymous: ['snowflake', 'tag:order']\n", "segments:\n  format: leaf\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("excerpt lacks %q:\n%s", want, got)
		}
	}
	for _, not := range []string{"pw", "grpc", "lease_ttl", "max_batch", "log:"} {
		if strings.Contains(got, not) {
			t.Errorf("excerpt has %q (a secret, or a default not kept):\n%s", not, got)
		}
	}
	back, err := config.Load(out, nil)
	if err != nil {
		t.Fatalf("Load of the excerpt: %v\n%s", err, got)
	}
	if back.HTTP.Listen != c.HTTP.Listen || len(back.Auth.Anonymous) != 2 || len(back.Registry.ReservedNodes) != 2 || back.Registry.Store != "mysql" {
		t.Errorf("read back as %+v", back)
	}
}
