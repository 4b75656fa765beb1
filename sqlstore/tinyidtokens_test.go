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

	"github.com/firn-id/firn/internal/legacytest"
	"github.com/firn-id/firn/sqlstore"
)

// newTokenTable creates Tinyid's token table with its sample rows under a
// name of its own, dropped when t ends, and returns the name.
func newTokenTable(t *testing.T, b backend, db *sql.DB) string {
	t.Helper()
	suffix := make([]byte, 6)
	rand.Read(suffix)
	table := "tiny_id_token_" + hex.EncodeToString(suffix)
	t.Cleanup(func() { db.Exec("DROP TABLE IF EXISTS " + table) })
	for _, s := range legacytest.TinyidTokenTable(b.name, table) {
		if _, err := db.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
	return table
}

func startTokens(t *testing.T, b backend, db *sql.DB, table string) *sqlstore.TinyidTokens {
	t.Helper()
	tok, err := sqlstore.NewTinyidTokens(db, b.dialect, sqlstore.TinyidTokenOptions{Table: table})
	if err != nil {
		t.Fatal(err)
	}
	if err := tok.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tok.Close(context.Background()) })
	return tok
}

// TestTinyidTokensAsCanVisit checks tokens as Tinyid's canVisit does on
// Tinyid's own sample rows.
func TestTinyidTokensAsCanVisit(t *testing.T) {
	forEach(t, func(t *testing.T, b backend, dsn string) {
		db := openDB(t, b, dsn)
		tok := startTokens(t, b, db, newTokenTable(t, b, db))
		ctx := context.Background()
		for _, tt := range []struct {
			name, bizType, token string
			allowed, known       bool
		}{
			{"its token", "test", legacytest.TinyidSampleToken, true, true},
			{"its token for its second bizType", "test_odd", legacytest.TinyidSampleToken, true, true},
			{"a wrong token", "test", "wrong", false, false},
			{"its token for another bizType", "other", legacytest.TinyidSampleToken, false, true},
			{"no token", "test", "", false, false},
			{"its token in another case", "test", strings.ToUpper(legacytest.TinyidSampleToken), false, false},
			{"its bizType in another case", "TEST", legacytest.TinyidSampleToken, false, true},
		} {
			t.Run(tt.name, func(t *testing.T) {
				if allowed, known := tok.Allows(ctx, tt.bizType, tt.token); allowed != tt.allowed || known != tt.known {
					t.Fatalf("Allows(%q, token) = %v, %v; want %v, %v", tt.bizType, allowed, known, tt.allowed, tt.known)
				}
			})
		}
	})
}

// TestTinyidTokensAddedWhileRunning: a token inserted after Start is
// allowed once a miss reads the table again, within about a second,
// without waiting for the scheduled read.
func TestTinyidTokensAddedWhileRunning(t *testing.T) {
	forEach(t, func(t *testing.T, b backend, dsn string) {
		db := openDB(t, b, dsn)
		table := newTokenTable(t, b, db)
		tok := startTokens(t, b, db, table)
		ctx := context.Background()
		if ok, _ := tok.Allows(ctx, "fresh", "new-token"); ok {
			t.Fatal("a token not in the table is allowed")
		}
		if _, err := db.Exec("INSERT INTO " + table + " (id, token, biz_type, remark) VALUES (100, 'new-token', 'fresh', 'added')"); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(10 * time.Second) // a bound, not a speed claim
		for ok := false; !ok; {
			if time.Now().After(deadline) {
				t.Fatal("a token added to the table is still refused after 10 s")
			}
			ok, _ = tok.Allows(ctx, "fresh", "new-token")
			time.Sleep(50 * time.Millisecond)
		}
	})
}

// TestTinyidTokensFailedReadKeepsTheLastSet: while the table cannot be
// read, the tokens read last still pass and Err says why; a later read
// succeeds again.
func TestTinyidTokensFailedReadKeepsTheLastSet(t *testing.T) {
	forEach(t, func(t *testing.T, b backend, dsn string) {
		db := openDB(t, b, dsn)
		table := newTokenTable(t, b, db)
		tok := startTokens(t, b, db, table)
		ctx := context.Background()
		moved := table + "_away"
		t.Cleanup(func() { db.Exec("DROP TABLE IF EXISTS " + moved) })
		if _, err := db.Exec("ALTER TABLE " + table + " RENAME TO " + moved); err != nil {
			t.Fatal(err)
		}
		if err := tok.Refresh(ctx); !errors.Is(err, sqlstore.ErrTokenTable) {
			t.Fatalf("Refresh of a missing table = %v, want ErrTokenTable", err)
		}
		if ok, _ := tok.Allows(ctx, "test", legacytest.TinyidSampleToken); !ok {
			t.Fatal("after a failed read the token read last is refused")
		}
		if !errors.Is(tok.Err(), sqlstore.ErrTokenTable) {
			t.Fatalf("Err() = %v after a failed read", tok.Err())
		}
		if _, err := db.Exec("ALTER TABLE " + moved + " RENAME TO " + table); err != nil {
			t.Fatal(err)
		}
		if err := tok.Refresh(ctx); err != nil || tok.Err() != nil {
			t.Fatalf("Refresh of the table back = %v, Err %v", err, tok.Err())
		}
	})
}

// TestTinyidTokensUnreadableAtStart: Start refuses a table it cannot read.
func TestTinyidTokensUnreadableAtStart(t *testing.T) {
	forEach(t, func(t *testing.T, b backend, dsn string) {
		db := openDB(t, b, dsn)
		suffix := make([]byte, 6)
		rand.Read(suffix)
		tok, err := sqlstore.NewTinyidTokens(db, b.dialect, sqlstore.TinyidTokenOptions{Table: "tiny_id_token_none_" + hex.EncodeToString(suffix)})
		if err != nil {
			t.Fatal(err)
		}
		if err := tok.Start(context.Background()); !errors.Is(err, sqlstore.ErrTokenTable) {
			t.Fatalf("Start on a missing table = %v, want ErrTokenTable", err)
		} else if !strings.Contains(err.Error(), "tinyid-server/db.sql") {
			t.Errorf("Start on a missing table = %v; want how to create it", err)
		}
		if err := tok.Close(context.Background()); err != nil {
			t.Fatalf("Close after a failed Start = %v", err)
		}
	})
}

// TestTinyidTokensStartIsBounded: Start waits at most Timeout for its
// read, whatever the caller's context: a program that embeds the reader
// does not hang on a database that does not answer.
func TestTinyidTokensStartIsBounded(t *testing.T) {
	forEach(t, func(t *testing.T, b backend, dsn string) {
		db := openDB(t, b, dsn)
		table := newTokenTable(t, b, db)
		tok, err := sqlstore.NewTinyidTokens(db, b.dialect, sqlstore.TinyidTokenOptions{Table: table, Timeout: time.Nanosecond})
		if err != nil {
			t.Fatal(err)
		}
		if err := tok.Start(context.Background()); !errors.Is(err, sqlstore.ErrTokenTable) || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Start past its Timeout = %v; want ErrTokenTable and the deadline", err)
		}
		if err := tok.Close(context.Background()); err != nil {
			t.Fatalf("Close after a failed Start = %v", err)
		}
	})
}
