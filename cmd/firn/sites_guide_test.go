package main

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/firn-id/firn/internal/testenv"
	"github.com/firn-id/firn/snowflake"
)

// guideSites is the section of guideFile that provisions two sites on one
// machine.
const guideSites = "Several sites"

// sitesNotRun lists the section's blocks this test cannot run, by a
// command each holds, and why. Every entry must still be in a block.
var sitesNotRun = map[string]string{
	"firn site promote":           "needs a promoted replica of a registry, which carries the original's identity: one machine has none",
	"firn site release --standby": "releases the standby of the promotion's block, which is not run (TestSiteStandbyRelease runs the command)",
}

// TestGuideSites runs the commands of "Several sites" as written, in one
// shell, in a directory of its own: two sites, each on an etcd the guide
// starts, and the ledger in PostgreSQL. The substitutions are those of
// TestGuideOnPostgres: `firn` and `etcd` on PATH are the binary built here
// and FIRN_TEST_ETCD, the ledger's DSN is replaced by a database of the
// test's own on FIRN_TEST_POSTGRES, and every loopback address is given
// a free port. It checks what the guide shows each block printing (its
// ```text block, "…" standing for anything), and that each server's IDs
// carry its site's value, none twice, the released site's server stops
// and the other serves on.
func TestGuideSites(t *testing.T) {
	etcd := testenv.Endpoint(t, "FIRN_TEST_ETCD")
	realDSN := guideDatabase(t, "sites_")

	var blocks []docBlock
	skipped := map[string]bool{}
	for i, b := range docBlocks(t, guideFile, guideSites) {
		if cmd := notRun(b.text); cmd != "" {
			skipped[cmd] = true
			continue
		}
		// Each block its own heading, so that what it printed is its own.
		b.heading = fmt.Sprintf("%s, block %d", b.heading, i+1)
		blocks = append(blocks, b)
	}
	for cmd := range sitesNotRun {
		if !skipped[cmd] {
			t.Errorf("sitesNotRun lists %q, which no block of %q has any more", cmd, guideSites)
		}
	}
	var dsn string
	for _, b := range blocks {
		if m := regexp.MustCompile(`--ledger-dsn '([^']+)'`).FindStringSubmatch(b.text); m != nil && dsn == "" {
			dsn = m[1]
		} else if m != nil && m[1] != dsn {
			t.Fatalf("the guide names two ledger DSNs, %q and %q: want one, which the test replaces", dsn, m[1])
		}
	}
	if dsn == "" {
		t.Fatalf("no block of %q names the ledger's DSN (--ledger-dsn '…')", guideSites)
	}

	printed := runGuide(t, blocks, map[string]string{"etcd": etcd}, dsn, realDSN)
	for _, b := range blocks {
		if b.output != "" {
			checkShown(t, b, printed[b.heading])
		}
	}
	checkSiteIDs(t, blocks, printed)
}

// notRun returns the command of sitesNotRun that block holds, if any.
func notRun(block string) string {
	for cmd := range sitesNotRun {
		if strings.Contains(block, cmd) {
			return cmd
		}
	}
	return ""
}

// checkShown checks that block printed the lines its ```text block shows,
// in order, "…" in them standing for anything.
func checkShown(t *testing.T, b docBlock, out string) {
	t.Helper()
	lines := strings.Split(out, "\n")
	for _, want := range strings.Split(strings.TrimSpace(b.output), "\n") {
		re := regexp.MustCompile("^" + strings.ReplaceAll(regexp.QuoteMeta(want), "…", ".*") + "$")
		for len(lines) > 0 && !re.MatchString(lines[0]) {
			lines = lines[1:]
		}
		if len(lines) == 0 {
			t.Errorf("%s printed no line %q (in the guide's order):\n%s\nthe block:\n%s", b.heading, want, out, b.text)
			return
		}
		lines = lines[1:]
	}
}

var (
	// serveSite reads a server's address and its site's value from a
	// firn serve command of the guide.
	serveSite = regexp.MustCompile(`firn serve --http (\S+) .*--site-fields datacenter=([0-9]+)`)
	// nextFrom reads the server a firn next command asks, and the rest
	// of the command, where -n says how many IDs.
	nextFrom = regexp.MustCompile(`(?m)^firn next --server http://(\S+)(.*)$`)
	countArg = regexp.MustCompile(` -n ([0-9]+)`)
	idLine   = regexp.MustCompile(`^[0-9]+$`)
)

// checkSiteIDs checks the IDs the guide's firn next commands printed:
// each carries the value of the site whose server it asked, none is
// printed twice, and after the release only the other site's server
// issues (the released site's /readyz is not ready).
func checkSiteIDs(t *testing.T, blocks []docBlock, printed map[string]string) {
	t.Helper()
	l, ok := snowflake.Preset("firn")
	if !ok {
		t.Fatal("no preset firn")
	}
	l.Node = []snowflake.Field{{Name: "datacenter", Bits: 5}, {Name: "worker", Bits: 5}}
	value := map[string]uint64{} // server address → its site's value
	seen := map[uint64]string{}
	values := map[uint64]bool{} // the site values the IDs carry
	released := false
	for _, b := range blocks {
		text := strings.ReplaceAll(b.text, "\\\n", " ")
		for _, m := range serveSite.FindAllStringSubmatch(text, -1) {
			v, _ := strconv.ParseUint(m[2], 10, 64)
			value[m[1]] = v
		}
		var asked []string // the server of each ID the block prints, in order
		for _, m := range nextFrom.FindAllStringSubmatch(text, -1) {
			n := 1
			if c := countArg.FindStringSubmatch(m[2]); c != nil {
				n = atoi(t, c[1])
			}
			for range n {
				asked = append(asked, m[1])
			}
		}
		var ids []uint64
		for _, line := range strings.Split(printed[b.heading], "\n") {
			if idLine.MatchString(line) {
				id, _ := strconv.ParseUint(line, 10, 64)
				ids = append(ids, id)
			}
		}
		if len(asked) == 0 {
			continue
		}
		if len(ids) != len(asked) {
			t.Fatalf("%s asked for %d IDs and printed %d:\n%s", b.heading, len(asked), len(ids), printed[b.heading])
		}
		for i, id := range ids {
			server := asked[i]
			want, ok := value[server]
			if !ok {
				t.Fatalf("%s asks %s, which no firn serve of the guide listens on", b.heading, server)
			}
			p, err := l.Decompose(id)
			if err != nil {
				t.Fatal(err)
			}
			if p.Fields[0].Value != want {
				t.Errorf("ID %d from %s: datacenter %d, want its site's value %d", id, server, p.Fields[0].Value, want)
			}
			if prev, ok := seen[id]; ok {
				t.Errorf("ID %d printed twice: in %s and in %s", id, prev, b.heading)
			}
			seen[id] = b.heading
			values[p.Fields[0].Value] = true
		}
		if strings.Contains(b.text, "firn site release") {
			released = true
			if !strings.Contains(printed[b.heading], `"not_ready"`) {
				t.Errorf("after the release the released site's server is still ready:\n%s", printed[b.heading])
			}
		}
	}
	if len(values) < 2 || !released {
		t.Fatalf("the guide printed IDs of %d site values, released a site %v: want IDs of two sites, and a release", len(values), released)
	}
}
