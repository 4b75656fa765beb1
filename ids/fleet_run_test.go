package ids_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/firn-id/firn/ids"
	"github.com/firn-id/firn/internal/testenv"
)

// The fleet's behaviour, asserted on a small fleet (a 5-bit pool: 32
// nodes, TTL 3 s; smaller on PostgreSQL, see small) on every store, in make test; TestFleet measures the
// same on 1,000 processes (make fleet). Time bounds are generous: they
// catch a process that waits for the wrong thing, not a slow machine. The
// TTL too: under -race, beside the other packages' tests on 2 cores, 40
// processes renewing a 2 s lease lost some to starvation alone.

const smallTTL = 3 * time.Second

// small is the small fleet on store name: node bits, processes, TTL.
// PostgreSQL's is smaller, with the default renewal interval (1 s): a
// process embedding firn opens a connection per renewal (sqlstore.Embed),
// and PostgreSQL starts a server process for each, 20–65 ms of CPU on
// the 2-core test VM, so the VM carries about 30 processes renewing
// every second (docs/performance.md, "Fleets").
func small(name string) (bits, n int, ttl time.Duration) {
	if name == "postgres" {
		return 3, 8, 5 * time.Second
	}
	return 5, 20, smallTTL
}

// margin is added to every time bound of the small fleet's tests.
const margin = 3 * time.Second

// TestFleetExhaustion: 40 processes on a pool of 32 nodes (PostgreSQL:
// 10 on 8). The extra ones wait, not ready, with a reason naming the namespace and the pool; no
// holder loses its lease or its node while they wait; a node freed by a
// Close, or by a killed process's lease running out, goes to a waiter,
// within TTL + 1 s of it coming free, and a held one never does.
func TestFleetExhaustion(t *testing.T) {
	for _, name := range []string{"etcd", "postgres", "mysql", "zookeeper"} {
		t.Run(name, func(t *testing.T) {
			bits, _, ttl := small(name)
			r := newRig(t, name, layoutOf(bits), ttl, members(name, false))
			pool := 1 << bits
			exhaust(t, r, pool, pool/4, max(1, pool/16))
		})
	}
}

// exhaust runs pool+extra processes on a pool of pool nodes, frees
// freed nodes by Close and as many by kill -9, and checks what follows.
func exhaust(t *testing.T, r *rig, pool, extra, freed int) {
	all := r.spawn(pool+extra, true)
	start := time.Now()
	if n := waitReadyN(all, pool, coldStartBound(pool+extra)); n != pool {
		t.Fatalf("%d of %d processes hold a node after the cold start; want the pool, %d (%s)", n, len(all), pool, &r.ops)
	}
	t.Logf("exhaustion %s: %d of %d hold a node after %s; %s", r.name, pool, len(all), time.Since(start).Round(time.Millisecond), &r.ops)
	var holders, waiters []*proc
	for _, p := range all {
		if p.ready.Load() != 0 {
			holders = append(holders, p)
		} else {
			waiters = append(waiters, p)
		}
	}
	r.noLoss.Store(true)
	// Wait a while: every waiter keeps waiting, for the reason it says;
	// every holder keeps its node.
	nodes := map[*proc]uint64{}
	for _, p := range holders {
		n, ok := p.src.Node()
		if !ok {
			t.Fatalf("process %d was ready but holds no node", p.id)
		}
		nodes[p] = n
	}
	for end := time.Now().Add(3 * r.ttl); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		r.liveNodes()
		for _, p := range holders {
			if n, ok := p.src.Node(); !ok || n != nodes[p] {
				t.Fatalf("holder %d left node %d while the pool was full (now %d, %v)", p.id, nodes[p], n, ok)
			}
		}
	}
	refused := 0
	for _, p := range waiters {
		var nr *ids.NotReadyError
		if err := p.src.Ready(); !errors.As(err, &nr) {
			t.Fatalf("waiter %d: Ready = %v, want a *NotReadyError", p.id, err)
		}
		switch {
		case strings.Contains(nr.Reason, r.namespace) && strings.Contains(nr.Reason, fmt.Sprintf("of %d", pool)):
		case (r.name == "postgres" || r.name == "mysql") && strings.Contains(nr.Reason, "too many connections"):
			// Every try of this waiter for a TTL was refused by the
			// database's connection limit, which its reason says.
			refused++
		default:
			t.Errorf("waiter %d says %q: want the namespace %q and the pool's %d nodes named", p.id, nr.Reason, r.namespace, pool)
		}
	}
	if refused > 0 {
		t.Logf("exhaustion %s: %d of %d waiters had every try of the last TTL refused by the database's connection limit, and said so", r.name, refused, len(waiters))
	}
	before := r.ops.poolFull.Load()
	// Free nodes: freed closed, freed killed.
	var closed, killed []*proc
	var freedNodes []uint64
	for i, p := range holders[:2*freed] {
		freedNodes = append(freedNodes, nodes[p])
		if i < freed {
			closed = append(closed, p)
		} else {
			killed = append(killed, p)
		}
	}
	at := time.Now()
	for _, p := range killed {
		r.kill(p)
	}
	for _, p := range closed {
		if err := r.stop(p); err != nil {
			t.Errorf("close holder %d: %v", p.id, err)
		}
	}
	closedAt := time.Now()
	if n := waitReadyN(waiters, 2*freed, 2*r.ttl+2*margin); n != 2*freed {
		t.Fatalf("%d waiters took a node after %d were freed; want %d", n, 2*freed, 2*freed)
	}
	var took []uint64
	var waits []time.Duration
	for _, p := range waiters {
		if p.ready.Load() == 0 {
			if err := p.src.Ready(); !errors.As(err, new(*ids.NotReadyError)) {
				t.Errorf("waiter %d, no node free for it: Ready = %v, want a *NotReadyError", p.id, err)
			}
			continue
		}
		n, _ := p.src.Node()
		took = append(took, n)
		waits = append(waits, time.Unix(0, p.ready.Load()).Sub(at))
	}
	slices.Sort(took)
	slices.Sort(freedNodes)
	slices.Sort(waits)
	if !slices.Equal(took, freedNodes) {
		t.Errorf("the waiters took nodes %v; want the freed ones, %v", took, freedNodes)
	}
	// The closed holders' nodes are free once Close returns; the killed
	// ones' within TTL + 1 s of the kill.
	if w := waits[freed-1]; w > closedAt.Sub(at)+time.Second+margin {
		t.Errorf("the first %d waiters took a node %v after it was freed by Close (Close returned after %v)", freed, waits[:freed], closedAt.Sub(at))
	}
	if w := waits[len(waits)-1]; w > r.ttl+time.Second+margin {
		t.Errorf("the waiters took the killed holders' nodes %v after the kill; want within TTL (%s) + 1 s", waits, r.ttl)
	}
	time.Sleep(r.ttl) // no more should come
	if n := waitReadyN(waiters, len(waiters), 0); n != 2*freed {
		t.Errorf("%d waiters hold a node, %d freed", n, 2*freed)
	}
	t.Logf("exhaustion %s: freed %d by Close, %d by kill -9: taken after %v; pool-full answers while waiting: %d; %s",
		r.name, freed, freed, waits, r.ops.poolFull.Load()-before, &r.ops)
	r.liveNodes()
	r.checkFaults()
}

// TestFleetRollingRestart: 20 processes (PostgreSQL: 8) replaced in
// batches of a quarter (25 % surge, as a Kubernetes rolling update) on a
// pool that holds the surge: every new
// process holds a node within one TTL, since nodes are free; the old
// processes' nodes are free once Close returns (the first two batches)
// or within TTL + 1 s of a kill -9 (the last two); no process ever takes
// a node another live one holds.
func TestFleetRollingRestart(t *testing.T) {
	for _, name := range []string{"etcd", "postgres", "mysql", "zookeeper"} {
		t.Run(name, func(t *testing.T) {
			bits, n, ttl := small(name)
			for 1<<bits < n*5/4 { // nodes free for the surge
				bits++
			}
			r := newRig(t, name, layoutOf(bits), ttl, members(name, false))
			roll(t, r, n, 4, 2)
		})
	}
}

// roll starts n processes, then replaces them in batches batches, the
// first graceful of them by Close, the rest by kill -9.
func roll(t *testing.T, r *rig, n, batches, graceful int) rollFigures {
	var f rollFigures
	old := r.spawn(n, true)
	if got := waitReady(old, coldStartBound(n)); got != n {
		t.Fatalf("%d of %d processes hold a node after the cold start (%s)", got, n, &r.ops)
	}
	r.noLoss.Store(true)
	prober := r.prober()
	size := n / batches
	for b := range batches {
		fresh := r.spawn(size, false)
		if got := waitReady(fresh, r.ttl+margin); got != size {
			t.Fatalf("batch %d: %d of %d new processes hold a node within TTL + %s, nodes free (%s)", b, got, size, margin, &r.ops)
		}
		for _, p := range fresh {
			d, _ := p.readyIn()
			f.start = append(f.start, d)
		}
		stopping := old[b*size : (b+1)*size]
		var nodes []uint64
		for _, p := range stopping {
			node, ok := p.src.Node()
			if !ok {
				t.Fatalf("old process %d holds no node before it stops", p.id)
			}
			nodes = append(nodes, node)
		}
		at := time.Now()
		var wg sync.WaitGroup
		for _, p := range stopping {
			if b < graceful {
				wg.Go(func() {
					if err := r.stop(p); err != nil {
						t.Errorf("close %d: %v", p.id, err)
					}
				})
			} else {
				r.kill(p)
			}
		}
		wg.Wait()
		var mu sync.Mutex
		for _, node := range nodes {
			wg.Go(func() {
				ctx, cancel := context.WithTimeout(context.Background(), 3*r.ttl+margin)
				defer cancel()
				freeAt, err := r.probe(ctx, prober, node)
				if err != nil {
					t.Errorf("batch %d: node %d not free: %v", b, node, err)
					return
				}
				mu.Lock()
				defer mu.Unlock()
				if b < graceful {
					f.closed = append(f.closed, freeAt.Sub(at))
				} else {
					f.killed = append(f.killed, freeAt.Sub(at))
				}
			})
		}
		wg.Wait()
		r.liveNodes()
	}
	for _, d := range f.closed {
		if d > 2*time.Second+margin {
			t.Errorf("a closed process's node came free %v after Close was called; want at once", d)
		}
	}
	for _, d := range f.killed {
		if d > r.ttl+time.Second+margin {
			t.Errorf("a killed process's node came free %v after the kill; want within TTL (%s) + 1 s", d, r.ttl)
		}
	}
	slices.Sort(f.start)
	slices.Sort(f.closed)
	slices.Sort(f.killed)
	t.Logf("rolling restart %s: %d processes, %d batches: new ready in median %v, max %v; freed by Close in max %v; by kill -9 in median %v, max %v; %s",
		r.name, n, batches, median(f.start), last(f.start), last(f.closed), median(f.killed), last(f.killed), &r.ops)
	r.checkFaults()
	return f
}

type rollFigures struct{ start, closed, killed []time.Duration }

func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	return ds[len(ds)/2].Round(time.Millisecond)
}

func last(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	return ds[len(ds)-1].Round(time.Millisecond)
}

// members is the size of the etcd cluster or ZooKeeper ensemble: 3 for
// etcd always; for ZooKeeper, 3 in the fleet runs, one in make test
// (three JVMs start in about as many times the time).
func members(name string, long bool) int {
	if name == "zookeeper" && !long {
		return 1
	}
	return 3
}

// TestFleetConnectionLimit: 30 processes (PostgreSQL: 12) on a database
// that lets their user open 5 connections at once. Through ids.Open (sqlstore.Embed: no
// connection kept between statements) every one takes a node and keeps
// it; through ids.FromDB over database/sql's default pool, which keeps a
// connection of each process open, no more than the limit can start;
// over a *sql.DB set with sqlstore.Embed, all do.
func TestFleetConnectionLimit(t *testing.T) {
	for _, name := range []string{"postgres", "mysql"} {
		t.Run(name, func(t *testing.T) {
			connectionLimit(t, name)
		})
	}
}

func connectionLimit(t *testing.T, name string) {
	const limit = 5
	n, ttl := 30, smallTTL
	if name == "postgres" {
		n, ttl = 12, 5*time.Second
	}
	testenv.NotShort(t, "a real database")
	for _, tc := range []struct {
		how  string
		open func(r *rig, dsn string) *ids.Source
		all  bool
	}{
		{"Open", nil, true},
		{"FromDB, default pool", fromDB(false), false},
		{"FromDB, sqlstore.Embed", fromDB(true), true},
	} {
		t.Run(tc.how, func(t *testing.T) {
			r := &rig{t: t, name: name, layout: layoutOf(5), ttl: ttl, byLog: map[*slog.Logger]*proc{}, namespace: fleetName("fleet_")}
			if name == "postgres" {
				r.targets, r.target = limitedPostgres(t, limit)
			} else {
				r.targets, r.target = limitedMySQL(t, limit)
			}
			var ps []*proc
			if tc.open == nil {
				ps = r.spawn(n, false)
			} else {
				for range n {
					p := &proc{log: slog.New(slog.DiscardHandler), start: time.Now()}
					r.mu.Lock()
					p.id = len(r.procs)
					r.procs = append(r.procs, p)
					r.mu.Unlock()
					p.src = tc.open(r, r.target(r.targets))
					go p.watchReady()
					ps = append(ps, p)
				}
			}
			t.Cleanup(r.stopAll) // before the databases FromDB's processes opened close
			got := waitReady(ps, 20*time.Second)
			if !tc.all {
				if got > limit {
					t.Errorf("%d of %d processes hold a node over default pools, the database allowing %d connections: the rule's control did not hold", got, n, limit)
				}
				t.Logf("%s, %s: %d of %d processes hold a node (limit %d connections)", name, tc.how, got, n, limit)
				return
			}
			if got != n {
				t.Fatalf("%d of %d processes hold a node, the database allowing %d connections", got, n, limit)
			}
			// Renewals keep every lease for three TTLs: a refused
			// connection is retried, never a lost lease.
			nodes := map[*proc]uint64{}
			for _, p := range ps {
				nodes[p], _ = p.src.Node()
			}
			for end := time.Now().Add(3 * r.ttl); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
				for _, p := range ps {
					if node, ok := p.src.Node(); !ok || node != nodes[p] {
						t.Fatalf("process %d lost node %d (now %d, %v): %v", p.id, nodes[p], node, ok, p.src.Ready())
					}
				}
			}
			r.liveNodes()
			r.checkFaults()
		})
	}
}

// coldStartBound bounds the cold start the rolling restart and the
// exhaustion runs begin with, which is not what they measure: a minute,
// plus 100 ms a process (a fleet of 1,000 cold-starts in 75–95 s on the
// 3-member etcd of a 2-core machine, the clients sharing its cores).
func coldStartBound(n int) time.Duration { return time.Minute + time.Duration(n)*100*time.Millisecond }
