package sqlstore_test

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"testing"

	"github.com/firn-id/firn/internal/testenv"
	"github.com/firn-id/firn/segment"
	"github.com/firn-id/firn/sqlstore"
)

func rows(t *testing.T, db *sql.DB, table string) int {
	t.Helper()
	var n int
	if err := db.QueryRow("SELECT COUNT(*) FROM " + table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestValuesPastTheColumnsAreRefusedNotTruncated: on MariaDB the old
// INSERT IGNORE stored a 100-character tag as its first 63, a step of
// 3,000,000,000 as 2,147,483,647 and a long description cut, and said
// nothing; on PostgreSQL the same came back as an outage. Each is now
// ErrInvalid, and nothing is written.
func TestValuesPastTheColumnsAreRefusedNotTruncated(t *testing.T) {
	forEach(t, func(t *testing.T, b backend, dsn string) {
		db := openDB(t, b, dsn)
		ctx := context.Background()
		set := newSetStore(t, b, db, "solo")
		leaf, leafTable := newSegments(t, b, db)
		tiny, tinyTable := newTinyid(t, b, db)
		for _, c := range []struct {
			name  string
			store segment.Store
			tag   string
			step  int64
			desc  string
		}{
			{"a 100-character tag on Tinyid's table", tiny, strings.Repeat("t", 100), 10, ""},
			{"a 129-character tag on Leaf's table", leaf, strings.Repeat("t", 129), 10, ""},
			{"a step of 3,000,000,000 on Tinyid's table", tiny, "order", 3_000_000_000, ""},
			{"a step of 3,000,000,000 on Leaf's table", leaf, "order", 3_000_000_000, ""},
			{"a 300-character description on Leaf's table", leaf, "order", 10, strings.Repeat("d", 300)},
			{"a 300-character description on firn's table", set, "order", 10, strings.Repeat("d", 300)},
		} {
			if err := c.store.CreateTag(ctx, c.tag, 1, c.step, c.desc); !errors.Is(err, segment.ErrInvalid) {
				t.Errorf("%s: CreateTag = %v; want ErrInvalid", c.name, err)
			}
		}
		for _, s := range []segment.Store{leaf, tiny} {
			if err := s.CreateTag(ctx, "order", 1, 10, ""); err != nil {
				t.Fatal(err)
			}
			if err := s.SetStep(ctx, "order", 3_000_000_000); !errors.Is(err, segment.ErrInvalid) {
				t.Errorf("%T: SetStep(3,000,000,000) = %v; want ErrInvalid", s, err)
			}
			if info, _ := s.Tag(ctx, "order"); info.Step != 10 {
				t.Errorf("%T: step %d after the refused SetStep; want 10", s, info.Step)
			}
		}
		if n := rows(t, db, leafTable) + rows(t, db, tinyTable); n != 2 {
			t.Errorf("%d rows; want only the two tags created", n)
		}
	})
}

// TestDatabaseRefusalsAreInvalidInput: a value that passes firn's checks
// but not the database's — a NUL in a served tag on PostgreSQL, a
// character a latin1 Leaf table cannot hold on MariaDB — is ErrInvalid
// through the store's classifier, not an outage, and never a mangled row
// (the old INSERT IGNORE stored "注文" as "??").
func TestDatabaseRefusalsAreInvalidInput(t *testing.T) {
	forEach(t, func(t *testing.T, b backend, dsn string) {
		db := openDB(t, b, dsn)
		ctx := context.Background()
		s, table := newSegments(t, b, db)
		if b.dialect == sqlstore.Postgres {
			if _, err := s.Tag(ctx, "or\x00der"); !errors.Is(err, segment.ErrInvalid) {
				t.Fatalf("Tag with a NUL = %v; want ErrInvalid", err)
			}
			return
		}
		latin1(t, db, table)
		if err := s.CreateTag(ctx, "注文", 1, 10, ""); !errors.Is(err, segment.ErrInvalid) {
			t.Fatalf("CreateTag(注文) on a latin1 table = %v; want ErrInvalid", err)
		}
		if n := rows(t, db, table); n != 0 {
			t.Fatalf("%d rows after the refusal; want none", n)
		}
	})
}

// latin1 creates Leaf's table as a database whose default charset is
// latin1 has it.
func latin1(t *testing.T, db *sql.DB, table string) {
	t.Helper()
	ddl, _ := sqlstore.SegmentSchema(sqlstore.MySQL, table)
	ddl = strings.Replace(ddl, "ENGINE=InnoDB;", "ENGINE=InnoDB DEFAULT CHARSET=latin1;", 1)
	if _, err := db.Exec(strings.TrimSuffix(strings.TrimSpace(ddl), ";")); err != nil {
		t.Fatal(err)
	}
}

// TestLaxSQLModeStillRefusesWhatItWouldMangle: on a MySQL session whose
// sql_mode is not strict, a plain INSERT stores what it cannot hold as
// "?"; firn's writes run strict whatever the session's mode.
func TestLaxSQLModeStillRefusesWhatItWouldMangle(t *testing.T) {
	for _, b := range backends {
		if b.dialect != sqlstore.MySQL {
			continue
		}
		t.Run(b.name, func(t *testing.T) {
			dsn := testenv.Endpoint(t, b.env)
			sep := "?"
			if strings.Contains(dsn, "?") {
				sep = "&"
			}
			db := openDB(t, b, dsn+sep+"sql_mode=%27%27")
			db.SetMaxOpenConns(1)
			s, table := newSegments(t, b, db)
			latin1(t, db, table)
			if err := s.CreateTag(context.Background(), "注文", 1, 10, ""); !errors.Is(err, segment.ErrInvalid) {
				t.Fatalf("CreateTag(注文) in a lax session = %v; want ErrInvalid", err)
			}
			if n := rows(t, db, table); n != 0 {
				t.Fatalf("%d rows after the refusal; want none", n)
			}
			var mode string
			if err := db.QueryRow("SELECT @@SESSION.sql_mode").Scan(&mode); err != nil || mode != "" {
				t.Fatalf("the session's sql_mode is %q, %v afterwards; want it put back to ''", mode, err)
			}
		})
	}
}

// TestExactTagMatchKeepsTheIndex: the byte-exact comparison on MySQL
// still looks the row up by its key.
func TestExactTagMatchKeepsTheIndex(t *testing.T) {
	for _, b := range backends {
		if b.dialect != sqlstore.MySQL {
			continue
		}
		t.Run(b.name, func(t *testing.T) {
			db := openDB(t, b, testenv.Endpoint(t, b.env))
			ctx := context.Background()
			leaf, leafTable := newSegments(t, b, db)
			tiny, tinyTable := newTinyid(t, b, db)
			for _, s := range []segment.Store{leaf, tiny} {
				for _, tag := range []string{"a", "b", "c", "order"} {
					if err := s.CreateTag(ctx, tag, 1, 10, ""); err != nil {
						t.Fatal(err)
					}
				}
			}
			for _, c := range []struct{ table, col, key string }{{leafTable, "biz_tag", "PRIMARY"}, {tinyTable, "biz_type", "uniq_biz_type"}} {
				r, err := db.Query("EXPLAIN SELECT max_id FROM "+c.table+" WHERE "+c.col+" = ? AND "+c.col+" = CAST(? AS BINARY)", "order", "order")
				if err != nil {
					t.Fatal(err)
				}
				cols, _ := r.Columns()
				vals := make([]sql.NullString, len(cols))
				ptrs := make([]any, len(cols))
				for i := range vals {
					ptrs[i] = &vals[i]
				}
				if !r.Next() {
					t.Fatal("EXPLAIN returned no row")
				}
				if err := r.Scan(ptrs...); err != nil {
					t.Fatal(err)
				}
				r.Close()
				for i, col := range cols {
					if col == "key" && vals[i].String != c.key {
						t.Errorf("%s: the lookup uses key %q; want %q", c.table, vals[i].String, c.key)
					}
				}
			}
		})
	}
}
