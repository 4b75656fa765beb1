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

	"github.com/firn-id/firn/sqlstore"
)

// tinyidTokenDDL is Tinyid's tiny_id_token table and its sample rows,
// verbatim from github.com/didi/tinyid tinyid-server/db.sql lines 16–24
// and 35–41 (commit 49976d37222ab1089a8c413b4520cc55d105d428).
const tinyidTokenDDL = "CREATE TABLE `tiny_id_token` (\n" +
	"  `id` int(11) unsigned NOT NULL AUTO_INCREMENT COMMENT '自增id',\n" +
	"  `token` varchar(255) NOT NULL DEFAULT '' COMMENT 'token',\n" +
	"  `biz_type` varchar(63) NOT NULL DEFAULT '' COMMENT '此token可访问的业务类型标识',\n" +
	"  `remark` varchar(255) NOT NULL DEFAULT '' COMMENT '备注',\n" +
	"  `create_time` timestamp NOT NULL DEFAULT '2010-01-01 00:00:00' COMMENT '创建时间',\n" +
	"  `update_time` timestamp NOT NULL DEFAULT '2010-01-01 00:00:00' COMMENT '更新时间',\n" +
	"  PRIMARY KEY (`id`)\n" +
	") ENGINE=InnoDB AUTO_INCREMENT=1 DEFAULT CHARSET=utf8 COMMENT 'token信息表';"

// tinyidTokenRows are db.sql's sample rows: one token for test and test_odd.
var tinyidTokenRows = []string{
	"INSERT INTO `tiny_id_token` (`id`, `token`, `biz_type`, `remark`, `create_time`, `update_time`)\nVALUES\n\t(1, '0f673adf80504e2eaa552f5d791b644c', 'test', '1', '2017-12-14 16:36:46', '2017-12-14 16:36:48');",
	"INSERT INTO `tiny_id_token` (`id`, `token`, `biz_type`, `remark`, `create_time`, `update_time`)\nVALUES\n\t(2, '0f673adf80504e2eaa552f5d791b644c', 'test_odd', '1', '2017-12-14 16:36:46', '2017-12-14 16:36:48');",
}

// tinyidTokenPostgres is the same table for PostgreSQL (Tinyid ships
// MySQL's DDL only): the columns and defaults of db.sql, without MySQL's
// comments, engine and quoting.
const tinyidTokenPostgres = `CREATE TABLE tiny_id_token (
  id          SERIAL PRIMARY KEY,
  token       VARCHAR(255) NOT NULL DEFAULT '',
  biz_type    VARCHAR(63)  NOT NULL DEFAULT '',
  remark      VARCHAR(255) NOT NULL DEFAULT '',
  create_time TIMESTAMP    NOT NULL DEFAULT '2010-01-01 00:00:00',
  update_time TIMESTAMP    NOT NULL DEFAULT '2010-01-01 00:00:00'
)`

const sampleToken = "0f673adf80504e2eaa552f5d791b644c"

// newTokenTable creates Tinyid's token table with its sample rows under a
// name of its own, dropped when t ends, and returns the name.
func newTokenTable(t *testing.T, b backend, db *sql.DB) string {
	t.Helper()
	suffix := make([]byte, 6)
	rand.Read(suffix)
	table := "tiny_id_token_" + hex.EncodeToString(suffix)
	t.Cleanup(func() { db.Exec("DROP TABLE IF EXISTS " + table) })
	stmts := append([]string{tinyidTokenDDL}, tinyidTokenRows...)
	if b.dialect == sqlstore.Postgres {
		stmts = []string{tinyidTokenPostgres}
		for _, row := range tinyidTokenRows {
			stmts = append(stmts, strings.ReplaceAll(row, "`", ""))
		}
	}
	for _, s := range stmts {
		if _, err := db.Exec(strings.ReplaceAll(s, "tiny_id_token", table)); err != nil {
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
			{"its token", "test", sampleToken, true, true},
			{"its token for its second bizType", "test_odd", sampleToken, true, true},
			{"a wrong token", "test", "wrong", false, false},
			{"its token for another bizType", "other", sampleToken, false, true},
			{"no token", "test", "", false, false},
			{"its token in another case", "test", strings.ToUpper(sampleToken), false, false},
			{"its bizType in another case", "TEST", sampleToken, false, true},
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
		if ok, _ := tok.Allows(ctx, "test", sampleToken); !ok {
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
		}
		if err := tok.Close(context.Background()); err != nil {
			t.Fatalf("Close after a failed Start = %v", err)
		}
	})
}
