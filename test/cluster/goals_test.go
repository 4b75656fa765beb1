package cluster_test

import (
	"testing"
	"time"

	"github.com/firn-id/firn/internal/testserver"
	"github.com/firn-id/firn/test/cluster"
	"github.com/firn-id/firn/test/cluster/evidence"
)

// The availability goals of docs/guarantees.md, for a 2 s lease TTL.
const (
	ttl         = 2 * time.Second
	nodeFree    = ttl + time.Second      // a dead holder's node is free
	backAfter   = ttl + time.Second      // a killed process's place serves again
	resumeAfter = 200 * time.Millisecond // a paused or cut-off process's node serves again
	survivor    = 100 * time.Millisecond // the longest pause of a process not hit
)

// nodeFreeGoal is how soon a dead holder's node is free on store. On
// ZooKeeper a claim's session asks the lease TTL as its timeout and the
// ensemble expires it on a tick boundary, at most one tick late, and
// deletes held/N as one more write: the session timeout plus two ticks
// plus a second. No node-free figure spans a leader kill: store-crash
// targets no node, and the faults that do run after the ensemble serves
// again.
func nodeFreeGoal(store string) time.Duration {
	if store == cluster.StoreZooKeeper {
		return ttl + 2*testserver.ZooKeeperTick + time.Second
	}
	return nodeFree
}

// resumeGoal are the faults whose node must serve again within
// resumeAfter of its release: a process paused or cut off. A killed
// process is held to backAfter instead — it serves again from any free
// node — and its old node's return is reported, not asserted.
var resumeGoal = map[string]bool{"sigstop": true, "sigstop-after-hwm": true, "partition": true}

// assertGoals reports medians and p99 of each figure per fault and fails
// on any result past its goal.
func assertGoals(t *testing.T, store string, results []cluster.Result) {
	t.Helper()
	byFault := map[string][]cluster.Result{}
	for _, r := range results {
		byFault[r.Fault] = append(byFault[r.Fault], r)
	}
	for fault, rs := range byFault {
		var free, resumed, back, pause []time.Duration
		for _, r := range rs {
			if r.NodeFree > 0 {
				free = append(free, r.NodeFree)
				resumed = append(resumed, r.Resumed)
				if goal := nodeFreeGoal(store); r.NodeFree > goal {
					t.Errorf("%s: node %d free after %s, goal %s", fault, r.Node, r.NodeFree, goal)
				}
				if resumeGoal[fault] && r.Resumed > resumeAfter {
					t.Errorf("%s: node %d served %s after it was free, goal %s", fault, r.Node, r.Resumed, resumeAfter)
				}
			}
			if r.Back > 0 {
				back = append(back, r.Back)
				if r.Back > backAfter {
					t.Errorf("%s: %s's place served again %s after the kill, goal %s", fault, r.Target, r.Back, backAfter)
				}
			}
			pause = append(pause, r.Pause)
			if r.Pause > survivor && !r.Outage {
				t.Errorf("%s: %s paused %s, goal %s", fault, r.PauseLife, r.Pause, survivor)
			}
		}
		t.Logf("%-18s n=%d  node free %s  node served again %s  killed process's place served again %s  survivors' pause %s", fault, len(rs),
			stats(free), stats(resumed), stats(back), stats(pause))
	}
}

// stats prints the median and p99 of ds.
func stats(ds []time.Duration) string {
	if len(ds) == 0 {
		return "-"
	}
	st := evidence.Of(ds)
	return "median " + st.Median.Round(time.Millisecond).String() + " p99 " + st.P99.Round(time.Millisecond).String()
}
