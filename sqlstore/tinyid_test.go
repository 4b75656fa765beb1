package sqlstore_test

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/firn-id/firn/internal/faultproxy"
	"github.com/firn-id/firn/internal/idtest"
	"github.com/firn-id/firn/internal/testenv"
	"github.com/firn-id/firn/segment"
	"github.com/firn-id/firn/segment/segmenttest"
	"github.com/firn-id/firn/sqlstore"
)

// newTinyid returns a Tinyid store on a table of its own, dropped when t
// ends.
func newTinyid(t testing.TB, b backend, db *sql.DB) (*sqlstore.Tinyid, string) {
	t.Helper()
	suffix := make([]byte, 6)
	rand.Read(suffix)
	table := "tiny_id_info_" + hex.EncodeToString(suffix)
	s, err := sqlstore.NewTinyid(db, b.dialect, sqlstore.TinyidOptions{Table: table})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Exec("DROP TABLE IF EXISTS " + table) })
	return s, table
}

func TestTinyidConformance(t *testing.T) {
	forEach(t, func(t *testing.T, b backend, dsn string) {
		db := openDB(t, b, dsn)
		segmenttest.RunStoreTests(t, func(t *testing.T) segment.Store { s, _ := newTinyid(t, b, db); return s },
			segmenttest.Options{NoDescription: true})
	})
}

// TestTinyidContinues creates the table with Tinyid's own DDL and the row
// of Tinyid's README (begin_id = max_id = 1, step 100000, delta 1,
// remainder 0), lets "Tinyid" take a segment with its own statement, and
// checks that firn continues after it.
func TestTinyidContinues(t *testing.T) {
	forEach(t, func(t *testing.T, b backend, dsn string) {
		db := openDB(t, b, dsn)
		s, table := newTinyid(t, b, db)
		ddl, _ := sqlstore.TinyidSchema(b.dialect, table)
		if _, err := db.Exec(ddl[:len(ddl)-2]); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec("INSERT INTO " + table + " (biz_type, begin_id, max_id, step, delta, remainder, version) VALUES ('test', 1, 1, 100000, 1, 0, 1)"); err != nil {
			t.Fatal(err)
		}
		// Tinyid's updateMaxId: it now hands out (1, 100001].
		if _, err := db.Exec("UPDATE " + table + " SET max_id = 100001, version = version + 1 WHERE biz_type = 'test' AND max_id = 1 AND version = 1"); err != nil {
			t.Fatal(err)
		}
		a, err := segment.NewAllocator(s, segment.Config{})
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close(context.Background())
		if id, err := a.Next(context.Background(), "test"); err != nil || id != 100002 {
			t.Fatalf("first firn ID %d, %v; want 100002, right after Tinyid's (1, 100001]", id, err)
		}
	})
}

// tinyidRow is a row as Tinyid's queryByBizType reads it
// (TinyIdInfoDAOImpl.java:24-33, didi/tinyid at 49976d3).
type tinyidRow struct{ id, maxID, step, delta, remainder, version int64 }

func tinyidRead(t *testing.T, db *sql.DB, table, tag string) tinyidRow {
	t.Helper()
	var r tinyidRow
	if err := db.QueryRow("SELECT id, max_id, step, delta, remainder, version FROM "+table+" WHERE biz_type = '"+tag+"'").
		Scan(&r.id, &r.maxID, &r.step, &r.delta, &r.remainder, &r.version); err != nil {
		t.Fatal(err)
	}
	return r
}

// tinyidSegment takes a segment from a row read as r with Tinyid's
// updateMaxId (TinyIdInfoDAOImpl.java:36-40) and returns the IDs Tinyid
// issues from it (DbSegmentIdServiceImpl.java:65-70, SegmentId.java:30-65),
// or ok false when the update moved no row and Tinyid would read again.
func tinyidSegment(t *testing.T, b backend, db *sql.DB, table, tag string, r tinyidRow) (ids []int64, ok bool) {
	t.Helper()
	q := "UPDATE " + table + " SET max_id = ?, update_time = now(), version = version + 1 WHERE id = ? AND max_id = ? AND version = ? AND biz_type = ?"
	if b.dialect == sqlstore.Postgres {
		q = "UPDATE " + table + " SET max_id = $1, update_time = now(), version = version + 1 WHERE id = $2 AND max_id = $3 AND version = $4 AND biz_type = $5"
	}
	res, err := db.Exec(q,
		r.maxID+r.step, r.id, r.maxID, r.version, tag)
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return nil, false
	}
	current, maxID := r.maxID, r.maxID+r.step
	if current%r.delta != r.remainder { // init: up to the class, less one delta
		for current%r.delta != r.remainder {
			current++
		}
		current -= r.delta
	}
	for id := current + r.delta; id <= maxID; id += r.delta { // nextId
		ids = append(ids, id)
	}
	return ids, true
}

// TestTinyidServerAfterReclass: a Tinyid server that read the row before
// a Reclass cuts no segment from it after, even when the reclass kept
// max_id, and the segment it cuts when it reads again holds IDs of the
// new class only, from next.
func TestTinyidServerAfterReclass(t *testing.T) {
	forEach(t, func(t *testing.T, b backend, dsn string) {
		db := openDB(t, b, dsn)
		ctx := context.Background()
		s, table := newTinyid(t, b, db)
		if err := s.CreateTag(ctx, "t", 1, 100, ""); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Reserve(ctx, "t", 100); err != nil {
			t.Fatal(err)
		}
		stale := tinyidRead(t, db, table, "t")
		from, err := s.Tag(ctx, "t")
		if err != nil {
			t.Fatal(err)
		}
		// 101 is 1 mod 4: max_id stays 100, and only version tells the
		// row read before from the row after.
		if err := s.Reclass(ctx, "t", from, 4, 1, 101, 40); err != nil {
			t.Fatal(err)
		}
		if ids, ok := tinyidSegment(t, b, db, table, "t", stale); ok {
			t.Fatalf("Tinyid cut a segment from the row it read before the reclass: %v", ids)
		}
		ids, ok := tinyidSegment(t, b, db, table, "t", tinyidRead(t, db, table, "t"))
		if !ok || len(ids) == 0 || ids[0] != 101 {
			t.Fatalf("Tinyid's segment after the reclass: %v, %v; want 101, 105, …", ids, ok)
		}
		for _, id := range ids {
			if id%4 != 1 || id < 101 {
				t.Fatalf("Tinyid issues %d after the reclass to 1 mod 4 from 101", id)
			}
		}
	})
}

// TestTinyidOddEvenAcrossDatabases serves one tag from two databases,
// PostgreSQL with the even IDs and MariaDB with the odd ones, cuts one off,
// then the other: the allocator keeps serving and no ID repeats.
func TestTinyidOddEvenAcrossDatabases(t *testing.T) {
	pgDSN := testenv.Endpoint(t, "FIRN_TEST_POSTGRES")
	myDSN := testenv.Endpoint(t, "FIRN_TEST_MYSQL")
	pg, my := backends[0], backends[1]
	pgProxy := faultproxy.New(t, hostOf(t, pg, pgDSN))
	myProxy := faultproxy.New(t, hostOf(t, my, myDSN))
	even, _ := newTinyid(t, pg, openDB(t, pg, viaProxy(t, pg, pgDSN, pgProxy.Addr())))
	odd, _ := newTinyid(t, my, openDB(t, my, viaProxy(t, my, myDSN, myProxy.Addr())))
	m, err := segment.NewMulti(even, odd)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := even.CreateTagResidue(ctx, "order", 1, 200, 2, 0, ""); err != nil {
		t.Fatal(err)
	}
	if err := odd.CreateTagResidue(ctx, "order", 1, 200, 2, 1, ""); err != nil {
		t.Fatal(err)
	}
	// A step capped at 200 makes every phase fetch about ten ranges.
	a, err := segment.NewAllocator(m, segment.Config{MaxWait: 3 * time.Second, FetchTimeout: time.Second, MaxStep: 200})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close(ctx)
	rec := idtest.NewRecorder(t)
	// draw takes 2,000 IDs; parity, if not -1, is what the last 1,000 must
	// all have, once the buffered ones of the other store are used up.
	draw := func(what string, parity int64) {
		for i := range 2000 {
			id, err := a.Next(ctx, "order")
			if err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			rec.AddUnordered(id)
			if parity >= 0 && i >= 1000 && id%2 != parity {
				t.Fatalf("%s: ID %d from the store that is cut off", what, id)
			}
		}
	}
	draw("both up", -1)
	pgProxy.Cut()
	draw("PostgreSQL (even) cut off", 1)
	pgProxy.Restore()
	myProxy.Cut()
	draw("MariaDB (odd) cut off", 0)
	myProxy.Restore()
}

func TestTinyidRefusesOverlap(t *testing.T) {
	forEach(t, func(t *testing.T, b backend, dsn string) {
		db := openDB(t, b, dsn)
		x, _ := newTinyid(t, b, db)
		y, _ := newTinyid(t, b, db)
		ctx := context.Background()
		x.CreateTagResidue(ctx, "t", 1, 100, 2, 0, "")
		y.CreateTagResidue(ctx, "t", 1, 100, 2, 0, "")
		m, _ := segment.NewMulti(x, y)
		a, _ := segment.NewAllocator(m, segment.Config{})
		defer a.Close(ctx)
		if _, err := a.Next(ctx, "t"); !errors.Is(err, segment.ErrResidues) {
			t.Fatalf("two rows with remainder 0: %v, want ErrResidues", err)
		}
	})
}

func newSetStore(t testing.TB, b backend, db *sql.DB, set string) *sqlstore.SetStore {
	t.Helper()
	suffix := make([]byte, 6)
	rand.Read(suffix)
	table := "firn_segments_" + hex.EncodeToString(suffix)
	s, err := sqlstore.NewSetStore(db, b.dialect, sqlstore.SetOptions{Table: table, Set: set})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Exec("DROP TABLE IF EXISTS " + table) })
	return s
}

func TestSetStoreConformance(t *testing.T) {
	forEach(t, func(t *testing.T, b backend, dsn string) {
		db := openDB(t, b, dsn)
		segmenttest.RunStoreTests(t, func(t *testing.T) segment.Store { return newSetStore(t, b, db, "solo") })
	})
}

// TestSetStoreRecordsItsSet: rows of firn's own table name their set and
// its size; a row of another set, or of a set of another size, is refused.
func TestSetStoreRecordsItsSet(t *testing.T) {
	forEach(t, func(t *testing.T, b backend, dsn string) {
		db := openDB(t, b, dsn)
		ctx := context.Background()
		x, y := newSetStore(t, b, db, "pair"), newSetStore(t, b, db, "pair")
		m, _ := segment.NewMulti(x, y)
		if err := m.CreateTag(ctx, "t", 1, 100, "paired"); err != nil {
			t.Fatal(err)
		}
		info, err := y.Tag(ctx, "t")
		if err != nil || info.Set != "pair" || info.SetSize != 2 || info.Remainder != 1 || info.Description != "paired" {
			t.Fatalf("row of the second store: %+v, %v", info, err)
		}
		a, _ := segment.NewAllocator(m, segment.Config{})
		defer a.Close(ctx)
		if _, err := a.Next(ctx, "t"); err != nil {
			t.Fatal(err)
		}

		other := newSetStore(t, b, db, "other")
		other.CreateTagResidue(ctx, "t", 1, 100, 2, 1, "")
		m2, _ := segment.NewMulti(x, other)
		a2, _ := segment.NewAllocator(m2, segment.Config{})
		defer a2.Close(ctx)
		if _, err := a2.Next(ctx, "t"); !errors.Is(err, segment.ErrResidues) {
			t.Fatalf("rows of two sets: %v, want ErrResidues", err)
		}

		z := newSetStore(t, b, db, "pair")
		z.CreateTagResidue(ctx, "t", 1, 100, 3, 2, "") // a set of three
		m3, _ := segment.NewMulti(x, y, z)
		a3, _ := segment.NewAllocator(m3, segment.Config{})
		defer a3.Close(ctx)
		if _, err := a3.Next(ctx, "t"); !errors.Is(err, segment.ErrResidues) {
			t.Fatalf("a set of 2 with a third store: %v, want ErrResidues", err)
		}
	})
}

// TestSetStoreAddsTheOpaqueColumnToAnOlderTable: a firn_segments table
// made before tags recorded their permutation gets the column on first
// use; its rows stay plain, and an opaque tag can be created beside them.
func TestSetStoreAddsTheOpaqueColumnToAnOlderTable(t *testing.T) {
	forEach(t, func(t *testing.T, b backend, dsn string) {
		db := openDB(t, b, dsn)
		ctx := context.Background()
		table := newSetTable(t, b, db, true, "old")
		s, err := sqlstore.NewSetStore(db, b.dialect, sqlstore.SetOptions{Table: table})
		if err != nil {
			t.Fatal(err)
		}
		r, err := s.Reserve(ctx, "old", 10)
		if err != nil || r.Opaque != "" || r.Start != 1 {
			t.Fatalf("Reserve(old) = %+v, %v; want a plain range from 1", r, err)
		}
		if err := s.CreateTagOpaque(ctx, "new", 1, 10, 1, 0, "", "ff1:0123456789abcdef:0123456789ab/63"); err != nil {
			t.Fatal(err)
		}
		if info, err := s.Tag(ctx, "new"); err != nil || info.Opaque != "ff1:0123456789abcdef:0123456789ab/63" {
			t.Fatalf("Tag(new) = %+v, %v", info, err)
		}
	})
}

// TestTinyidTableRefusesOpaqueTags: Tinyid's table has no column for the
// permutation, so no opaque tag is created there.
// TestTinyidBadRowSaysHowToFixIt: a row whose delta and remainder make
// no residue class (delta 0, written by hand) issues nothing, and the
// error names the table and what to write there.
func TestTinyidBadRowSaysHowToFixIt(t *testing.T) {
	forEach(t, func(t *testing.T, b backend, dsn string) {
		db := openDB(t, b, dsn)
		s, table := newTinyid(t, b, db)
		ctx := context.Background()
		if err := s.CreateTag(ctx, "bad", 1, 10, ""); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec("UPDATE " + table + " SET delta = 0 WHERE biz_type = 'bad'"); err != nil {
			t.Fatal(err)
		}
		_, err := s.Reserve(ctx, "bad", 10)
		if err == nil || !strings.Contains(err.Error(), "delta 0 and remainder 0") || !strings.Contains(err.Error(), "fix the row in "+table) {
			t.Fatalf("Reserve of a row with delta 0: %v; want the fix named", err)
		}
	})
}

func TestTinyidTableRefusesOpaqueTags(t *testing.T) {
	forEach(t, func(t *testing.T, b backend, dsn string) {
		db := openDB(t, b, dsn)
		s, _ := newTinyid(t, b, db)
		err := s.CreateTagOpaque(context.Background(), "order", 1, 10, 1, 0, "", "ff1:0123456789abcdef:0123456789ab/63")
		if !errors.Is(err, segment.ErrOpaqueUnsupported) {
			t.Fatalf("CreateTagOpaque = %v; want ErrOpaqueUnsupported", err)
		}
	})
}

// TestTinyidFormatRefusesTheSetTable: firn's own table opened in Tinyid's
// format would serve an opaque tag's counter plain, beside servers that
// permute it; it is refused before any row is read, on a table made by
// this version and on one made before tags recorded their permutation.
// Tinyid's own table is still served.
func TestTinyidFormatRefusesTheSetTable(t *testing.T) {
	forEach(t, func(t *testing.T, b backend, dsn string) {
		db := openDB(t, b, dsn)
		ctx := context.Background()
		for _, older := range []bool{false, true} {
			table := newSetTable(t, b, db, older, "order")
			tiny, err := sqlstore.NewTinyid(db, b.dialect, sqlstore.TinyidOptions{Table: table})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tiny.Reserve(ctx, "order", 10); !errors.Is(err, sqlstore.ErrOwnTable) {
				t.Fatalf("older %v: Reserve = %v; want ErrOwnTable", older, err)
			}
			if _, err := tiny.Tag(ctx, "order"); !errors.Is(err, sqlstore.ErrOwnTable) {
				t.Fatalf("older %v: Tag = %v; want ErrOwnTable", older, err)
			}
			if _, err := tiny.Tags(ctx); !errors.Is(err, sqlstore.ErrOwnTable) {
				t.Fatalf("older %v: Tags = %v; want ErrOwnTable", older, err)
			}
		}
		tiny, _ := newTinyid(t, b, db)
		if err := tiny.CreateTag(ctx, "order", 1, 10, ""); err != nil {
			t.Fatal(err)
		}
		if r, err := tiny.Reserve(ctx, "order", 10); err != nil || r.Start != 1 {
			t.Fatalf("Tinyid's table: Reserve = %+v, %v", r, err)
		}
	})
}

// newSetTable makes a firn_segments table of its own, dropped when t ends,
// with one plain row for tag: the table of this version, or, if older,
// one made before tags recorded their permutation (no opaque column).
func newSetTable(t *testing.T, b backend, db *sql.DB, older bool, tag string) string {
	t.Helper()
	suffix := make([]byte, 6)
	rand.Read(suffix)
	table := "firn_segments_" + hex.EncodeToString(suffix)
	t.Cleanup(func() { db.Exec("DROP TABLE IF EXISTS " + table) })
	ddl, err := sqlstore.SetSchema(b.dialect, table)
	if err != nil {
		t.Fatal(err)
	}
	if older {
		var lines []string
		for _, line := range strings.Split(ddl, "\n") {
			if !strings.Contains(line, "opaque") {
				lines = append(lines, line)
			}
		}
		ddl = strings.Join(lines, "\n")
	}
	if _, err := db.Exec(ddl); err != nil {
		t.Fatalf("table (older %v): %v", older, err)
	}
	if _, err := db.Exec("INSERT INTO " + table + " (biz_type, begin_id, max_id, step, delta, remainder, create_time, update_time, version) VALUES ('" + tag + "', 0, 0, 10, 1, 0, now(), now(), 0)"); err != nil {
		t.Fatal(err)
	}
	return table
}
