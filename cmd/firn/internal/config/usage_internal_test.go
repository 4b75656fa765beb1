package config

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite docs/config.md's table of settings from the fields' help")

// TestEverySettingHasHelp: every setting carries its help in its tag, a
// {…} in it names a bound or a setting, and a default read from Default
// is not written out again (it would drift from the value).
func TestEverySettingHasHelp(t *testing.T) {
	paths := map[string]bool{}
	for _, s := range settings() {
		paths[s.path] = true
	}
	for _, s := range settings() {
		if strings.TrimSpace(s.help) == "" {
			t.Errorf("%s has no help tag", s.path)
		}
		for _, m := range helpRef.FindAllStringSubmatch(s.help, -1) {
			if _, ok := bounds[m[1]]; !ok && !paths[m[1]] {
				t.Errorf("%s: help names {%s}, neither a bound nor a setting", s.path, m[1])
			}
		}
		if s.def != "" && strings.Contains(s.help, "default "+s.def) {
			t.Errorf("%s: help writes out its default %s, which Usage adds from Default", s.path, s.def)
		}
	}
}

// TestUsageFitsOneColumn: every entry's text starts at UsageColumn and no
// line passes UsageWidth unless one word does.
func TestUsageFitsOneColumn(t *testing.T) {
	for _, line := range strings.Split(strings.TrimSuffix(Usage(), "\n"), "\n") {
		if strings.HasPrefix(line, "  --") {
			// The flag, then its text at the column, or the flag alone.
			if gap := strings.Index(line[2:], "  "); gap >= 0 && len(line)-len(strings.TrimLeft(line[2+gap:], " ")) != UsageColumn {
				t.Errorf("help not at column %d: %q", UsageColumn, line)
			}
		} else if !strings.HasPrefix(line, strings.Repeat(" ", UsageColumn)) || line[UsageColumn] == ' ' {
			t.Errorf("continuation not at column %d: %q", UsageColumn, line)
		}
		if len(line) > UsageWidth && strings.Contains(strings.TrimSpace(line), " ") {
			t.Errorf("line longer than %d: %q", UsageWidth, line)
		}
	}
}

// TestRegisterGivesHelp: a flag bound by Register carries its setting's
// help, references resolved to flags.
func TestRegisterGivesHelp(t *testing.T) {
	var c Config
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	c.Register(fs, "segments.dsn")
	f := fs.Lookup("segment-dsn")
	if f == nil || f.Usage != "the database of --segment-store, written as for --dsn" {
		t.Fatalf("--segment-dsn's usage: %+v", f)
	}
}

// TestDocsTable: docs/config.md's table of settings is Table(), made from
// the fields; go test ./cmd/firn/internal/config -run TestDocsTable -update
// rewrites it after a setting or its help changes.
func TestDocsTable(t *testing.T) {
	const begin, end = "<!-- settings table: made from cmd/firn/internal/config's help tags; go test ./cmd/firn/internal/config -run TestDocsTable -update -->\n", "<!-- end of settings table -->"
	path := filepath.Join("..", "..", "..", "..", "docs", "config.md")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	i, j := strings.Index(doc, begin), strings.Index(doc, end)
	if i < 0 || j < i {
		t.Fatalf("docs/config.md has no table between %q and %q", begin, end)
	}
	want := doc[:i+len(begin)] + Table() + doc[j:]
	if want == doc {
		return
	}
	if *update {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("docs/config.md's table of settings differs from the fields' help: run go test ./cmd/firn/internal/config -run TestDocsTable -update")
}
