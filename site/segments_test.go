package site_test

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/firn-id/firn/etcdstore"
	"github.com/firn-id/firn/internal/testenv"
	"github.com/firn-id/firn/internal/testserver"
	"github.com/firn-id/firn/node"
	"github.com/firn-id/firn/nodeid"
	"github.com/firn-id/firn/segment"
	"github.com/firn-id/firn/site"
	"github.com/firn-id/firn/sqlstore"
)

// setStore is a segment store of firn's own format in a PostgreSQL table
// of its own, dropped at the end of the test.
func setStore(t *testing.T, db *sql.DB) *sqlstore.SetStore {
	t.Helper()
	b := make([]byte, 5)
	_, _ = rand.Read(b)
	table := "site_segs_" + hex.EncodeToString(b)
	s, err := sqlstore.NewSetStore(db, sqlstore.Postgres, sqlstore.SetOptions{Table: table})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := db.Exec("DROP TABLE IF EXISTS " + table); err != nil {
			t.Error(err)
		}
	})
	return s
}

// siteSegStore is the segment store a process of site s serves from, as
// firn serve builds it: the classes and floor of the site record in reg.
func siteSegStore(t *testing.T, reg site.Registry, s nodeid.Site) (*segment.Multi, nodeid.SiteRecord) {
	t.Helper()
	rec, err := nodeid.CheckSite(context.Background(), reg.Store, node.LayoutID(layout), s)
	if err != nil {
		t.Fatal(err)
	}
	m, err := segment.NewSiteMulti(segment.Residues{Values: int64(s.Values), Stores: rec.Stores, Value: int64(s.First / s.Count), Floor: rec.Segments}, reg.Segments...)
	if err != nil {
		t.Fatal(err)
	}
	return m, rec
}

// draw reserves n ranges of tag from st and returns their IDs, failing
// on one seen before (in seen, which names who issued it).
func draw(t *testing.T, st segment.Store, tag, who string, n int, seen map[int64]string) []int64 {
	t.Helper()
	var out []int64
	for range n {
		r, err := st.Reserve(context.Background(), tag, 50)
		if err != nil {
			t.Fatalf("%s: reserve %q: %v", who, tag, err)
		}
		for id := r.Start; id < r.End; id += r.Delta {
			if prev, dup := seen[id]; dup {
				t.Fatalf("ID %d of %q issued by %s and by %s", id, tag, prev, who)
			}
			seen[id] = who
			out = append(out, id)
		}
	}
	return out
}

// TestSiteSegments: a tag served before sites by the first site's
// segment store is taken into that site's residue class at its claim,
// above every ID it issued; a second site's rows of the same tag start
// above the first's counter, recorded with the claims in the ledger;
// the IDs of the two sites, before and after, are disjoint and each in
// its site's class. A site whose store issued IDs before sites past the
// floor sites already issue from is refused at claim, and so is a store
// holding another site's rows; a site on a value another site held
// serves no segments.
func TestSiteSegments(t *testing.T) {
	ctx := context.Background()
	db, err := sql.Open("pgx", testenv.Endpoint(t, "FIRN_TEST_POSTGRES"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	etcd := testserver.Etcd(t, 1)
	a, b := siteOf(t, "eu", 1), siteOf(t, "us", 2)
	ledger := ledgerOn(t, etcd.Client(), a.Count)
	reg := func(name string, segs ...segment.Store) site.Registry {
		ns := prefix()
		return site.Registry{Store: etcdstore.New(etcd.Client(), ns), Where: "etcd " + ns, Segments: segs}
	}
	space := node.LayoutID(layout)
	seen := map[int64]string{}

	// Before sites: eu's store serves "orders" and "empty" on every
	// residue.
	storeA := setStore(t, db)
	for _, tag := range []string{"orders", "empty"} {
		if err := storeA.CreateTag(ctx, tag, 1, 50, ""); err != nil {
			t.Fatal(err)
		}
	}
	old := draw(t, storeA, "orders", "eu before sites", 7, seen)
	top := old[len(old)-1]

	regA := reg("eu", storeA)
	if _, err := ledger.ClaimSite(ctx, regA, a, space); err != nil {
		t.Fatalf("claim eu: %v", err)
	}
	mA, recA := siteSegStore(t, regA, a)
	if recA.Segments <= top {
		t.Fatalf("eu's segment floor %d: want above %d, the last ID its store issued before sites", recA.Segments, top)
	}
	regB := reg("us", setStore(t, db))
	if _, err := ledger.ClaimSite(ctx, regB, b, space); err != nil {
		t.Fatalf("claim us: %v", err)
	}
	mB, recB := siteSegStore(t, regB, b)
	if recB.Segments < recA.Segments {
		t.Fatalf("us's segment floor %d: want at least eu's, %d", recB.Segments, recA.Segments)
	}
	// us creates "orders" of its own, which starts above eu's counter
	// even when asked to start at 1.
	if err := mB.CreateTag(ctx, "orders", 1, 50, ""); err != nil {
		t.Fatal(err)
	}
	const delta = 4 // 4 site values, one store each
	for _, p := range []struct {
		m   *segment.Multi
		who string
		v   int64
	}{{mA, "eu", 1}, {mB, "us", 2}, {mA, "eu", 1}, {mB, "us", 2}} {
		for _, id := range draw(t, p.m, "orders", p.who, 5, seen) {
			if id%delta != p.v || id <= top {
				t.Fatalf("%s issued %d: want %d mod %d, above %d (the store's IDs before sites)", p.who, id, p.v, delta, top)
			}
		}
	}
	if got := draw(t, mA, "empty", "eu", 1, map[int64]string{}); got[0]%delta != 1 || got[0] < recA.Segments {
		t.Fatalf("eu's \"empty\", a tag with no ID issued before sites, issued %d: want 1 mod 4 at or above the floor %d", got[0], recA.Segments)
	}

	// A third site whose store issued past the floor sites issue from.
	late := setStore(t, db)
	if err := late.CreateTag(ctx, "orders", recA.Segments+1000, 50, ""); err != nil {
		t.Fatal(err)
	}
	_, err = ledger.ClaimSite(ctx, reg("ap", late), siteOf(t, "ap", 3), space)
	if !errors.Is(err, site.ErrRefused) || !strings.Contains(err.Error(), "before sites") {
		t.Fatalf("claim of a site whose store issued past the sites' floor before sites: %v; want refused", err)
	}
	// A store holding another site's rows (eu's, listed as ap's).
	_, err = ledger.ClaimSite(ctx, reg("ap", storeA), siteOf(t, "ap", 3), space)
	if !errors.Is(err, segment.ErrResidues) || !strings.Contains(err.Error(), "serves one site") {
		t.Fatalf("claim of a site on another site's segment store: %v; want refused", err)
	}

	// us gives its value up; the next site on it serves no segments.
	if _, err := ledger.ReleaseSite(ctx, regB, b, space); err != nil {
		t.Fatal(err)
	}
	next := siteOf(t, "us2", 2)
	regNext := reg("us2", setStore(t, db))
	if _, err := ledger.ClaimSite(ctx, regNext, next, space); err != nil {
		t.Fatalf("claim of us's released value: %v", err)
	}
	if _, rec := siteSegStore(t, regNext, next); !rec.NoSegments {
		t.Fatalf("site record of a value another site held: %+v; want no segments", rec)
	}
}
