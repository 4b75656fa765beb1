package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/firn-id/firn/internal/testenv"
	"github.com/firn-id/firn/internal/testserver"
	"github.com/firn-id/firn/snowflake"
)

// TestSiteCommands: firn site claim and release from the command line,
// with a site registry on etcd, another on PostgreSQL, and the ledger on
// PostgreSQL; every command on a site's namespace takes the site's
// setting, and a value has one site.
func TestSiteCommands(t *testing.T) {
	c := testserver.Etcd(t, 1)
	dsn := testenv.Endpoint(t, "FIRN_TEST_POSTGRES")
	table := "firn_nodes_site_" + suffix()
	t.Cleanup(func() { dropTables(t, "postgres", dsn, table) })
	lay := []string{"--node-bits", "5,5", "--node-names", "datacenter,worker"}
	ledger := []string{"--ledger-store", "postgres", "--ledger-dsn", dsn, "--ledger-table", table, "--ledger-namespace", "ledger-" + suffix()}
	eu := append([]string{"--store", "etcd", "--endpoints", strings.Join(c.Endpoints(), ","), "--namespace", "/eu-" + suffix() + "/"}, lay...)
	us := append([]string{"--store", "postgres", "--dsn", dsn, "--table", table, "--namespace", "us"}, lay...)
	euSite := []string{"--site", "eu", "--site-fields", "datacenter=1"}
	cmd := func(args ...[]string) []string {
		var out []string
		for _, a := range args {
			out = append(out, a...)
		}
		return out
	}

	if _, errOut, code := runCLI(cmd([]string{"site", "claim"}, euSite, eu, ledger)...); code == 0 || !strings.Contains(errOut, "--create-ledger") {
		t.Fatalf("site claim on a ledger that does not exist: exit %d, %q; want refused", code, errOut)
	}
	out, errOut, code := runCLI(cmd([]string{"site", "claim", "--create-ledger"}, euSite, eu, ledger)...)
	if code != 0 || !strings.Contains(out, `site "eu" (datacenter=1) claimed`) {
		t.Fatalf("site claim eu: exit %d, %q, %q", code, out, errOut)
	}
	if _, errOut, code = runCLI(cmd([]string{"next"}, eu)...); code == 0 || !strings.Contains(errOut, `belongs to site "eu"`) || !strings.Contains(errOut, "has no site setting") {
		t.Fatalf("next without the site: exit %d, %q; want refused naming eu", code, errOut)
	}
	if _, errOut, code = runCLI(cmd([]string{"admin", "advance", "--node", "40", "--to", "2026-11-22T14:05:00Z"}, eu)...); code == 0 || !strings.Contains(errOut, `belongs to site "eu"`) {
		t.Fatalf("admin advance without the site: exit %d, %q; want refused naming eu", code, errOut)
	}
	out, errOut, code = runCLI(cmd([]string{"next"}, euSite, eu)...)
	if code != 0 {
		t.Fatalf("next in site eu: exit %d, %q", code, errOut)
	}
	l, _ := snowflake.Preset("firn")
	l.Node = []snowflake.Field{{Name: "datacenter", Bits: 5}, {Name: "worker", Bits: 5}}
	id, _ := strconv.ParseUint(strings.TrimSpace(out), 10, 64)
	if p, err := l.Decompose(id); err != nil || p.Fields[0].Value != 1 {
		t.Fatalf("next in site eu printed %q: %+v, %v; want datacenter 1", out, p, err)
	}

	_, errOut, code = runCLI(cmd([]string{"site", "claim", "--site", "us", "--site-fields", "datacenter=1"}, us, ledger)...)
	if code == 0 || !strings.Contains(errOut, `held by site "eu"`) {
		t.Fatalf("site claim of eu's value by us: exit %d, %q; want refused naming eu", code, errOut)
	}
	if out, errOut, code = runCLI(cmd([]string{"site", "claim", "--site", "us", "--site-fields", "datacenter=2"}, us, ledger)...); code != 0 {
		t.Fatalf("site claim us: exit %d, %q, %q", code, out, errOut)
	}
	if _, errOut, code = runCLI(cmd([]string{"next", "--site", "us", "--site-fields", "datacenter=2"}, us)...); code != 0 {
		t.Fatalf("next in site us: exit %d, %q", code, errOut)
	}
	if _, errOut, code = runCLI(cmd([]string{"site", "claim", "--site", "eu", "--site-fields", "datacenter=40"}, eu, ledger)...); code != 2 || !strings.Contains(errOut, "5 bits (0..31)") {
		t.Fatalf("a value past the field's width: exit %d, %q; want exit 2 naming the width", code, errOut)
	}

	usSite := []string{"--site", "us", "--site-fields", "datacenter=2"}
	far := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	if _, errOut, code = runCLI(cmd([]string{"admin", "advance", "--node", "70", "--to", far}, usSite, us)...); code != 2 || !strings.Contains(errOut, "ahead of the clock in a site") {
		t.Fatalf("admin advance an hour ahead in a site: exit %d, %q; want refused", code, errOut)
	}
	if _, errOut, code = runCLI(cmd([]string{"next", "--start-ahead"}, usSite, us)...); code == 0 || !strings.Contains(errOut, "start ahead is refused in a site") {
		t.Fatalf("next --start-ahead in a site: exit %d, %q; want refused", code, errOut)
	}
	out, errOut, code = runCLI(cmd([]string{"site", "release", "--site-destroyed"}, usSite, us, ledger)...)
	if code != 0 || !strings.Contains(out, "--site-destroyed") {
		t.Fatalf("site release --site-destroyed: exit %d, %q, %q", code, out, errOut)
	}
	if floor := floorOf(t, out); floor < time.Now().Add(30*time.Minute).UnixMilli() {
		t.Fatalf("the floor of a destroyed site is %d, less than 30 minutes ahead: %q", floor, out)
	}
	if out, errOut, code = runCLI(cmd([]string{"site", "release"}, euSite, eu, ledger)...); code != 0 || !strings.Contains(out, "released") {
		t.Fatalf("site release eu: exit %d, %q, %q", code, out, errOut)
	}
	if _, errOut, code = runCLI(cmd([]string{"next"}, euSite, eu)...); code == 0 || !strings.Contains(errOut, "released") {
		t.Fatalf("next in a released site: exit %d, %q; want refused", code, errOut)
	}
}

var floorLine = regexp.MustCompile(`floor \S+ \((\d+)\)`)

// floorOf reads the floor, in Unix milliseconds, a release printed.
func floorOf(t *testing.T, out string) int64 {
	t.Helper()
	m := floorLine.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no floor in %q", out)
	}
	n, _ := strconv.ParseInt(m[1], 10, 64)
	return n
}

// TestSiteStandbyRelease: a standby claimed on a ledger in etcd, which
// has no clock to bound a destroyed site's IDs, is released with
// --standby, without a registry: no registry ever served it. Another site
// can then claim the value.
func TestSiteStandbyRelease(t *testing.T) {
	c := testserver.Etcd(t, 1)
	eps := strings.Join(c.Endpoints(), ",")
	lay := []string{"--node-bits", "5,5", "--node-names", "datacenter,worker"}
	ledger := []string{"--ledger-store", "etcd", "--ledger-endpoints", eps, "--ledger-namespace", "/ledger-" + suffix() + "/"}
	eu := append([]string{"--store", "etcd", "--endpoints", eps, "--namespace", "/eu-" + suffix() + "/"}, lay...)
	standby := []string{"--site", "eu", "--site-fields", "datacenter=9"}
	cmd := func(args ...[]string) []string {
		var out []string
		for _, a := range args {
			out = append(out, a...)
		}
		return out
	}
	if out, errOut, code := runCLI(cmd([]string{"site", "claim", "--standby", "--create-ledger"}, standby, lay, ledger)...); code != 0 || !strings.Contains(out, "standby") {
		t.Fatalf("site claim --standby: exit %d, %q, %q", code, out, errOut)
	}
	if _, errOut, code := runCLI(cmd([]string{"site", "release"}, standby, eu, ledger)...); code == 0 || !strings.Contains(errOut, "--standby") {
		t.Fatalf("site release of a standby through a registry: exit %d, %q; want refused naming --standby", code, errOut)
	}
	if _, errOut, code := runCLI(cmd([]string{"site", "release", "--site-destroyed"}, standby, lay, ledger)...); code == 0 || !strings.Contains(errOut, "--standby") {
		t.Fatalf("site release --site-destroyed of a standby on an etcd ledger: exit %d, %q; want refused naming --standby", code, errOut)
	}
	out, errOut, code := runCLI(cmd([]string{"site", "release", "--standby"}, standby, lay, ledger)...)
	if code != 0 || !strings.Contains(out, "released") || floorOf(t, out) != 0 {
		t.Fatalf("site release --standby: exit %d, %q, %q; want released at floor 0", code, out, errOut)
	}
	if out, errOut, code = runCLI(cmd([]string{"site", "release", "--standby"}, standby, lay, ledger)...); code != 0 || !strings.Contains(out, "released") {
		t.Fatalf("site release --standby again: exit %d, %q, %q", code, out, errOut)
	}
	if out, errOut, code = runCLI(cmd([]string{"site", "claim", "--site", "us", "--site-fields", "datacenter=9"}, eu, ledger)...); code != 0 || !strings.Contains(out, "segments: none on this value") {
		t.Fatalf("site claim of the released standby by another site: exit %d, %q, %q; want claimed, saying it serves no segments", code, out, errOut)
	}
	if _, errOut, code = runCLI(cmd([]string{"site", "release", "--standby"}, standby, lay, ledger)...); code == 0 || !strings.Contains(errOut, `"us"`) {
		t.Fatalf("site release --standby of a value another site holds: exit %d, %q; want refused naming us", code, errOut)
	}
}

// TestSiteTags: firn tag in two sites whose segment tables live in their
// PostgreSQL registries. A tag served before sites is taken into the
// first site's residue class at its claim, above what it issued; the
// second site's rows of it start above that; each site's IDs are in its
// class; a command without the site setting is refused, and so is a
// site's segment database of a format that records no class.
func TestSiteTags(t *testing.T) {
	dsn := testenv.Endpoint(t, "FIRN_TEST_POSTGRES")
	table, segA, segB := "firn_nodes_tags_"+suffix(), "firn_segs_eu_"+suffix(), "firn_segs_us_"+suffix()
	t.Cleanup(func() {
		dropTables(t, "postgres", dsn, table)
		dropTables(t, "postgres", dsn, segA)
		dropTables(t, "postgres", dsn, segB)
	})
	lay := []string{"--node-bits", "5,5", "--node-names", "datacenter,worker"}
	ledger := []string{"--ledger-store", "postgres", "--ledger-dsn", dsn, "--ledger-table", table, "--ledger-namespace", "ledger-" + suffix()}
	store := func(ns, segs string) []string {
		return append([]string{"--store", "postgres", "--dsn", dsn, "--table", table, "--namespace", ns, "--segments", "set", "--segment-table", segs}, lay...)
	}
	eu, us := store("eu", segA), store("us", segB)
	euSite, usSite := []string{"--site", "eu", "--site-fields", "datacenter=1"}, []string{"--site", "us", "--site-fields", "datacenter=2"}
	cmd := func(args ...[]string) []string {
		var out []string
		for _, a := range args {
			out = append(out, a...)
		}
		return out
	}
	ids := func(out string) []int64 {
		var got []int64
		for _, f := range strings.Fields(out) {
			n, err := strconv.ParseInt(f, 10, 64)
			if err != nil {
				t.Fatalf("firn tag next printed %q", out)
			}
			got = append(got, n)
		}
		return got
	}

	// Before sites: eu's table serves "orders" on every residue.
	if out, errOut, code := runCLI(cmd([]string{"tag", "create", "orders", "--step", "10"}, eu)...); code != 0 {
		t.Fatalf("tag create before sites: exit %d, %q, %q", code, out, errOut)
	}
	out, errOut, code := runCLI(cmd([]string{"tag", "next", "orders", "-n", "25"}, eu)...)
	if code != 0 {
		t.Fatalf("tag next before sites: exit %d, %q", code, errOut)
	}
	before := ids(out)
	last := before[len(before)-1]

	if out, errOut, code = runCLI(cmd([]string{"site", "claim", "--create-ledger"}, euSite, eu, ledger)...); code != 0 {
		t.Fatalf("site claim eu: exit %d, %q, %q", code, out, errOut)
	}
	if _, errOut, code = runCLI(cmd([]string{"tag", "next", "orders"}, eu)...); code == 0 || !strings.Contains(errOut, `belongs to site "eu"`) {
		t.Fatalf("tag next without the site: exit %d, %q; want refused naming eu", code, errOut)
	}
	if out, errOut, code = runCLI(cmd([]string{"site", "claim"}, usSite, us, ledger)...); code != 0 {
		t.Fatalf("site claim us: exit %d, %q, %q", code, out, errOut)
	}
	if out, errOut, code = runCLI(cmd([]string{"tag", "create", "orders", "--step", "100"}, usSite, us)...); code != 0 {
		t.Fatalf("tag create in site us: exit %d, %q, %q", code, out, errOut)
	}
	seen := map[int64]bool{}
	for _, id := range before {
		seen[id] = true
	}
	for _, p := range []struct {
		args  []string
		value int64
	}{{cmd(euSite, eu), 1}, {cmd(usSite, us), 2}, {cmd(euSite, eu), 1}} {
		out, errOut, code := runCLI(cmd([]string{"tag", "next", "orders", "-n", "5"}, p.args)...)
		if code != 0 {
			t.Fatalf("tag next in site %d: exit %d, %q", p.value, code, errOut)
		}
		for _, id := range ids(out) {
			if id%32 != p.value || id <= last || seen[id] {
				t.Fatalf("site %d issued %d: want %d mod 32, above %d (issued before sites), never seen before", p.value, id, p.value, last)
			}
			seen[id] = true
		}
	}
	leaf := cmd([]string{"tag", "list"}, euSite, lay, []string{"--store", "postgres", "--dsn", dsn, "--table", table, "--namespace", "eu", "--segment-store", "postgres", "--segment-dsn", dsn})
	if _, errOut, code = runCLI(leaf...); code != 2 || !strings.Contains(errOut, "residue class") {
		t.Fatalf("a site's segment database in Leaf's format: exit %d, %q; want exit 2 naming the residue class", code, errOut)
	}
}

// TestSiteLedgerAdviceNamesLedgerFlags: a ledger setting firn site
// refuses is named by the ledger's own flag (--ledger-dsn), the one the
// user has to give, never the registry's (--dsn); no server is dialled.
func TestSiteLedgerAdviceNamesLedgerFlags(t *testing.T) {
	base := []string{"site", "claim", "--node-bits", "5,5", "--node-names", "datacenter,worker", "--site", "eu", "--site-fields", "datacenter=1",
		"--store", "etcd", "--endpoints", "http://127.0.0.1:1"}
	for _, tc := range []struct {
		name   string
		ledger []string
		want   string // the flag the advice must name
		not    string // the registry's flag it must not
	}{
		{"etcd without endpoints", []string{"--ledger-store", "etcd"}, "needs --ledger-endpoints", " --endpoints"},
		{"postgres without a DSN", []string{"--ledger-store", "postgres"}, "needs --ledger-dsn", " --dsn"},
		{"a DSN the driver cannot read", []string{"--ledger-store", "postgres", "--ledger-dsn", ":::"}, "--ledger-dsn ", " --dsn"},
		{"an etcd endpoint that is no address", []string{"--ledger-store", "etcd", "--ledger-endpoints", "foo:bar"}, "--ledger-endpoints foo:bar", " --endpoints"},
		{"an etcd namespace that is no prefix", []string{"--ledger-store", "etcd", "--ledger-endpoints", "http://127.0.0.1:1", "--ledger-namespace", "l"}, "--ledger-namespace \"l\"", " --namespace"},
		{"a store that holds no ledger", []string{"--ledger-store", "local"}, "--ledger-store \"local\"", " --store"},
		{"no ledger store", nil, "--ledger-store", " --store"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, errOut, code := runCLI(append(slices.Clone(base), tc.ledger...)...)
			if code != 2 || !strings.Contains(errOut, tc.want) || strings.Contains(errOut, tc.not) {
				t.Fatalf("exit %d, %q; want exit 2 naming %q, not %q", code, errOut, tc.want, tc.not)
			}
		})
	}
}

// TestSiteClaimOnEtcdLedgerByDefault: firn site claim --create-ledger
// with an etcd ledger and no --ledger-namespace creates the ledger in
// etcd's default, a namespace etcd accepts, and claims the site there.
func TestSiteClaimOnEtcdLedgerByDefault(t *testing.T) {
	c := testserver.Etcd(t, 1)
	endpoints := strings.Join(c.Endpoints(), ",")
	args := []string{"site", "claim", "--create-ledger", "--node-bits", "5,5", "--node-names", "datacenter,worker",
		"--site", "eu", "--site-fields", "datacenter=1", "--store", "etcd", "--endpoints", endpoints, "--namespace", "/eu-" + suffix() + "/",
		"--ledger-store", "etcd", "--ledger-endpoints", endpoints}
	out, errOut, code := runCLI(args...)
	if code != 0 || !strings.Contains(out, `site "eu" (datacenter=1) claimed`) {
		t.Fatalf("site claim on an etcd ledger with no namespace set: exit %d, %q, %q", code, out, errOut)
	}
	resp, err := c.Client().Get(t.Context(), "/firn/firn-ledger/", clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil || resp.Count == 0 {
		t.Fatalf("no key under /firn/firn-ledger/ after the claim (%v): the ledger is elsewhere", err)
	}
}

// TestReleasedSiteServeStopsForGood: firn site release against a site
// whose firn serve runs ends its lease through the registry; the server
// stops issuing for good and says why: /readyz names the release and
// firn_site_revoked{site} reads 1 (0 while the claim stood).
func TestReleasedSiteServeStopsForGood(t *testing.T) {
	c := testserver.Etcd(t, 1)
	endpoints := strings.Join(c.Endpoints(), ",")
	site := []string{"--site", "eu", "--site-fields", "datacenter=1", "--node-bits", "5,5", "--node-names", "datacenter,worker",
		"--store", "etcd", "--endpoints", endpoints, "--namespace", "/eu-" + suffix() + "/",
		"--ledger-store", "etcd", "--ledger-endpoints", endpoints, "--ledger-namespace", "/ledger-" + suffix() + "/"}
	if out, errOut, code := runCLI(append([]string{"site", "claim", "--create-ledger"}, site...)...); code != 0 {
		t.Fatalf("site claim: exit %d, %q, %q", code, out, errOut)
	}
	addr := testserver.Addr(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- serve(ctx, append([]string{"--http", addr, "--grpc", "off", "--lease-ttl", "2s"}, site...), io.Discard)
	}()
	base := "http://" + addr
	waitReady(t, base, done)
	const metric = `firn_site_revoked{site="eu"} `
	if m := fetch(t, base+"/metrics"); !strings.Contains(m, metric+"0") {
		t.Fatalf("/metrics of a site whose claim stands has no %s0", metric)
	}
	if out, errOut, code := runCLI(append([]string{"site", "release"}, site...)...); code != 0 {
		t.Fatalf("site release: exit %d, %q, %q", code, out, errOut)
	}
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(fetch(t, base+"/metrics"), metric+"1"); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("firn_site_revoked still not 1 30 s after the release")
		}
	}
	resp, err := http.Get(base + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), "released its value") || !strings.Contains(string(body), "stopped issuing for good") {
		t.Fatalf("/readyz of a released site = %d %s; want 503 naming the release, for good", resp.StatusCode, body)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("serve of a released site returned %v at its stop", err)
	}
}

// TestTagTakesTheSet: firn tag with a configuration of segments.stores
// creates and draws a tag on the set, as firn serve serves it — never on
// a row of the registry's own that would issue the set's IDs again.
func TestTagTakesTheSet(t *testing.T) {
	p, q := guideDatabase(t, "tagset_p_"), guideDatabase(t, "tagset_q_")
	reg := guideDatabase(t, "tagset_reg_")
	cfg := filepath.Join(t.TempDir(), "firn.yaml")
	yaml := fmt.Sprintf("registry: {store: postgres, dsn: %q}\nsegments:\n  format: set\n  stores:\n    - {store: postgres, dsn: %q}\n    - {store: postgres, dsn: %q}\n", reg, p, q)
	if err := os.WriteFile(cfg, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, errOut, code := runCLI("tag", "create", "pay", "--step", "10", "--config", cfg); code != 0 {
		t.Fatalf("tag create on the set: exit %d, %q, %q", code, out, errOut)
	}
	for i, dsn := range []string{p, q} {
		out, errOut, code := runCLI("tag", "list", "--store", "postgres", "--dsn", dsn, "--segments", "set")
		if code != 0 || !strings.Contains(out, fmt.Sprintf("%d mod 2", i)) {
			t.Fatalf("store %d of the set after tag create: exit %d, %q, %q; want the tag in class %d mod 2", i, code, out, errOut, i)
		}
	}
	out, errOut, code := runCLI("tag", "next", "pay", "-n", "4", "--config", cfg)
	if code != 0 {
		t.Fatalf("tag next on the set: exit %d, %q", code, errOut)
	}
	for _, f := range strings.Fields(out) {
		if n, err := strconv.ParseInt(f, 10, 64); err != nil || n%2 != 0 {
			t.Fatalf("tag next on the set printed %q: want IDs of store 0's class, 0 mod 2", out)
		}
	}
}
