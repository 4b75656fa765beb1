package testserver_test

import (
	"testing"
	"time"

	"github.com/firn-id/firn/internal/testserver"
)

// An ensemble names one leader; with it killed another member leads, and
// the old one serves again as a member once restarted.
func TestEnsembleLeader(t *testing.T) {
	e := testserver.ZooKeeperEnsemble(t, 3)
	if err := e.WaitServing(30 * time.Second); err != nil {
		t.Fatal(err)
	}
	old, err := e.Leader()
	if err != nil {
		t.Fatal(err)
	}
	leaders := 0
	for _, m := range e.Members() {
		switch m.Mode() {
		case "leader":
			leaders++
		case "follower":
		default:
			t.Errorf("%s: mode %q, want leader or follower", m.Addr, m.Mode())
		}
	}
	if leaders != 1 {
		t.Fatalf("%d members say they lead, want 1", leaders)
	}
	old.Kill()
	if mode := old.Mode(); mode != "" {
		t.Errorf("a killed member answers srvr with mode %q", mode)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		m, err := e.Leader()
		if err == nil && m != old {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no other member leads 30s after the leader's kill: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := old.Restart(); err != nil {
		t.Fatal(err)
	}
	if err := e.WaitServing(30 * time.Second); err != nil {
		t.Fatal(err)
	}
}
