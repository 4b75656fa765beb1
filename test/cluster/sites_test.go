package cluster_test

import (
	"testing"
	"time"

	"github.com/firn-id/firn/test/cluster"
	"github.com/firn-id/firn/test/cluster/history"
)

// sitesPlan is a plan's sites run (TestChaosSites): at least ids IDs over
// both sites and at least rounds rounds, batches of batch. ledgerCut is
// how long each site is cut off from the ledger. ledgerOnly runs the
// ledger's faults alone, the faults no store run has. ids 0: the plan
// has no sites run.
type sitesPlan struct {
	ids        int64
	rounds     int
	batch      int
	ledgerCut  time.Duration
	ledgerOnly bool
}

// The two sites of the run, each with its value of the site field.
var sites = []struct {
	name  string
	value uint64
}{{"eu", 1}, {"us", 2}}

// TestChaosSites runs the plan's sites run: two sites, each a cluster of
// three firn serve (two hold the site's two nodes, one waits for a node)
// on a 3-member etcd of its own (its registry), claimed
// with `firn site claim` in a ledger on a third 3-member etcd, which every
// process reaches through fault proxies of its own. Both sites are loaded
// throughout; each round runs on each site in turn every fault of the
// store run that hits firn serve or its node store, then the site cut off
// from the ledger (the waiting process and a holder started again
// meanwhile) and the ledger's leader killed. The histories of both sites are checked as one:
// no ID twice over both, each ID carrying its site's value.
func TestChaosSites(t *testing.T) {
	pl := planOf(t)
	sp := pl.sites
	if sp.ids == 0 {
		t.Logf("the %s plan names no sites run; make chaos (FIRN_CHAOS=long) runs it", pl.name)
		return
	}
	// The evidence report has a section per node store's run; the sites
	// run writes none.
	t.Setenv("FIRN_EVIDENCE", "")
	began := time.Now()
	bins := cluster.BuildBins(t, t.TempDir())
	ledger := cluster.StartLedger(t)
	var (
		cs     []*cluster.Cluster
		loads  []*cluster.Load
		faults []*cluster.Faults
		values = map[string]uint64{}
	)
	for _, s := range sites {
		c := cluster.Start(t, cluster.Config{Batch: sp.batch, Pace: pl.pace, ClientCallers: 2, Store: cluster.StoreEtcd, Bins: bins,
			Site: &cluster.Site{Name: s.name, Value: s.value, Ledger: ledger}})
		t.Logf("site %s (%s=%d) up after %s; artifacts in %s", s.name, cluster.SiteField, s.value, time.Since(began).Round(time.Millisecond), c.Dir)
		cs, values[s.name] = append(cs, c), s.value
	}
	for _, c := range cs {
		load := c.StartLoad()
		loads, faults = append(loads, load), append(faults, cluster.NewFaults(c, load))
	}
	ids := func() (n int64) {
		for _, l := range loads {
			n += l.IDs()
		}
		return n
	}
	var results []cluster.Result
	for round := 0; round < sp.rounds || ids() < sp.ids; round++ {
		for i, f := range faults {
			cs[i].Phase("steady")
			time.Sleep(time.Second)
			if !sp.ledgerOnly {
				results = append(results,
					f.Kill9(round), f.Pause(round+1, false), f.Pause(round+2, true),
					f.Partition(round), f.StoreCrash(), f.Clock(round+1, clockOffset), f.Rolling())
			}
			results = append(results, f.LedgerCut(round, sp.ledgerCut), f.LedgerCrash())
			t.Logf("round %d, site %s: %d IDs after %s", round, sites[i].name, ids(), time.Since(began).Round(time.Millisecond))
		}
	}
	var paths []string
	for i, c := range cs {
		loads[i].Stop()
		if err := c.Flush(); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, c.HistoryPath())
	}
	rep := check(t, history.Options{Layout: cluster.SiteLayout(), Sites: values, SiteField: cluster.SiteField}, paths...)
	for _, c := range cs {
		c.Evidence(t, rep, results) // stops the site's processes and checks its store operations
	}
	t.Logf("%s sites run: %d IDs over %d sites in %s", pl.name, rep.IDs, len(cs), time.Since(began).Round(time.Millisecond))
	if rep.IDs < int(sp.ids) {
		t.Errorf("%d IDs checked, want at least %d", rep.IDs, sp.ids)
	}
	assertRun(t, pl, cluster.StoreEtcd, rep, results, cs...)
}
