package sqlstore_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	"github.com/firn-id/firn/internal/testenv"
	"github.com/firn-id/firn/segment"
	"github.com/firn-id/firn/sqlstore"
)

// TestLeafTablesInEveryCharsetServed: Leaf's DDL names no charset, so its
// leaf_alloc may be latin1 or gbk. The byte-exact tag comparison converts
// the column to UTF-8 first: before, a row Leaf wrote there, or one firn
// created, could never be served again. Case and trailing-space variants
// still miss.
func TestLeafTablesInEveryCharsetServed(t *testing.T) {
	b := backends[1]
	db := openDB(t, b, testenv.Endpoint(t, b.env))
	ctx := context.Background()
	for _, c := range []struct{ charset, tag string }{{"latin1", "café"}, {"gbk", "订单"}, {"utf8mb4", "café"}} {
		t.Run(c.charset, func(t *testing.T) {
			suffix := make([]byte, 4)
			rand.Read(suffix)
			table := "leaf_cs_" + c.charset + "_" + hex.EncodeToString(suffix)
			t.Cleanup(func() { db.Exec("DROP TABLE IF EXISTS " + table) })
			if _, err := db.Exec("CREATE TABLE `" + table + "` (`biz_tag` varchar(128) NOT NULL DEFAULT '', `max_id` bigint(20) NOT NULL DEFAULT '1', " +
				"`step` int(11) NOT NULL, `description` varchar(256) DEFAULT NULL, `update_time` timestamp NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP, " +
				"PRIMARY KEY (`biz_tag`)) ENGINE=InnoDB DEFAULT CHARSET=" + c.charset); err != nil {
				t.Fatal(err)
			}
			if _, err := db.Exec("INSERT INTO "+table+" (biz_tag, max_id, step) VALUES (?, 1, 100)", c.tag); err != nil {
				t.Fatal(err)
			}
			s, err := sqlstore.NewSegments(db, b.dialect, sqlstore.SegmentOptions{Table: table, NoCreate: true})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.Tag(ctx, c.tag); err != nil {
				t.Fatalf("Tag of Leaf's row: %v", err)
			}
			if r, err := s.Reserve(ctx, c.tag, 10); err != nil || r.Start != 1 {
				t.Fatalf("Reserve of Leaf's row = %+v, %v", r, err)
			}
			created := c.tag + "2"
			if err := s.CreateTag(ctx, created, 1, 10, ""); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Tag(ctx, created); err != nil {
				t.Fatalf("Tag of the row firn created: %v", err)
			}
			others := []string{c.tag + " "}
			if up := strings.ToUpper(c.tag); up != c.tag {
				others = append(others, up)
			}
			for _, other := range others {
				if _, err := s.Tag(ctx, other); err == nil {
					t.Errorf("Tag(%q) found the row %q", other, c.tag)
				}
			}
		})
	}
}

// TestSetCreatesNothingOnACollation: on MySQL's case-insensitive
// collation a set store holding "order" takes "Order" for it. Creating
// "Order" on the set is refused before any store is written: before, the
// first store got a row "Order" and the tag "order" could no longer be
// completed or served by the set.
func TestSetCreatesNothingOnACollation(t *testing.T) {
	b := backends[1]
	db := openDB(t, b, testenv.Endpoint(t, b.env))
	ctx := context.Background()
	s0, s1 := newSetStore(t, b, db, "pair"), newSetStore(t, b, db, "pair")
	if err := s1.CreateTagResidue(ctx, "order", 1, 10, 2, 1, ""); err != nil {
		t.Fatal(err)
	}
	m, err := segment.NewMulti(s0, s1)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.CreateTag(ctx, "Order", 1, 10, ""); !errors.Is(err, segment.ErrTagExists) {
		t.Fatalf("CreateTag(Order) = %v, want ErrTagExists", err)
	}
	if _, err := s0.Tag(ctx, "Order"); !errors.Is(err, segment.ErrUnknownTag) {
		t.Fatalf("store 0 after a refused create: %v, want no row", err)
	}
	if err := m.CreateTag(ctx, "order", 1, 10, ""); err != nil {
		t.Fatalf("completing order on the set: %v", err)
	}
	if _, err := m.Tag(ctx, "order"); err != nil {
		t.Fatalf("the set serves order: %v", err)
	}
}

// TestUpdateTimeFromTheDatabasesClock: Tinyid writes update_time with the
// database's now() (TinyIdInfoDAOImpl.updateMaxId); firn wrote the
// process's clock in UTC, eight hours off on a +08:00 database.
func TestUpdateTimeFromTheDatabasesClock(t *testing.T) {
	b := backends[1]
	dsn := testenv.Endpoint(t, b.env)
	sep := "?"
	if strings.Contains(dsn, "?") {
		sep = "&"
	}
	db := openDB(t, b, dsn+sep+"time_zone=%27%2B08%3A00%27")
	ctx := context.Background()
	s, table := newTinyid(t, b, db)
	if err := s.CreateTag(ctx, "order", 1, 10, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Reserve(ctx, "order", 10); err != nil {
		t.Fatal(err)
	}
	var off int64
	if err := db.QueryRow("SELECT ABS(TIMESTAMPDIFF(SECOND, update_time, NOW())) FROM " + table + " WHERE biz_type = 'order'").Scan(&off); err != nil {
		t.Fatal(err)
	}
	if off > 60 {
		t.Fatalf("update_time is %d s away from the database's NOW()", off)
	}
}
