package sqlstore_test

// Second round of fault sequences against sites on real SQL servers.

import (
	"context"
	"database/sql"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/firn-id/firn/internal/testenv"
	"github.com/firn-id/firn/nodeid"
	"github.com/firn-id/firn/nodeid/nodeidtest"
	"github.com/firn-id/firn/site"
	"github.com/firn-id/firn/sqlstore"
)

// TestMySQLNowAcrossDSTFallBack: sqlstore.Store.Now reads MySQL's clock
// as UNIX_TIMESTAMP(NOW(3)): NOW renders the instant in the session's
// time zone and UNIX_TIMESTAMP parses it back. In the hour a zone with
// daylight saving time repeats each autumn, the local time is
// ambiguous and MySQL/MariaDB resolve it to the first occurrence: during
// the second pass Now is an hour early. A session time zone of SYSTEM on
// a server whose OS runs on local time (the default of many installs)
// or any named zone is enough. `firn site release --site-destroyed` run
// in that hour records nodeid.DestroyedFloor an hour low — far beyond
// its one-minute margin: the floor is below what the destroyed site may
// have issued, and the next site to claim the value reissues it.
//
// The session's clock is pinned with MariaDB's `timestamp` variable to
// 2023-10-29 01:30 UTC (01:30 GMT, the second 01:30 of Europe/London);
// the named zone needs the server's time zone tables
// (mysql_tzinfo_to_sql /usr/share/zoneinfo/Europe/London Europe/London).
func TestMySQLNowAcrossDSTFallBack(t *testing.T) {
	dsn := testenv.Endpoint(t, "FIRN_TEST_MYSQL")
	const instant = 1698543000 // 2023-10-29T01:30:00Z
	sep := "?"
	if strings.Contains(dsn, "?") {
		sep = "&"
	}
	db, err := sql.Open("mysql", dsn+sep+"time_zone="+url.QueryEscape("'Europe/London'")+"&timestamp=1698543000")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	ctx := context.Background()
	var truth float64
	if err := db.QueryRowContext(ctx, "SELECT @@timestamp").Scan(&truth); err != nil {
		t.Skipf("session with a named time zone: %v (load the server's time zone tables)", err)
	}
	if int64(truth) != instant {
		t.Skipf("session timestamp %v not pinned (not MariaDB?)", truth)
	}
	l := siteSQLLedger(t, db, sqlstore.MySQL)
	eu := nodeid.Site{Name: "eu", Fields: "datacenter=1", First: 4, Count: 4}
	reg := nodeidtest.NewMemStore()
	reg.SetIdentity("registry-1")
	if _, err := l.ClaimSite(ctx, site.Registry{Store: reg, Where: "eu"}, eu, nodeidtest.Layout); err != nil {
		t.Fatal(err)
	}
	floor, err := l.ReleaseDestroyed(ctx, eu)
	if err != nil {
		t.Fatal(err)
	}
	want := nodeid.DestroyedFloor(time.Unix(instant, 0))
	if floor < want {
		t.Errorf("DUPLICATE RISK: the ledger's clock reads %s (session time zone Europe/London, in the repeated hour); "+
			"--site-destroyed records floor %s, %s below the floor of the true time %s: below what the site may have issued",
			time.Unix(instant, 0).UTC(), time.UnixMilli(floor).UTC(), time.Duration(want-floor)*time.Millisecond, time.UnixMilli(want).UTC())
	}
}
