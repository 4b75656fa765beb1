package sqlstore_test

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/firn-id/firn/internal/faultproxy"
	"github.com/firn-id/firn/internal/idtest"
	"github.com/firn-id/firn/segment"
	"github.com/firn-id/firn/segment/segmenttest"
	"github.com/firn-id/firn/sqlstore"
)

// newSegments returns a Leaf store on a table of its own, dropped when t
// ends.
func newSegments(t testing.TB, b backend, db *sql.DB) (*sqlstore.Segments, string) {
	t.Helper()
	suffix := make([]byte, 6)
	rand.Read(suffix)
	table := "leaf_alloc_" + hex.EncodeToString(suffix)
	s, err := sqlstore.NewSegments(db, b.dialect, sqlstore.SegmentOptions{Table: table})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Exec("DROP TABLE IF EXISTS " + table) })
	return s, table
}

func TestSegmentConformance(t *testing.T) {
	forEach(t, func(t *testing.T, b backend, dsn string) {
		db := openDB(t, b, dsn)
		segmenttest.RunStoreTests(t, func(t *testing.T) segment.Store { s, _ := newSegments(t, b, db); return s })
	})
}

// TestLeafContinues creates the table with Leaf's own DDL, inserts the
// row of Leaf's README and lets "Leaf" serve a segment with its own
// statement; firn then continues after Leaf's IDs.
func TestLeafContinues(t *testing.T) {
	forEach(t, func(t *testing.T, b backend, dsn string) {
		db := openDB(t, b, dsn)
		s, table := newSegments(t, b, db)
		ddl, _ := sqlstore.SegmentSchema(b.dialect, table)
		if _, err := db.Exec(ddl[:len(ddl)-2]); err != nil {
			t.Fatal(err)
		}
		ins := "INSERT INTO " + table + "(biz_tag, max_id, step, description) VALUES('leaf-segment-test', 1, 2000, 'Test leaf Segment Mode Get Id')"
		if _, err := db.Exec(ins); err != nil {
			t.Fatal(err)
		}
		// Leaf's updateMaxIdAndGetLeafAlloc: Leaf now hands out [1, 2001).
		if _, err := db.Exec("UPDATE " + table + " SET max_id = max_id + step WHERE biz_tag = 'leaf-segment-test'"); err != nil {
			t.Fatal(err)
		}
		a, err := segment.NewAllocator(s, segment.Config{})
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close(context.Background())
		id, err := a.Next(context.Background(), "leaf-segment-test")
		if err != nil {
			t.Fatal(err)
		}
		if id != 2001 {
			t.Fatalf("first firn ID %d, want 2001: right after Leaf's segment [1, 2001)", id)
		}
		info, _ := s.Tag(context.Background(), "leaf-segment-test")
		if info.Next != 4001 || info.Step != 2000 {
			t.Fatalf("row after firn's reservation: %+v, want max_id 4001 (Leaf's semantics), step 2000", info)
		}
	})
}

// TestSegmentsManyAllocators: 8 allocators × 8 goroutines on one tag of one
// database; every ID unique, each goroutine's IDs increasing.
func TestSegmentsManyAllocators(t *testing.T) {
	forEach(t, func(t *testing.T, b backend, dsn string) {
		db := openDB(t, b, dsn)
		s, _ := newSegments(t, b, db)
		if err := s.CreateTag(context.Background(), "order", 1, 100, ""); err != nil {
			t.Fatal(err)
		}
		rec := idtest.NewRecorder(t)
		var wg sync.WaitGroup
		for i := range 8 {
			a, err := segment.NewAllocator(s, segment.Config{MaxWait: 10 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close(context.Background())
			for g := range 8 {
				wg.Go(func() {
					ids := make([]int64, 1500)
					for k := range ids {
						id, err := a.Next(context.Background(), "order")
						if err != nil {
							t.Errorf("allocator %d: %v", i, err)
							return
						}
						ids[k] = id
					}
					rec.Add(fmt.Sprint(i, "/", g), ids...)
				})
			}
		}
		wg.Wait()
	})
}

// TestSegmentsDatabaseOutage cuts the database off mid-run: the allocator
// serves its buffered IDs, then reports unavailable, then recovers by
// itself, with no ID repeated.
func TestSegmentsDatabaseOutage(t *testing.T) {
	forEach(t, func(t *testing.T, b backend, dsn string) {
		proxy := faultproxy.New(t, hostOf(t, b, dsn))
		db := openDB(t, b, viaProxy(t, b, dsn, proxy.Addr()))
		s, _ := newSegments(t, b, db)
		ctx := context.Background()
		if err := s.CreateTag(ctx, "t", 1, 1000, ""); err != nil {
			t.Fatal(err)
		}
		a, err := segment.NewAllocator(s, segment.Config{MaxWait: 200 * time.Millisecond, FetchTimeout: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close(ctx)
		rec := idtest.NewRecorder(t)
		take := func() error {
			id, err := a.Next(ctx, "t")
			if err == nil {
				rec.Add("caller", id)
			}
			return err
		}
		for range 900 {
			if err := take(); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(100 * time.Millisecond) // the prefetch lands
		proxy.Cut()
		served := 0
		for err := take(); err == nil; err = take() {
			served++
		}
		if served < 1000 {
			t.Fatalf("served %d buffered IDs during the outage, want the 100 left plus the prefetched range", served)
		}
		if err := take(); !errors.Is(err, segment.ErrUnavailable) {
			t.Fatalf("with the buffers dry: %v, want ErrUnavailable", err)
		}
		proxy.Restore()
		deadline := time.Now().Add(10 * time.Second)
		for take() != nil {
			if time.Now().After(deadline) {
				t.Fatal("no recovery 10 s after the database returned")
			}
			time.Sleep(20 * time.Millisecond)
		}
		for range 3000 {
			if err := take(); err != nil {
				t.Fatalf("after recovery: %v", err)
			}
		}
	})
}
