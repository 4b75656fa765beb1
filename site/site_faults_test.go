package site_test

// Fault sequences against the site protocol. Each test states
// a sequence of operations that are each valid on their own and asserts
// the invariant the design promises: a new holder of a node value starts
// at or after every HWM a previous (or concurrent) holder may still issue
// up to. All run on nodeidtest.MemStore (in-memory registries and
// ledger), whose Recorder semantics the conformance suite pins to the
// real stores'.

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/firn-id/firn/nodeid"
	"github.com/firn-id/firn/nodeid/nodeidtest"
	"github.com/firn-id/firn/site"
)

var siteLayout = nodeidtest.Layout

// siteSite is the site of value v with 4 nodes (node bits 3: values 0, 1).
func siteSite(name string, v uint64) nodeid.Site {
	return nodeid.Site{Name: name, Fields: "dc=" + string(rune('0'+v)), First: v * 4, Count: 4, Values: 2}
}

// siteLedger opens a ledger whose namespaces are MemStores.
func siteLedger(t *testing.T) *site.Ledger {
	t.Helper()
	var mu sync.Mutex
	stores := map[string]*nodeidtest.MemStore{}
	open := func(ns string) (nodeid.Recorder, error) {
		mu.Lock()
		defer mu.Unlock()
		if stores[ns] == nil {
			stores[ns] = nodeidtest.NewMemStore()
		}
		return stores[ns], nil
	}
	l, err := site.OpenLedger(context.Background(), open, "ledger", siteLayout, site.Spec{Count: 4}, true)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func siteStore(identity string) *nodeidtest.MemStore {
	s := nodeidtest.NewMemStore()
	s.SetIdentity(identity)
	return s
}

func siteCfg(s nodeid.Site) nodeid.Config {
	return nodeid.Config{NodeBits: 3, Layout: siteLayout, TTL: 10 * time.Second, Site: s}
}

func siteAcquire(t *testing.T, st nodeid.Store, cfg nodeid.Config) (*nodeid.Lease, error) {
	t.Helper()
	l, err := nodeid.Acquire(context.Background(), st, cfg)
	if err == nil {
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			_ = l.Close(ctx)
		})
	}
	return l, err
}

// siteCopy returns a copy of st's data (record and HWMs) as a backup
// restored into another server would hold it: another identity.
func siteCopy(t *testing.T, st *nodeidtest.MemStore, identity string) *nodeidtest.MemStore {
	t.Helper()
	ctx := context.Background()
	c := siteStore(identity)
	rec, err := st.Record(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Rerecord(ctx, nodeid.LayoutID{}, rec); err != nil {
		t.Fatal(err)
	}
	hwms, _ := st.HWMs(ctx)
	for n, h := range hwms {
		c.SetHWM(n, h)
	}
	return c
}

// overlap fails t when lease b, on the same node value as the live lease
// a, may issue a tick a may still issue: b starts below a's reservation.
func overlap(t *testing.T, a, b *nodeid.Lease) {
	t.Helper()
	if a.Node() != b.Node() {
		t.Fatalf("leases on nodes %d and %d: the sequence did not reach one node", a.Node(), b.Node())
	}
	if a.Err() != nil {
		t.Fatalf("first lease already lost (%v): no overlap shown", a.Err())
	}
	if b.Start() < a.Limit() {
		t.Errorf("DUPLICATE: two live leases of node value %d: the first may issue up to %d, the second starts at %d "+
			"(and issues from its clock, %d now): every tick in [max(start, now), %d) can be issued twice",
			a.Node(), a.Limit(), b.Start(), time.Now().UnixMilli(), a.Limit())
	}
}

// TestSiteReleaseOnRestoredCopy: ReleaseSite checks the registry's
// record and random ID but never its native identity. A backup of the
// site's registry restored on another server carries the record, so a
// release run against it (a DR drill, a wrong endpoint) marks the copy
// released, records the copy's stale HWMs as the value's floor, and frees
// the value in the ledger — while the real registry was never marked and
// keeps serving. Another site then takes the value below the live site's
// HWM.
func TestSiteReleaseOnRestoredCopy(t *testing.T) {
	ctx := context.Background()
	l := siteLedger(t)
	eu, us := siteSite("eu", 1), siteSite("us", 1)
	a := siteStore("server-a")
	if _, err := l.ClaimSite(ctx, site.Registry{Store: a, Where: "a"}, eu, siteLayout); err != nil {
		t.Fatal(err)
	}
	backup := siteCopy(t, a, "server-b") // taken at provisioning: no HWM yet

	live, err := siteAcquire(t, a, siteCfg(eu)) // eu serves on its real registry
	if err != nil {
		t.Fatal(err)
	}

	floor, err := l.ReleaseSite(ctx, site.Registry{Store: backup, Where: "b"}, eu, siteLayout)
	if err != nil {
		t.Logf("release on the restored copy refused: %v", err)
		return // the fix
	}
	t.Logf("release on a restored copy (identity server-b, claim's server-a) accepted, floor %d; live lease limit %d", floor, live.Limit())
	c := siteStore("server-c")
	if _, err := l.ClaimSite(ctx, site.Registry{Store: c, Where: "c"}, us, siteLayout); err != nil {
		t.Fatalf("claim of the released value: %v", err)
	}
	other, err := siteAcquire(t, c, siteCfg(us))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Record(ctx); err == nil {
		if rec, _, _ := nodeid.ParseSiteRecord(mustRecord(t, a)); !rec.Released {
			t.Logf("the real registry is not released: eu keeps serving")
		}
	}
	overlap(t, live, other)
}

// TestSiteClaimOnRestoredCopy: ClaimSite on a registry whose record is
// already the site's accepts it when the record's random registry ID
// matches the ledger's, whatever its native identity; and it then
// rewrites the record's Native to the copy's own. A copy restored on
// another server passes every later checkSite, although the design
// (and checkSite's own message) says such a copy serves only after
// `site claim --replace-registry`. The copy's HWMs are the backup's:
// its processes start below what the live registry's processes reserved.
func TestSiteClaimOnRestoredCopy(t *testing.T) {
	ctx := context.Background()
	l := siteLedger(t)
	eu := siteSite("eu", 1)
	a := siteStore("server-a")
	if _, err := l.ClaimSite(ctx, site.Registry{Store: a, Where: "a"}, eu, siteLayout); err != nil {
		t.Fatal(err)
	}
	backup := siteCopy(t, a, "server-b")
	if _, err := siteAcquire(t, backup, siteCfg(eu)); !errors.Is(err, nodeid.ErrSite) {
		t.Fatalf("acquire on the copy before claim: %v; want ErrSite (identity check)", err)
	}
	live, err := siteAcquire(t, a, siteCfg(eu))
	if err != nil {
		t.Fatal(err)
	}
	res, err := l.ClaimSite(ctx, site.Registry{Store: backup, Where: "b"}, eu, siteLayout)
	if err != nil {
		t.Logf("claim on the restored copy refused: %v", err)
		return // the fix
	}
	t.Logf("plain ClaimSite on a copy with another identity accepted: record native now %q", res.Record.Native)
	dup, err := siteAcquire(t, backup, siteCfg(eu))
	if err != nil {
		t.Fatalf("acquire on the copy: %v", err)
	}
	overlap(t, live, dup)
}

// TestSiteTwoNamespacesOneServer: for a registry with no site record yet,
// ClaimSite accepts a value the ledger gives the same site on another
// registry whenever the two stores report the same native identity (meant
// for re-running a claim cut short). But Identity is per server — every
// namespace on one PostgreSQL, MySQL or etcd cluster reports the same —
// so a second namespace on the same server becomes a second registry of
// the same site value, with the first one's registry ID, and both lease
// the same nodes from independent HWMs.
func TestSiteTwoNamespacesOneServer(t *testing.T) {
	ctx := context.Background()
	l := siteLedger(t)
	eu := siteSite("eu", 1)
	ns1, ns2 := siteStore("pg-cluster-1"), siteStore("pg-cluster-1") // two namespaces, one server
	if _, err := l.ClaimSite(ctx, site.Registry{Store: ns1, Where: "pg/ns1"}, eu, siteLayout); err != nil {
		t.Fatal(err)
	}
	a, err := siteAcquire(t, ns1, siteCfg(eu))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.ClaimSite(ctx, site.Registry{Store: ns2, Where: "pg/ns2"}, eu, siteLayout); err != nil {
		t.Logf("second namespace refused: %v", err)
		return // the fix
	}
	b, err := siteAcquire(t, ns2, siteCfg(eu))
	if err != nil {
		t.Fatal(err)
	}
	overlap(t, a, b)
}

// siteHook is a Recorder that runs a function once, before forwarding one
// of its calls: the other command's steps that a race interleaves there.
type siteHook struct {
	nodeid.Recorder
	mu       sync.Mutex
	onHWMs   func()
	onClaim  func()
	failNext error // the next Rerecord fails with it, after nothing is written
}

func (h *siteHook) take(f *func()) func() {
	h.mu.Lock()
	defer h.mu.Unlock()
	g := *f
	*f = nil
	return g
}

func (h *siteHook) HWMs(ctx context.Context) (map[uint64]int64, error) {
	if f := h.take(&h.onHWMs); f != nil {
		f()
	}
	return h.Recorder.HWMs(ctx)
}

func (h *siteHook) Claim(ctx context.Context, req nodeid.ClaimRequest) (nodeid.Claim, error) {
	if f := h.take(&h.onClaim); f != nil {
		f()
	}
	return h.Recorder.Claim(ctx, req)
}

func (h *siteHook) Rerecord(ctx context.Context, old, new nodeid.LayoutID) error {
	h.mu.Lock()
	err := h.failNext
	h.failNext = nil
	h.mu.Unlock()
	if err != nil {
		return err
	}
	return h.Recorder.Rerecord(ctx, old, new)
}

// TestSiteReleaseRacingClaim: `site release` and a re-run of `site
// claim` for the same site and registry. Release reads the ledger (not
// released), writes the released marker; the claim then reads the
// released record and the ledger's still-unreleased claim of the same
// registry, and rewrites the record live (its "same registry" path writes
// nothing to the ledger); release reads the HWMs and writes the ledger
// released — its compare-and-set is against a ledger record nobody
// changed, so it succeeds. The ledger frees the value while the registry
// serves it: the next site starts at the floor the live site keeps
// issuing past.
func TestSiteReleaseRacingClaim(t *testing.T) {
	ctx := context.Background()
	l := siteLedger(t)
	eu, us := siteSite("eu", 1), siteSite("us", 1)
	mem := siteStore("server-a")
	a := &siteHook{Recorder: mem}
	if _, err := l.ClaimSite(ctx, site.Registry{Store: a, Where: "a"}, eu, siteLayout); err != nil {
		t.Fatal(err)
	}
	var claimErr error
	a.onHWMs = func() { // release: marker written, HWMs not yet read
		_, claimErr = l.ClaimSite(ctx, site.Registry{Store: a, Where: "a"}, eu, siteLayout)
	}
	floor, err := l.ReleaseSite(ctx, site.Registry{Store: a, Where: "a"}, eu, siteLayout)
	if err != nil || claimErr != nil {
		t.Logf("release %v, racing claim %v: one refused", err, claimErr)
		return
	}
	rec, _, _ := nodeid.ParseSiteRecord(mustRecord(t, mem))
	c, _, _, _ := l.Claim(ctx, 1)
	t.Logf("after both: ledger released=%v floor=%d; registry record released=%v", c.Released, floor, rec.Released)

	live, err := siteAcquire(t, mem, siteCfg(eu))
	if err != nil {
		t.Logf("eu's registry refuses claims: %v", err)
		return
	}
	b := siteStore("server-c")
	if _, err := l.ClaimSite(ctx, site.Registry{Store: b, Where: "c"}, us, siteLayout); err != nil {
		t.Logf("us refused: %v", err)
		return
	}
	other, err := siteAcquire(t, b, siteCfg(us))
	if err != nil {
		t.Fatal(err)
	}
	overlap(t, live, other)
}

// TestSiteStaleFloorAcrossReclaim: Acquire reads the site record's floor
// in checkSite, then claims in a separate call; the claim's fence is the
// record's fingerprint (etcd: the revision read at Claim time), and a
// site record's fingerprint covers layout, site name and nodes — not the
// floor, registry ID or release. A process paused between the two reads
// (GC, network) while the site moves to another registry and back
// (release here, claim there, issue, release there, claim here again)
// claims under a record with the same fingerprint and a higher floor, and
// starts from the floor it read first.
func TestSiteStaleFloorAcrossReclaim(t *testing.T) {
	ctx := context.Background()
	l := siteLedger(t)
	eu := siteSite("eu", 1)
	mem1 := siteStore("server-1")
	r1 := &siteHook{Recorder: mem1}
	r2 := siteStore("server-2")
	if _, err := l.ClaimSite(ctx, site.Registry{Store: r1, Where: "r1"}, eu, siteLayout); err != nil {
		t.Fatal(err)
	}
	var f2 int64
	var hookErr error
	r1.onClaim = func() { // the process has passed checkSite (floor 0) and is about to claim
		step := func(err error) {
			if err != nil && hookErr == nil {
				hookErr = err
			}
		}
		_, err := l.ReleaseSite(ctx, site.Registry{Store: r1, Where: "r1"}, eu, siteLayout)
		step(err)
		_, err = l.ClaimSite(ctx, site.Registry{Store: r2, Where: "r2"}, eu, siteLayout)
		step(err)
		cfg := siteCfg(eu)
		cfg.Window = 5 * time.Second
		l2, err := siteAcquire(t, r2, cfg)
		step(err)
		if l2 != nil {
			t.Logf("eu on r2: node %d issues up to %d", l2.Node(), l2.Limit())
		}
		f2, err = l.ReleaseSite(ctx, site.Registry{Store: r2, Where: "r2"}, eu, siteLayout)
		step(err)
		_, err = l.ClaimSite(ctx, site.Registry{Store: r1, Where: "r1"}, eu, siteLayout)
		step(err)
	}
	stale, err := siteAcquire(t, r1, siteCfg(eu))
	if hookErr != nil {
		t.Fatalf("the interleaved provisioning failed: %v", hookErr)
	}
	if err != nil {
		t.Logf("paused acquire refused: %v", err)
		return
	}
	rec, _, _ := nodeid.ParseSiteRecord(mustRecord(t, mem1))
	t.Logf("r1's record now has floor %d; the lease started at %d", rec.Floor, stale.Start())
	if stale.Start() < f2 {
		t.Errorf("DUPLICATE: eu on r2 issued on node %d up to %d (the ledger's floor); the paused process on r1 took node %d starting at %d, below it",
			stale.Node(), f2, stale.Node(), stale.Start())
	}
}

// TestSiteCutShortClaimWithoutIdentity: a ClaimSite cut short after the
// ledger's claim is written and before the registry is rerecorded (the
// registry's reply lost) cannot be finished on a store with no native
// identity (MariaDB's Identity is "", so is a MemStore's by default): the
// re-run compares identities only, finds "" and refuses the site's own
// value as another registry's; ReleaseSite refuses too (the registry does
// not hold the record). The value is lost for ever, and so are the values
// the registry's history marked as held while recording.
func TestSiteCutShortClaimWithoutIdentity(t *testing.T) {
	ctx := context.Background()
	l := siteLedger(t)
	eu := siteSite("eu", 1)
	reg := &siteHook{Recorder: siteStore(""), failNext: errors.New("connection reset (the write did not land)")}
	if _, err := l.ClaimSite(ctx, site.Registry{Store: reg, Where: "mariadb/ns"}, eu, siteLayout); err == nil {
		t.Fatal("first claim should have failed at the registry")
	}
	if _, err := l.ClaimSite(ctx, site.Registry{Store: reg, Where: "mariadb/ns"}, eu, siteLayout); err != nil {
		_, rerr := l.ReleaseSite(ctx, site.Registry{Store: reg, Where: "mariadb/ns"}, eu, siteLayout)
		t.Errorf("STUCK: the re-run of a claim cut short is refused: %v; and release: %v", err, rerr)
	}
}

func mustRecord(t *testing.T, s nodeid.Recorder) nodeid.LayoutID {
	t.Helper()
	id, err := s.Record(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// TestSiteZeroCountRefused: neither OpenLedger nor ClaimSite validates
// the site width: a ledger opened with count 0 and a zero Site (Count 0,
// which Config.validate refuses but ClaimSite never checks) divide by
// zero in Ledger.value.
func TestSiteZeroCountRefused(t *testing.T) {
	ctx := context.Background()
	open := func(string) (nodeid.Recorder, error) { return nodeidtest.NewMemStore(), nil }
	l, err := site.OpenLedger(ctx, open, "zero", siteLayout, site.Spec{Count: 0}, true)
	if err != nil {
		t.Logf("OpenLedger with count 0 refused: %v", err)
		return
	}
	defer func() {
		if r := recover(); r != nil {
			t.Errorf("PANIC: ClaimSite with a zero-width site: %v", r)
		}
	}()
	_, err = l.ClaimSite(ctx, site.Registry{Store: siteStore("x"), Where: "x"}, nodeid.Site{Name: "eu"}, siteLayout)
	t.Logf("ClaimSite: %v", err)
}

// TestSiteClockBehindAdvice: in a site, where starting ahead is refused,
// a clock behind the stored HWM of the node asked for, or of every free
// node, is advice that works there — fix the clock, or wait — never
// --start-ahead.
func TestSiteClockBehindAdvice(t *testing.T) {
	ctx := context.Background()
	l := siteLedger(t)
	eu := siteSite("eu", 1)
	st := siteStore("a")
	if _, err := l.ClaimSite(ctx, site.Registry{Store: st, Where: "a"}, eu, siteLayout); err != nil {
		t.Fatal(err)
	}
	ahead := time.Now().Add(5 * time.Minute).UnixMilli() // within the advance a site allows
	for n := eu.First; n < eu.First+eu.Count; n++ {
		st.SetHWM(n, ahead)
	}
	one := siteCfg(eu)
	one.Node = &eu.First
	for _, tc := range []struct {
		name string
		cfg  nodeid.Config
		as   any
	}{
		{"the node asked for", one, new(*nodeid.BehindHWMError)},
		{"every free node", siteCfg(eu), new(*nodeid.AheadError)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := siteAcquire(t, st, tc.cfg)
			if !errors.As(err, tc.as) {
				t.Fatalf("Acquire = %v; want %T", err, tc.as)
			}
			if msg := err.Error(); strings.Contains(msg, "start-ahead") || strings.Contains(msg, "start_ahead") || !strings.Contains(msg, "wait for it to pass the HWM") {
				t.Fatalf("Acquire in a site: %q; want the clock fixed or waited for, not starting ahead, which a site refuses", msg)
			}
		})
	}
}

// TestSiteNameIsOneSite: a claim of a free value by a site whose name
// the ledger records on another value, for another registry, is refused
// naming that value and registry; the site's own standby value and a
// released value are no other site.
func TestSiteNameIsOneSite(t *testing.T) {
	ctx := context.Background()
	l := siteLedger(t)
	a, b := site.Registry{Store: siteStore("a"), Where: "registry a"}, site.Registry{Store: siteStore("b"), Where: "registry b"}
	if err := l.Standby(ctx, siteSite("eu", 1)); err != nil {
		t.Fatal(err)
	}
	if _, err := l.ClaimSite(ctx, a, siteSite("eu", 0), siteLayout); err != nil {
		t.Fatalf("claim of value 0 by a site whose standby is value 1: %v", err)
	}
	if _, err := l.ReleaseDestroyed(ctx, siteSite("eu", 1)); err != nil { // the standby given up
		t.Fatal(err)
	}
	_, err := l.ClaimSite(ctx, b, siteSite("eu", 1), siteLayout)
	if !errors.Is(err, site.ErrRefused) || !strings.Contains(err.Error(), "value 0") || !strings.Contains(err.Error(), "registry a") {
		t.Fatalf("claim of value 1 by a second site named eu, on registry b: %v; want refused naming value 0 and registry a", err)
	}
	if rec, err := b.Store.Record(ctx); err != nil || rec.Fingerprint != "" {
		t.Fatalf("the refused claim wrote registry b's record: %+v, %v", rec, err)
	}
	if _, err := l.ReleaseSite(ctx, a, siteSite("eu", 0), siteLayout); err != nil {
		t.Fatal(err)
	}
	if _, err := l.ClaimSite(ctx, b, siteSite("eu", 1), siteLayout); err != nil {
		t.Fatalf("claim of value 1 by eu once value 0 is released: %v", err)
	}
}

// TestSiteOtherLayoutAdvice: a process with the site's setting but not
// the layout the site was claimed with — other node widths, so other
// nodes for the same fields, or another epoch — is told to give it that
// layout, not the site setting it already has.
func TestSiteOtherLayoutAdvice(t *testing.T) {
	ctx := context.Background()
	l := siteLedger(t)
	eu := siteSite("eu", 1)
	st := siteStore("a")
	if _, err := l.ClaimSite(ctx, site.Registry{Store: st, Where: "a"}, eu, siteLayout); err != nil {
		t.Fatal(err)
	}
	narrow := eu
	narrow.First, narrow.Count, narrow.Values = 2, 2, 4 // datacenter one bit wider, worker one narrower
	other := siteCfg(eu)
	other.Layout.Fingerprint, other.Layout.Description = "other", "another epoch"
	for _, tc := range []struct {
		name string
		cfg  nodeid.Config
	}{
		{"other node widths", siteCfg(narrow)},
		{"another epoch", other},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := siteAcquire(t, st, tc.cfg)
			if err == nil || !strings.Contains(err.Error(), "the layout the site was claimed with") {
				t.Fatalf("Acquire with the site's setting and another layout: %v; want told to give it the claim's layout", err)
			}
		})
	}
}
