package main

import (
	"context"
	"database/sql"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/firn-id/firn/internal/legacytest"
	"github.com/firn-id/firn/internal/testenv"
)

// TestServeChecksTinyidTokens runs firn serve on Tinyid's tables in
// PostgreSQL and MariaDB, without firn tokens: Tinyid's token= decides on
// all four routes, a token added while running is picked up, a table that
// cannot be read keeps the tokens read last, and no token reaches the log.
func TestServeChecksTinyidTokens(t *testing.T) {
	for _, kind := range []string{"postgres", "mysql"} {
		t.Run(kind, func(t *testing.T) {
			dsn := testenv.Endpoint(t, map[string]string{"postgres": "FIRN_TEST_POSTGRES", "mysql": "FIRN_TEST_MYSQL"}[kind])
			db, err := sql.Open(map[string]string{"postgres": "pgx", "mysql": "mysql"}[kind], dsn)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			info, tokens, nodes := "tiny_id_info_e2e_"+suffix(), "tiny_id_token_e2e_"+suffix(), "firn_nodes_e2e_"+suffix()
			t.Cleanup(func() {
				for _, tb := range []string{info, tokens, tokens + "_away", nodes} {
					dropTables(t, kind, dsn, tb)
				}
			})
			for _, s := range legacytest.TinyidTokenTable(kind, tokens) {
				if _, err := db.Exec(s); err != nil {
					t.Fatal(err)
				}
			}
			p := startServe(t, "--store", kind, "--dsn", dsn, "--table", nodes, "--segments", "tinyid",
				"--segment-table", info, "--token-table", tokens)
			for _, tag := range []string{"test", "other"} {
				resp, err := http.Post(p.base+"/v1/segments", "application/json", strings.NewReader(`{"tag":"`+tag+`","step":100}`))
				if err != nil || resp.StatusCode != http.StatusCreated {
					t.Fatalf("create tag %s: %v %v", tag, resp, err)
				}
				resp.Body.Close()
			}
			get := func(route, query string) (int, string) {
				t.Helper()
				resp, err := http.Get(p.base + "/tinyid/id/" + route + "?" + query)
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				b, _ := io.ReadAll(resp.Body)
				return resp.StatusCode, string(b)
			}
			refused := `{"data":null,"code":5,"message":"token is error"}` + "\n"
			for _, route := range []string{"nextId", "nextIdSimple", "nextSegmentId", "nextSegmentIdSimple"} {
				want := refused
				if strings.HasSuffix(route, "Simple") {
					want = ""
				}
				for _, tt := range []struct {
					name, query string
					status      int
				}{
					{"its token", "bizType=test&token=" + legacytest.TinyidSampleToken, 200},
					{"a wrong token", "bizType=test&token=wrong", 401},
					{"no token", "bizType=test", 401},
					{"another bizType's token", "bizType=other&token=" + legacytest.TinyidSampleToken, 403},
				} {
					code, body := get(route, tt.query)
					if code != tt.status || (code != 200 && body != want) {
						t.Errorf("%s, %s: %d %q; want %d (refusal body %q)", route, tt.name, code, body, tt.status, want)
					}
				}
			}

			// A token added while running passes once a miss has read the
			// table again (at most once a second): poll to a bound.
			if _, err := db.Exec("INSERT INTO " + tokens + " (id, token, biz_type, remark) VALUES (100, 'added-token', 'other', 'e2e')"); err != nil {
				t.Fatal(err)
			}
			for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(100 * time.Millisecond) {
				if code, _ := get("nextId", "bizType=other&token=added-token"); code == 200 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("a token added to the table is still refused after 15 s")
				}
			}

			// The table gone: the misses that read it fail, and the tokens
			// read last still pass.
			if _, err := db.Exec("ALTER TABLE " + tokens + " RENAME TO " + tokens + "_away"); err != nil {
				t.Fatal(err)
			}
			for deadline := time.Now().Add(15 * time.Second); !strings.Contains(p.Log(), "cannot read Tinyid's token table"); time.Sleep(100 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("no failed read of the renamed token table logged after 15 s:\n%s", p.Log())
				}
				get("nextId", "bizType=test&token=miss-to-read-again")
			}
			if code, body := get("nextId", "bizType=other&token=added-token"); code != 200 {
				t.Fatalf("after failed reads, the token read last: %d %s; want 200", code, body)
			}
			for _, secret := range []string{legacytest.TinyidSampleToken, "added-token", "miss-to-read-again", "wrong"} {
				if strings.Contains(p.Log(), secret) {
					t.Fatalf("the log holds the token %q:\n%s", secret, p.Log())
				}
			}
			p.stop(t)
		})
	}
}

// TestServeRefusesAnUnreadableTinyidTokenTable: with --segments tinyid a
// token table that cannot be read refuses to start, naming the setting
// that turns checking off; with it off, serve starts.
func TestServeRefusesAnUnreadableTinyidTokenTable(t *testing.T) {
	for _, kind := range []string{"postgres", "mysql"} {
		t.Run(kind, func(t *testing.T) {
			dsn := testenv.Endpoint(t, map[string]string{"postgres": "FIRN_TEST_POSTGRES", "mysql": "FIRN_TEST_MYSQL"}[kind])
			info, nodes := "tiny_id_info_e2e_"+suffix(), "firn_nodes_e2e_"+suffix()
			t.Cleanup(func() { dropTables(t, kind, dsn, info); dropTables(t, kind, dsn, nodes) })
			args := []string{"--http", freePort(t), "--grpc", "off", "--store", kind, "--dsn", dsn, "--table", nodes,
				"--segments", "tinyid", "--segment-table", info, "--token-table", "tiny_id_token_none_" + suffix()}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			err := serve(ctx, args, io.Discard)
			if err == nil || !strings.Contains(err.Error(), "segments.token_table") || !strings.Contains(err.Error(), "check_tokens false") {
				t.Fatalf("serve on a missing token table = %v; want a refusal naming segments.token_table and check_tokens", err)
			}
			p := startServe(t, append(args[4:], "--check-tokens=false")...)
			p.stop(t)
		})
	}
}
