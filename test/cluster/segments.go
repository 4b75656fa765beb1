package cluster

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the database/sql driver "pgx"

	"github.com/firn-id/firn/internal/faultproxy"
	"github.com/firn-id/firn/internal/testenv"
	"github.com/firn-id/firn/test/cluster/history"
)

// startDB names the run's segment table on the PostgreSQL of
// FIRN_TEST_POSTGRES (failing under CI=true when unset, skipping
// otherwise) and drops it when the test ends.
func (c *Cluster) startDB() {
	raw := testenv.Endpoint(c.t, "FIRN_TEST_POSTGRES")
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		c.t.Fatalf("FIRN_TEST_POSTGRES: want a postgres:// URL with a host: %v", err)
	}
	c.DB, c.dsn = u.Host, u
	c.SegmentTable = "leaf_alloc_chaos_" + suffix()
	c.t.Cleanup(func() {
		db, err := sql.Open("pgx", raw)
		if err != nil {
			c.t.Errorf("drop %s: %v", c.SegmentTable, err)
			return
		}
		defer db.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if _, err := db.ExecContext(ctx, "DROP TABLE IF EXISTS "+c.SegmentTable); err != nil {
			c.t.Errorf("drop %s: %v", c.SegmentTable, err)
		}
	})
}

// dbProxy returns a fault proxy to the database for one process, or nil
// without segments.
func (c *Cluster) dbProxy() *faultproxy.Proxy {
	if c.dsn == nil {
		return nil
	}
	return faultproxy.New(c.t, c.DB)
}

// segmentArgs are the flags that serve SegmentTag through proxy x.
func (c *Cluster) segmentArgs(x *faultproxy.Proxy) []string {
	if x == nil {
		return nil
	}
	u := *c.dsn
	u.Host = x.Addr()
	return []string{"--segment-store", "postgres", "--segment-dsn", u.String(), "--segment-table", c.SegmentTable}
}

// createTag creates SegmentTag through the first process that answers.
func (c *Cluster) createTag() {
	body := fmt.Sprintf(`{"tag":%q,"first":"1","step":%d}`, SegmentTag, 10*c.cfg.Batch)
	for _, p := range c.Procs {
		_, addr := p.Life()
		if addr == "" {
			continue
		}
		resp, err := http.Post("http://"+addr+"/v1/segments", "application/json", strings.NewReader(body))
		if err != nil {
			continue
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusCreated || resp.StatusCode == http.StatusOK {
			return
		}
		c.t.Fatalf("create tag %s on %s: %s", SegmentTag, p.Name, resp.Status)
	}
	c.t.Fatalf("create tag %s: no process answered", SegmentTag)
}

// RecordSegmentEnd reads SegmentTag's counter through a process that
// answers and records it in the history, for the checker's range check.
func (c *Cluster) RecordSegmentEnd() error {
	if c.dsn == nil {
		return nil
	}
	cl := &http.Client{Timeout: 5 * time.Second}
	var last error
	for _, p := range c.Procs {
		_, addr := p.Life()
		if addr == "" {
			continue
		}
		resp, err := cl.Get("http://" + addr + "/v1/segments")
		if err != nil {
			last = err
			continue
		}
		var list struct {
			Tags []struct {
				Tag  string `json:"tag"`
				Next string `json:"next"`
			} `json:"tags"`
		}
		err = json.NewDecoder(resp.Body).Decode(&list)
		resp.Body.Close()
		next := int64(0)
		for _, t := range list.Tags {
			if t.Tag == SegmentTag {
				next, _ = strconv.ParseInt(t.Next, 10, 64)
			}
		}
		if err != nil || resp.StatusCode != http.StatusOK || next < 1 {
			last = fmt.Errorf("GET /v1/segments on %s: %s, %v, next %d", p.Name, resp.Status, err, next)
			continue
		}
		info := struct{ Next int64 }{next}
		c.Record(history.Record{Kind: history.KindSegmentEnd, Tag: SegmentTag, End: info.Next})
		return nil
	}
	return fmt.Errorf("read the counter of %s: %w", SegmentTag, last)
}

// DBCut cuts a process holding a node (so serving) off from the
// database for a few seconds: its buffered ranges serve on, then it
// answers unavailable, and it must serve again by itself once the
// database answers.
func (f *Faults) DBCut(i int) Result {
	p := f.holder(i)
	r, live, _ := f.begin("db-cut", p)
	p.db.Cut()
	time.Sleep(3 * time.Second)
	p.db.Restore()
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
	for _, p := range f.c.Procs {
		p.db.Cut()
	}
	time.Sleep(3 * time.Second)
	back := time.Now()
	for _, p := range f.c.Procs {
		p.db.Restore()
	}
	for _, p := range serving {
		if r.Err == nil {
			r.Err = f.load.WaitSegments(p, back, 15*time.Second)
		}
	}
	f.end(&r, live)
	return r
}
