package backend_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/go-sql-driver/mysql"

	_ "github.com/firn-id/firn/sqlstore/mysql" // the MySQL row: Classify reads its errors
	"github.com/jackc/pgx/v5/pgconn"
	"google.golang.org/grpc/codes"
	grpcstatus "google.golang.org/grpc/status"

	"github.com/firn-id/firn/cmd/firn/internal/backend"
	"github.com/firn-id/firn/nodeid"
)

// TestBriefNamesTheClassNeverTheStoresWords: each kind of store failure,
// however wrapped, is named by its class and the store, and the store's
// message is not repeated; firn's own reasons are left to their message.
func TestBriefNamesTheClassNeverTheStoresWords(t *testing.T) {
	const words = "near 'Sup3rS3cret'"
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	tests := []struct {
		name string
		err  error
		want backend.Class // "": no store failure
	}{
		{"connection refused", fmt.Errorf("claim: %w", refused), backend.Refused},
		{"deadline", fmt.Errorf("claim: %w", context.DeadlineExceeded), backend.Timeout},
		{"mysql access denied", &mysql.MySQLError{Number: 1045, SQLState: [5]byte{'2', '8', '0', '0', '0'}, Message: words}, backend.Auth},
		{"mysql privilege", &mysql.MySQLError{Number: 1142, Message: words}, backend.Auth},
		{"postgres password", fmt.Errorf("connect: %w", &pgconn.PgError{Code: "28P01", Message: words}), backend.Auth},
		{"etcd permission", fmt.Errorf("claim: %w", grpcstatus.Error(codes.PermissionDenied, words)), backend.Auth},
		{"mysql unknown database", &mysql.MySQLError{Number: 1049, Message: words}, backend.MissingDatabase},
		{"mysql missing table", fmt.Errorf("renew: %w", &mysql.MySQLError{Number: 1146, Message: words}), backend.MissingTable},
		{"postgres missing table", &pgconn.PgError{Code: "42P01", Message: words}, backend.MissingTable},
		{"mysql syntax error", &mysql.MySQLError{Number: 1064, Message: words}, backend.Other},
		{"unreachable", &backend.UnreachableError{Store: "mysql", Endpoint: "tcp db:3306", Err: &mysql.MySQLError{Number: 1298, Message: words}}, backend.Other},
		{"bad connection", fmt.Errorf("claim: %w", mysql.ErrInvalidConn), backend.Other},
		{"no free node", &nodeid.PoolFullError{Pool: 4, Held: 4}, ""},
		{"firn's own", errors.New("node 3: the HWM is not ahead of the clock"), ""},
		{"nil", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, ok := backend.ClassOf(tt.err)
			if c != tt.want || ok != (tt.want != "") {
				t.Fatalf("ClassOf(%v) = %q, %v; want %q", tt.err, c, ok, tt.want)
			}
			b := backend.Brief(`mysql namespace "ids"`, tt.err)
			switch {
			case tt.want == "" && b != "":
				t.Fatalf("Brief = %q; want none", b)
			case tt.want != "" && (!strings.Contains(b, ": "+string(tt.want)+" ") || strings.Contains(b, "Sup3rS3cret")):
				t.Fatalf("Brief = %q; want the store and %q, without the store's words", b, tt.want)
			}
		})
	}
	if b := backend.Brief("x", &backend.UnreachableError{Store: "mysql", Endpoint: "tcp db:3306", Err: refused}); !strings.HasPrefix(b, "mysql tcp db:3306: refused") {
		t.Fatalf("Brief of an unreachable store = %q; want it named by its address", b)
	}
}
