package main

import (
	"strings"
	"testing"

	"github.com/firn-id/firn/cmd/firn/internal/config"
)

// helpUses are the settings each command's help lists: those it binds as
// flags (firn migrate's --dsn is the old system's database, and its
// segment and opaque flags are refused or ZooKeeper's named together).
var helpUses = map[string][]string{
	"serve":   nil, // every setting
	"next":    nextUses,
	"admin":   adminUses,
	"tag":     append(tagUses("list"), tagUses("reveal")...),
	"parse":   parseUses,
	"layout":  {"layout"},
	"site":    siteUses,
	"migrate": append([]string{"layout"}, without(migrateRegistryUses, "registry.dsn")...),
}

// TestHelpListsEverySetting: each command's help has an entry for the
// flag of every setting it takes, so a new setting cannot be bound
// without its help (which comes from its field).
func TestHelpListsEverySetting(t *testing.T) {
	for name, uses := range helpUses {
		out, _, _ := runCLI("help", name)
		for _, f := range config.Flags(uses...) {
			if !strings.Contains(out, "\n  --"+f+" ") && !strings.Contains(out, "\n  --"+f+"\n") && !strings.Contains(out, "\n  --"+f+"=") {
				t.Errorf("firn help %s has no entry for --%s", name, f)
			}
		}
	}
}

// TestHelpOneColumn: in the help of the commands whose flags are
// settings, every flag's text starts at one column, the settings' and
// the command's own alike.
func TestHelpOneColumn(t *testing.T) {
	for _, name := range []string{"serve", "next", "tag", "admin", "migrate", "layout"} {
		out, _, _ := runCLI("help", name)
		for _, line := range strings.Split(out, "\n") {
			if !strings.HasPrefix(line, "  -") {
				continue
			}
			gap := strings.Index(line[2:], "  ")
			if gap >= 0 && len(line)-len(strings.TrimLeft(line[2+gap:], " ")) != config.UsageColumn {
				t.Errorf("firn help %s: text not at column %d: %q", name, config.UsageColumn, line)
			}
		}
	}
}

// TestHelpIsTheFieldsHelp: serve's help carries each setting's help as
// config.Usage makes it from the field, not a copy.
func TestHelpIsTheFieldsHelp(t *testing.T) {
	out, _, _ := runCLI("help", "serve")
	for _, uses := range [][]string{serveOwnUses, {"layout"}, without(storeUses, "registry.store")} {
		if !strings.Contains(out, config.Usage(uses...)) {
			t.Errorf("firn help serve lacks config.Usage(%s)", strings.Join(uses, ", "))
		}
	}
}

// TestEveryCommandTakesHelp: firn NAME --help (and -h, -help) prints
// what firn help NAME prints and exits 0, for every command, those
// that expect a subcommand first (firn site) too.
func TestEveryCommandTakesHelp(t *testing.T) {
	for _, c := range commands() {
		want, _, _ := runCLI("help", c.name)
		for _, flag := range []string{"--help", "-h", "-help"} {
			out, errOut, code := runCLI(c.name, flag)
			if code != 0 || out != want {
				t.Errorf("firn %s %s: exit %d, stderr %q, %d bytes of stdout; want exit 0 and firn help %s's %d bytes", c.name, flag, code, errOut, len(out), c.name, len(want))
			}
		}
	}
}
