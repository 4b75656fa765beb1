package main

import (
	"net"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/firn-id/firn/internal/testserver"
)

// TestMySQLPasswordParameterIsNeverSent: go-sql-driver/mysql sends a DSN
// parameter it does not know as SET name = value, so ?password='x' would
// set the account's password. config check, serve and next refuse it
// (exit 2), naming the parameter and never its value, before they dial:
// the database, a listener here, sees no connection at all.
func TestMySQLPasswordParameterIsNeverSent(t *testing.T) {
	const value = "Sup3rS3cretValue"
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var dialed atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			dialed.Add(1)
			c.Close()
		}
	}()
	t.Cleanup(func() { ln.Close() })
	http := testserver.Addrs(t, 2)
	for _, param := range []string{"password", "passwd"} {
		dsn := "firn@tcp(" + ln.Addr().String() + ")/ids?" + param + "=%27" + value + "%27"
		for _, cmd := range [][]string{
			{"config", "check"},
			{"serve", "--http", http[0], "--grpc", http[1]},
			{"next"},
		} {
			t.Run(param+"/"+cmd[0], func(t *testing.T) {
				args := append(cmd, "--store", "mysql", "--dsn", dsn, "--dial-timeout", "1s")
				out, errOut, code := runBounded(t, args...)
				want := `parameter "` + param + `"`
				if code != 2 || !strings.Contains(errOut, want) || strings.Contains(out+errOut, value) {
					t.Fatalf("exit %d, stdout %q, stderr %q; want exit 2 naming %s, without its value", code, out, errOut, want)
				}
				if !strings.Contains(errOut, "user:password@tcp(host:3306)/db") {
					t.Fatalf("stderr %q: want where the password goes", errOut)
				}
			})
		}
	}
	if n := dialed.Load(); n != 0 {
		t.Fatalf("the database was dialed %d times", n)
	}
}
