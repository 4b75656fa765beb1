package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/firn-id/firn/internal/testenv"
	"github.com/firn-id/firn/internal/testserver"
)

// TestReadyzGivesTheClassNotTheDriversMessage runs firn serve on MariaDB
// and breaks the store three ways: a session variable the server refuses
// while the stores open, the node table dropped under a held lease, the
// account's password changed and its connections cut. The open /readyz
// names the store and the class of failure and none of the database's
// words; the log keeps them, with the password redacted.
func TestReadyzGivesTheClassNotTheDriversMessage(t *testing.T) {
	root := testenv.Endpoint(t, "FIRN_TEST_MYSQL")
	rootCfg, err := mysql.ParseDSN(root)
	if err != nil {
		t.Fatal(err)
	}
	admin, err := sql.Open("mysql", root)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Close() })
	exec := func(t *testing.T, stmt string) {
		t.Helper()
		if _, err := admin.Exec(stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	user := "firn_ready_" + suffix()
	tests := []struct {
		name, class, raw string
		dsn              func(t *testing.T) string
		// brk breaks the store once serve is ready; nil: broken from the
		// start.
		brk func(t *testing.T, table string)
	}{
		{name: "refused session variable", class: `mysql tcp ` + rootCfg.Addr + `: other`, raw: "time zone",
			dsn: func(t *testing.T) string { return root + sep(root) + "time_zone=%27Nowhere%2FBogus%27" }},
		{name: "missing table", class: `mysql namespace "default": missing table`, raw: "doesn't exist",
			dsn: func(t *testing.T) string { return root },
			brk: func(t *testing.T, table string) { exec(t, "DROP TABLE "+table) }},
		{name: "password changed", class: `mysql namespace "default": auth`, raw: "Access denied",
			dsn: func(t *testing.T) string {
				exec(t, "CREATE USER '"+user+"'@'%' IDENTIFIED BY 'Ready-pa55-1'")
				t.Cleanup(func() { exec(t, "DROP USER '"+user+"'@'%'") })
				exec(t, "GRANT ALL ON `"+rootCfg.DBName+"`.* TO '"+user+"'@'%'")
				cfg := rootCfg.Clone()
				cfg.User, cfg.Passwd = user, "Ready-pa55-1"
				return cfg.FormatDSN()
			},
			brk: func(t *testing.T, _ string) {
				exec(t, "ALTER USER '"+user+"'@'%' IDENTIFIED BY 'Ready-pa55-2'")
				rows, err := admin.Query("SELECT id FROM information_schema.processlist WHERE user = ?", user)
				if err != nil {
					t.Fatal(err)
				}
				var ids []int64
				for rows.Next() {
					var id int64
					if err := rows.Scan(&id); err != nil {
						t.Fatal(err)
					}
					ids = append(ids, id)
				}
				rows.Close()
				for _, id := range ids {
					exec(t, fmt.Sprintf("KILL CONNECTION %d", id))
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			table := "firn_nodes_ready_" + suffix()
			t.Cleanup(func() { dropTables(t, "mysql", root, table); dropTables(t, "mysql", root, table+"_seg") })
			log := &lockedBuffer{}
			logOutput = log
			t.Cleanup(func() { logOutput = os.Stderr })
			dsn := tt.dsn(t)
			base, done := serveOnFreePort(t, func(addr string) []string {
				return []string{"--store", "mysql", "--dsn", dsn, "--table", table, "--segment-table", table + "_seg",
					"--http", addr, "--grpc", "off", "--lease-ttl", "1s", "--dial-timeout", "1s", "--log-format", "json"}
			})
			if tt.brk != nil {
				waitReadiness(t, base, done, func(code int, _ string) bool { return code == 200 })
				tt.brk(t, table)
			}
			var msg string
			waitReadiness(t, base, done, func(code int, m string) bool {
				msg = m
				return code == 503 && strings.Contains(m, tt.class)
			})
			for _, word := range []string{tt.raw, "Error ", "Ready-pa55"} {
				if strings.Contains(msg, word) {
					t.Fatalf("/readyz says %q: it quotes the database (%q)", msg, word)
				}
			}
			// The log line may follow the readiness it explains.
			for deadline := time.Now().Add(time.Minute); !strings.Contains(log.String(), tt.raw); time.Sleep(50 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("the log never gave the database's message (%q):\n%s", tt.raw, log.String())
				}
			}
			if strings.Contains(log.String(), "Ready-pa55") {
				t.Fatalf("the log shows the password:\n%s", log.String())
			}
			t.Logf("/readyz: %s", msg)
		})
	}
}

// sep is what joins one more parameter to dsn.
func sep(dsn string) string {
	if strings.Contains(dsn, "?") {
		return "&"
	}
	return "?"
}

// serveOnFreePort runs serve in-process on a free loopback port and
// returns its base URL and the channel its end arrives on; serve ends with
// the test. A free port is free only until someone binds it: a test
// beside this one that took it between the pick and serve's bind makes
// serve fail with EADDRINUSE, and then another port is picked.
func serveOnFreePort(t *testing.T, args func(addr string) []string) (string, chan error) {
	t.Helper()
	for try := 0; ; try++ {
		addr := testserver.Addrs(t, 1)[0]
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- serve(ctx, args(addr), io.Discard) }()
		for bound := false; !bound; {
			select {
			case err := <-done:
				cancel()
				if !errors.Is(err, syscall.EADDRINUSE) || try == 4 {
					t.Fatalf("serve on %s returned %v", addr, err)
				}
				bound = true
				addr = ""
			default:
				// Someone answers at addr: serve, or whoever took the
				// port, in which case serve's bind fails at once (it binds
				// right after reading its settings, before any I/O).
				if c, err := net.Dial("tcp", addr); err == nil {
					c.Close()
					time.Sleep(200 * time.Millisecond)
					if len(done) == 0 {
						bound = true
					}
				} else {
					time.Sleep(10 * time.Millisecond)
				}
			}
		}
		if addr == "" {
			continue
		}
		t.Cleanup(func() {
			cancel()
			<-done
		})
		return "http://" + addr, done
	}
}
