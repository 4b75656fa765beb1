package cluster

import (
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	_ "github.com/go-sql-driver/mysql" // the database/sql driver "mysql"

	_ "github.com/jackc/pgx/v5/stdlib" // the database/sql driver "pgx"

	"github.com/firn-id/firn/internal/faultproxy"
	"github.com/firn-id/firn/internal/testenv"
	"github.com/firn-id/firn/test/cluster/history"
)

// segmentDB is one database of the run's set of two: PostgreSQL issues
// the IDs ≡ 0 (mod 2), MariaDB those ≡ 1.
type segmentDB struct {
	store  string // postgres or mysql, as segments.stores names it
	driver string // database/sql driver
	dsn    string // as FIRN_TEST_… gives it
	host   string // host:port in dsn
}

// mysqlHost finds the host:port of a go-sql-driver DSN: user@tcp(HOST)/db.
var mysqlHost = regexp.MustCompile(`tcp\(([^)]*)\)`)

// startDB names the run's set of segment databases — the PostgreSQL of
// FIRN_TEST_POSTGRES and the MariaDB of FIRN_TEST_MYSQL, each with a
// table of the run's own (failing under CI=true when one is unset,
// skipping otherwise) — and drops the tables when the test ends.
func (c *Cluster) startDB() {
	pg := testenv.Endpoint(c.t, "FIRN_TEST_POSTGRES")
	my := testenv.Endpoint(c.t, "FIRN_TEST_MYSQL")
	u, err := url.Parse(pg)
	if err != nil || u.Host == "" {
		c.t.Fatalf("FIRN_TEST_POSTGRES: want a postgres:// URL with a host: %v", err)
	}
	m := mysqlHost.FindStringSubmatch(my)
	if m == nil {
		c.t.Fatalf("FIRN_TEST_MYSQL: want user@tcp(host:port)/database")
	}
	c.dbs = []segmentDB{{"postgres", "pgx", pg, u.Host}, {"mysql", "mysql", my, m[1]}}
	c.SegmentTable = "firn_segments_chaos_" + suffix()
	c.segmentSet = "chaos-" + suffix()
	c.t.Cleanup(func() {
		for _, d := range c.dbs {
			if err := d.exec("DROP TABLE IF EXISTS " + c.SegmentTable); err != nil {
				c.t.Errorf("drop %s on %s: %v", c.SegmentTable, d.store, err)
			}
		}
	})
}

// exec runs one statement on d, directly (not through a proxy).
func (d segmentDB) exec(stmt string) error {
	db, err := sql.Open(d.driver, d.dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err = db.ExecContext(ctx, stmt)
	return err
}

// via returns d's DSN with its host replaced by the proxy's.
func (d segmentDB) via(x *faultproxy.Proxy) string {
	if d.store == "mysql" {
		return mysqlHost.ReplaceAllLiteralString(d.dsn, "tcp("+x.Addr()+")")
	}
	u, _ := url.Parse(d.dsn)
	u.Host = x.Addr()
	return u.String()
}

// dbProxies returns one fault proxy to each database of the set for one
// process, or none without segments.
func (c *Cluster) dbProxies() []*faultproxy.Proxy {
	var out []*faultproxy.Proxy
	for _, d := range c.dbs {
		out = append(out, faultproxy.New(c.t, d.host))
	}
	return out
}

// segmentConfig writes the configuration file that serves every tag from
// the set through the proxies xs, and returns the flags that name it.
// The set is file only (segments.stores).
func (c *Cluster) segmentConfig(name string, xs []*faultproxy.Proxy) ([]string, error) {
	if len(xs) == 0 {
		return nil, nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "segments:\n  format: set\n  table: %s\n  set: %s\n  stores:\n", c.SegmentTable, c.segmentSet)
	for i, d := range c.dbs {
		fmt.Fprintf(&b, "    - {store: %s, dsn: %q}\n", d.store, d.via(xs[i]))
	}
	path := filepath.Join(c.Dir, name+".yaml")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		return nil, err
	}
	return []string{"--config", path}, nil
}

// createTag creates SegmentTag through the first process that serves (a
// process waiting for a node answers 503 not_ready).
func (c *Cluster) createTag() {
	body := fmt.Sprintf(`{"tag":%q,"first":"1","step":%d}`, SegmentTag, 10*c.cfg.Batch)
	var answers []string
	for _, p := range c.Procs {
		_, addr := p.Life()
		if addr == "" {
			continue
		}
		resp, err := http.Post("http://"+addr+"/v1/segments", "application/json", strings.NewReader(body))
		if err != nil {
			answers = append(answers, p.Name+": "+err.Error())
			continue
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusCreated || resp.StatusCode == http.StatusOK {
			return
		}
		answers = append(answers, p.Name+": "+resp.Status)
	}
	c.t.Fatalf("create tag %s: no process created it (%s)", SegmentTag, strings.Join(answers, "; "))
}

// RecordSegmentEnd reads SegmentTag's counter in each database of the
// set, directly, and records it in the history for the checker's range
// check: a row of Tinyid's semantics issued IDs up to its max_id, those
// of its residue class.
func (c *Cluster) RecordSegmentEnd() error {
	for i, d := range c.dbs {
		db, err := sql.Open(d.driver, d.dsn)
		if err != nil {
			return err
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		var maxID int64
		q := "SELECT max_id FROM " + c.SegmentTable + " WHERE biz_type = ?"
		if d.store == "postgres" {
			q = strings.Replace(q, "?", "$1", 1)
		}
		err = db.QueryRowContext(ctx, q, SegmentTag).Scan(&maxID)
		cancel()
		db.Close()
		if err != nil {
			return fmt.Errorf("read the counter of %s on %s: %w", SegmentTag, d.store, err)
		}
		c.Record(history.Record{Kind: history.KindSegmentEnd, Tag: SegmentTag, End: maxID + 1,
			Delta: int64(len(c.dbs)), Remainder: int64(i)})
	}
	return nil
}

// DBCut cuts a process holding a node (so serving) off from the
// database for a few seconds: its buffered ranges serve on, then it
// answers unavailable, and it must serve again by itself once the
// database answers.
func (f *Faults) DBCut(i int) Result {
	p := f.holder(i)
	r, live, _ := f.begin("db-cut", p)
	for _, x := range p.db {
		x.Cut()
	}
	time.Sleep(3 * time.Second)
	for _, x := range p.db {
		x.Restore()
	}
	r.Err = f.load.WaitSegments(p, time.Now(), 15*time.Second)
	f.end(&r, live)
	return r
}

// DBDown makes the database unreachable for every process for a few
// seconds, as if it stopped: every connection cut and new ones refused.
// Each process that served segment IDs before must serve them again by
// itself.
func (f *Faults) DBDown() Result {
	r := Result{Fault: "db-down", Target: "all", Node: -1}
	serving := f.load.ServingSegments(time.Second)
	live := f.load.Mark(300 * time.Millisecond)
	f.c.Phase(r.Fault)
	f.cutDBs(-1)
	time.Sleep(3 * time.Second)
	back := time.Now()
	f.restoreDBs()
	for _, p := range serving {
		if r.Err == nil {
			r.Err = f.load.WaitSegments(p, back, 15*time.Second)
		}
	}
	f.end(&r, live)
	return r
}

// cutDBs cuts every process off from database i of the set, or from all
// of them when i is -1.
func (f *Faults) cutDBs(i int) {
	for _, p := range f.c.Procs {
		for j, x := range p.db {
			if i < 0 || i == j {
				x.Cut()
			}
		}
	}
}

// restoreDBs ends every cut to a database.
func (f *Faults) restoreDBs() {
	for _, p := range f.c.Procs {
		for _, x := range p.db {
			x.Restore()
		}
	}
}

// DBHalfDown makes the set's first database (PostgreSQL, the IDs ≡ 0 mod
// 2, which a set reserves from while it answers) unreachable for
// everyone for longer than a buffer lasts: the tag must be served on from
// the second (MariaDB) alone, no segment request failing.
func (f *Faults) DBHalfDown() Result {
	r := Result{Fault: "db-half-down", Target: "all", Node: -1}
	live := f.load.Mark(300 * time.Millisecond)
	f.c.Phase(r.Fault)
	failed := f.load.SegmentErrors()
	f.cutDBs(0)
	time.Sleep(12 * time.Second) // past the 5 s a buffer holds at the pace of the load
	f.restoreDBs()
	if n := f.load.SegmentErrors() - failed; n > 0 {
		r.Err = fmt.Errorf("%d segment requests failed while one database of two was down", n)
	}
	f.end(&r, live)
	return r
}
