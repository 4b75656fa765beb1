package ids_test

import (
	"database/sql"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/firn-id/firn/ids"
	"github.com/firn-id/firn/sqlstore"
)

// fromDB opens a process's own *sql.DB and a source over it, the pool
// set by sqlstore.Embed or left as database/sql's default.
func fromDB(embed bool) func(r *rig, dsn string) *ids.Source {
	return func(r *rig, dsn string) *ids.Source {
		driver, dialect := "pgx", sqlstore.Postgres
		if r.name == "mysql" {
			driver, dialect = "mysql", sqlstore.MySQL
		}
		db, err := sql.Open(driver, dsn)
		if err != nil {
			r.t.Fatal(err)
		}
		r.t.Cleanup(func() { db.Close() })
		if embed {
			sqlstore.Embed(db)
		}
		src, err := ids.FromDB(db, dialect, ids.Options{Namespace: r.namespace, Layout: r.layout, TTL: r.ttl, Log: slog.New(slog.DiscardHandler)})
		if err != nil {
			r.t.Fatal(err)
		}
		return src
	}
}

// TestFleet measures a fleet of -fleet.size processes (make fleet: 1,000)
// on each of -fleet.stores: a cold start of all at once on the default
// 10-bit pool, then its steady state; a rolling restart with 25 % surge
// on an 11-bit pool (nodes free for the surge), half the batches by
// Close and half by kill -9; exhaustion, the size plus 10 % on a 10-bit
// pool. The figures are logged as "fleet …" lines (docs/performance.md,
// "Fleets"); the behaviour is asserted as in the small tests.
func TestFleet(t *testing.T) {
	n := *fleetSize
	if n == 0 {
		t.Skip("-fleet.size not set: the fleet runs are make fleet's (the small fleet's tests run in make test)")
	}
	fleetRig := func(t *testing.T, name string, nodeBits int) *rig {
		r := newRig(t, name, layoutOf(nodeBits), *fleetTTL, members(name, true))
		r.window = *fleetWindow
		return r
	}
	for _, name := range fleetStoreNames() {
		t.Run(name, func(t *testing.T) {
			t.Run("cold", func(t *testing.T) { coldStart(t, fleetRig(t, name, 10), n) })
			t.Run("rolling", func(t *testing.T) {
				roll(t, fleetRig(t, name, 11), n, 4, 2)
			})
			t.Run("exhaustion", func(t *testing.T) {
				r := fleetRig(t, name, 10)
				exhaust(t, r, 1024, n*11/10-1024, 10)
			})
		})
	}
}

// coldStart starts n processes at once and waits until all hold a node,
// then watches the fleet in its steady state: store operations per
// second and connections open, for three TTLs and at least 20 s.
func coldStart(t *testing.T, r *rig, n int) {
	start := time.Now()
	ps := r.spawn(n, false)
	spawned := time.Since(start)
	if got := waitReady(ps, 10*time.Minute); got != n {
		t.Fatalf("%d of %d processes hold a node after 10 minutes (%s)", got, n, &r.ops)
	}
	all := time.Since(start)
	var waits []time.Duration
	for _, p := range ps {
		d, _ := p.readyIn()
		waits = append(waits, d)
	}
	slices.Sort(waits)
	ops := r.ops.total()
	t.Logf("fleet %s cold: %d processes, all holding a node after %s (spawned in %s); per process median %s, max %s; store operations %d (%.2f per process): %s",
		r.name, n, all.Round(time.Millisecond), spawned.Round(time.Millisecond), median(waits), last(waits), ops, float64(ops)/float64(n), &r.ops)
	if pf := r.ops.poolFull.Load(); pf != 0 {
		t.Errorf("%d claims answered pool full while %d of %d nodes were free at least", pf, 1024-n, 1024)
	}
	// Steady state: renewals only, every lease kept.
	r.noLoss.Store(true)
	window := max(3*r.ttl, 20*time.Second)
	r0 := r.ops.total()
	var conns []int
	from := time.Now()
	for time.Since(from) < window {
		conns = append(conns, r.conns())
		time.Sleep(200 * time.Millisecond)
	}
	rate := float64(r.ops.total()-r0) / time.Since(from).Seconds()
	slices.Sort(conns)
	t.Logf("fleet %s steady: %d processes, %.0f store operations/s (%.2f per process per second); connections open: median %d, max %d (%.3f per process)",
		r.name, n, rate, rate/float64(n), conns[len(conns)/2], conns[len(conns)-1], float64(conns[len(conns)/2])/float64(n))
	r.liveNodes()
	r.checkFaults()
}
