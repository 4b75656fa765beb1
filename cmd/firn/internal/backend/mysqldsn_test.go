package backend_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/firn-id/firn/cmd/firn/internal/backend"
	"github.com/firn-id/firn/cmd/firn/internal/config"
)

// TestMySQLDSNParameters: a parameter the MySQL driver would send to the
// server as SET is refused, naming it and never its value, unless it is
// a session variable firn allows with one literal value; the driver's
// own options pass. The check does no I/O: Check refuses what Open
// would, before anything is dialed.
func TestMySQLDSNParameters(t *testing.T) {
	const value = "Sup3rS3cretValue"
	tests := []struct {
		name, query, wantErr string // wantErr empty: accepted
	}{
		{name: "password", query: "password=%27" + value + "%27", wantErr: `parameter "password": the MySQL driver would send it to the server as SET password`},
		{name: "passwd", query: "passwd=" + value, wantErr: `parameter "passwd"`},
		{name: "upper case", query: "PASSWORD=" + value, wantErr: `parameter "PASSWORD"`},
		{name: "pwd", query: "pwd=" + value, wantErr: `give the password before the @: user:password@tcp(host:3306)/db`},
		{name: "unknown", query: "pass=" + value, wantErr: `parameter "pass" is no option of the MySQL driver`},
		{name: "autocommit", query: "autocommit=0", wantErr: `parameter "autocommit" is no option`},
		{name: "sql_mode", query: "sql_mode=%27%27", wantErr: `parameter "sql_mode" is no option`},
		{name: "isolation", query: "transaction_isolation=%27READ-UNCOMMITTED%27", wantErr: `parameter "transaction_isolation" is no option`},
		{name: "a second assignment in an allowed value", query: "time_zone=%27%2B00:00%27,password=%27" + value + "%27", wantErr: `parameter "time_zone": the MySQL driver copies its value`},
		{name: "a statement in charset", query: "charset=utf8mb4;SET%20password=" + value, wantErr: "parameter charset: want character set names"},
		{name: "time_zone quoted", query: "time_zone=%27%2B00:00%27"},
		{name: "time_zone word", query: "time_zone=SYSTEM"},
		{name: "lock waits", query: "innodb_lock_wait_timeout=5&lock_wait_timeout=10&max_statement_time=2.5"},
		{name: "driver options", query: "parseTime=true&tls=false&timeout=3s&loc=UTC&charset=utf8mb4,utf8&collation=utf8mb4_bin&interpolateParams=true"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dsn := "firn@tcp(127.0.0.1:1)/ids?" + tt.query
			for _, o := range []backend.Options{
				options(config.Registry{Store: "mysql", DSN: dsn}, config.Segments{}),
				options(config.Registry{Store: "local", DataDir: t.TempDir()}, config.Segments{Store: "mysql", DSN: dsn}),
				options(config.Registry{Store: "local", DataDir: t.TempDir()}, config.Segments{Format: "set", Stores: []config.SegmentStore{{Store: "mysql", DSN: dsn}}}),
			} {
				err := o.Check()
				if tt.wantErr == "" {
					if err != nil {
						t.Fatalf("Check(%s): %v", dsn, err)
					}
					continue
				}
				if !errors.Is(err, backend.ErrConfig) || !strings.Contains(err.Error(), tt.wantErr) || strings.Contains(err.Error(), value) {
					t.Fatalf("Check(%s) = %v; want ErrConfig with %q, without %q", dsn, err, tt.wantErr, value)
				}
			}
		})
	}
}
