package backend_test

import (
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/firn-id/firn/cmd/firn/internal/backend"
	"github.com/firn-id/firn/internal/secret"
)

// The passwords below contain what breaks string surgery: @, /, :, ',
// spaces, backslashes, percent-encoding.
var redactTests = []struct {
	name     string
	kind     string
	give     string
	want     string // exactly; the password never appears in it
	password string
}{
	{name: "postgres URL", kind: "postgres", give: "postgres://app:pa55word@db:5432/ids?sslmode=disable",
		want: "postgres://app:REDACTED@db:5432/ids?sslmode=disable", password: "pa55word"},
	{name: "postgresql URL, encoded @ / :", kind: "postgres", give: "postgresql://app:p%40ss%2Fw%3Ard@db/ids",
		want: "postgresql://app:REDACTED@db/ids", password: "p%40ss%2Fw%3Ard"},
	{name: "postgres URL query password", kind: "postgres", give: "postgres://app@db/ids?password=pa55word&sslmode=disable",
		want: "postgres://app@db/ids?password=REDACTED&sslmode=disable", password: "pa55word"},
	{name: "postgres URL query sslpassword", kind: "postgres", give: "postgres://app:pa55word@db/ids?sslpassword=k3ypa55",
		want: "postgres://app:REDACTED@db/ids?sslpassword=REDACTED", password: "k3ypa55"},
	{name: "postgres URL, several hosts", kind: "postgres", give: "postgres://app:pa55word@db1:5432,db2:5433/ids",
		want: "postgres://app:REDACTED@db1:5432,db2:5433/ids", password: "pa55word"},
	{name: "postgres URL, unix socket", kind: "postgres", give: "postgres://app:pa55word@/ids?host=/var/run/postgresql",
		want: "postgres://app:REDACTED@/ids?host=/var/run/postgresql", password: "pa55word"},
	{name: "postgres URL neither Go nor pgx reads", kind: "postgres", give: "postgres://app:pa55word@%2Fvar%2Frun/ids",
		want: "REDACTED", password: "pa55word"},
	{name: "keyword/value", kind: "postgres", give: "host=db user=app password=pa55word dbname=ids",
		want: "host=db user=app password=REDACTED dbname=ids", password: "pa55word"},
	{name: "keyword/value, quoted with spaces", kind: "postgres", give: "host=db password='pa55 w0rd x' dbname=ids",
		want: "host=db password=REDACTED dbname=ids", password: "w0rd"},
	{name: "keyword/value, escaped quote", kind: "postgres", give: `host=db password='it\'s pa55 \\ x' dbname=ids`,
		want: "host=db password=REDACTED dbname=ids", password: "pa55"},
	{name: "keyword/value, spaces around =", kind: "postgres", give: "host = db password = pa55word  dbname=ids",
		want: "host = db password = REDACTED  dbname=ids", password: "pa55word"},
	{name: "keyword/value, backslash escape", kind: "postgres", give: `password=pa55\ w0rd host=db`,
		want: "password=REDACTED host=db", password: "w0rd"},
	{name: "keyword/value, several hosts", kind: "postgres", give: "host=db1,db2 port=5432,5433 password=pa55word sslpassword=k3ypa55",
		want: "host=db1,db2 port=5432,5433 password=REDACTED sslpassword=REDACTED", password: "pa55"},
	{name: "keyword/value, unix socket", kind: "postgres", give: "host=/var/run/postgresql password=pa55word",
		want: "host=/var/run/postgresql password=REDACTED", password: "pa55word"},
	{name: "postgres without a password", kind: "postgres", give: "postgres://postgres@127.0.0.1:5432/test?sslmode=disable",
		want: "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"},
	{name: "postgres unterminated quote", kind: "postgres", give: "host=db password='pa55 w0rd", want: "REDACTED", password: "w0rd"},
	{name: "postgres, first word not keyword=value", kind: "postgres", give: "app:hunter2 host=x", want: "REDACTED", password: "hunter2"},
	{name: "postgres, a pair without =", kind: "postgres", give: "host=x hunter2 dbname=ids", want: "REDACTED", password: "hunter2"},
	{name: "mysql", kind: "mysql", give: "app:pa55word@tcp(db:3306)/ids",
		want: "app:REDACTED@tcp(db:3306)/ids", password: "pa55word"},
	{name: "mysql, @ / : in the password", kind: "mysql", give: "app:p@ss/w:rd@tcp(db:3306)/ids",
		want: "app:REDACTED@tcp(db:3306)/ids", password: "ss/w:rd"},
	{name: "mysql, unix socket", kind: "mysql", give: "app:pa55word@unix(/var/run/mysqld/mysqld.sock)/ids",
		want: "app:REDACTED@unix(/var/run/mysqld/mysqld.sock)/ids", password: "pa55word"},
	{name: "mysql, params", kind: "mysql", give: "app:pa55word@tcp(db:3306)/ids?parseTime=true&charset=utf8mb4",
		want: "app:REDACTED@tcp(db:3306)/ids?parseTime=true&charset=utf8mb4", password: "pa55word"},
	{name: "mysql ?password=", kind: "mysql", give: "app@tcp(db:3306)/ids?password=pa55word&parseTime=true",
		want: "app@tcp(db:3306)/ids?parseTime=true&password=REDACTED", password: "pa55word"},
	{name: "mysql ?passwd= beside a password", kind: "mysql", give: "app:pa55word@tcp(db:3306)/ids?passwd=%27pa55w0rd2%27",
		want: "app:REDACTED@tcp(db:3306)/ids?passwd=REDACTED", password: "pa55w0rd2"},
	{name: "mysql, a parameter the driver would send", kind: "mysql", give: "app@tcp(db:3306)/ids?pass=pa55word",
		want: "app@tcp(db:3306)/ids?pass=REDACTED", password: "pa55word"},
	{name: "mysql, a second assignment in a session variable", kind: "mysql", give: "app@tcp(db:3306)/ids?time_zone=%27%2B00:00%27,password=%27pa55word%27",
		want: "app@tcp(db:3306)/ids?time_zone=REDACTED", password: "pa55word"},
	{name: "mysql, an allowed session variable", kind: "mysql", give: "app@tcp(db:3306)/ids?time_zone=%27%2B00:00%27",
		want: "app@tcp(db:3306)/ids?time_zone=%27%2B00%3A00%27"},
	{name: "postgres URL query passwd", kind: "postgres", give: "postgres://app@db/ids?passwd=pa55word&sslmode=disable",
		want: "postgres://app@db/ids?passwd=REDACTED&sslmode=disable", password: "pa55word"},
	{name: "keyword/value passwd and pwd", kind: "postgres", give: "host=db passwd=pa55word pwd=pa55w0rd2 dbname=ids",
		want: "host=db passwd=REDACTED pwd=REDACTED dbname=ids", password: "pa55"},
	{name: "etcd endpoint, token in the query", kind: "endpoint", give: "https://10.0.0.5:2379/?token=t0k3nvalue",
		want: "https://10.0.0.5:2379/?token=REDACTED", password: "t0k3nvalue"},
	{name: "zookeeper server with user:pass", kind: "endpoint", give: "zk://super:pa55word@10.0.0.6:2181",
		want: "zk://super:REDACTED@10.0.0.6:2181", password: "pa55word"},
	{name: "mysql without a password", kind: "mysql", give: "root@tcp(127.0.0.1:3306)/test", want: "root@tcp(127.0.0.1:3306)/test"},
	{name: "mysql unreadable", kind: "mysql", give: "app:pa55word@tcp(db", want: "REDACTED", password: "pa55word"},
	{name: "a DSN of another store", kind: "local", give: "host=db password=pa55word", want: "host=db password=REDACTED", password: "pa55word"},
	{name: "etcd endpoint with user:pass", kind: "endpoint", give: "http://root:pa55word@10.0.0.5:2379",
		want: "http://root:REDACTED@10.0.0.5:2379", password: "pa55word"},
	{name: "etcd endpoint", kind: "endpoint", give: "10.0.0.5:2379", want: "10.0.0.5:2379"},
}

func TestRedactHidesThePasswordOfEveryDSNForm(t *testing.T) {
	for _, tt := range redactTests {
		t.Run(tt.name, func(t *testing.T) {
			got := backend.Redact(tt.kind, tt.give)
			if got != tt.want {
				t.Fatalf("Redact(%q) = %q, want %q", tt.give, got, tt.want)
			}
			if tt.password != "" && strings.Contains(got, tt.password) {
				t.Fatalf("Redact(%q) = %q shows the password", tt.give, got)
			}
			// What the driver reads from the secret.Redacted DSN has no password
			// but REDACTED.
			switch {
			case got == secret.Redacted:
			case tt.kind == "mysql":
				if cfg, err := mysql.ParseDSN(got); err != nil || (cfg.Passwd != "" && cfg.Passwd != secret.Redacted) {
					t.Fatalf("mysql reads %q as password %q, %v", got, cfg.Passwd, err)
				}
			case tt.kind == "postgres":
				if cfg, err := pgconn.ParseConfig(got); err != nil || (cfg.Password != "" && cfg.Password != secret.Redacted) {
					t.Fatalf("pgx reads %q as password %q, %v", got, cfg.Password, err)
				}
			}
		})
	}
}

// TestRedactRemembersWhatAMalformedDSNCouldHide: a postgres DSN that is
// not keyword=value pairs is shown as REDACTED, and what could be its
// password is remembered, so a driver's message quoting it is scrubbed.
func TestRedactRemembersWhatAMalformedDSNCouldHide(t *testing.T) {
	backend.Redact("postgres", "app:hunt3r2x host=x")
	if got := secret.Scrub(`FATAL: unrecognized configuration parameter "app:hunt3r2x host"`); strings.Contains(got, "hunt3r2x") {
		t.Fatalf("Scrub: %q shows the password", got)
	}
}
