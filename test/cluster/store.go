package cluster

import (
	"context"
	"fmt"
	"os/exec"
	"regexp"
	"strings"
	"time"

	"github.com/firn-id/firn/internal/faultproxy"
)

// The node stores a cluster can keep its node leases and HWMs in
// (Config.Store), each with its own meaning of "node free again":
//
//   - etcd: a 3-member etcd; node N is free once its key nodes/N is gone
//     (its lease expired or was revoked).
//   - postgres, mysql: a PostgreSQL or MariaDB server the harness runs
//     itself; node N is free once its row in firn_nodes has no owner or a
//     lease_expires at or before the database's clock.
//   - zookeeper: a 3-member ZooKeeper ensemble; node N is free once its
//     ephemeral znode held/N is gone (the holding claim's session expired
//     or was closed).
const (
	StoreEtcd      = "etcd"
	StorePostgres  = "postgres"
	StoreMySQL     = "mysql"
	StoreZooKeeper = "zookeeper"
)

// Stores are the node stores the fault run covers, in the order it runs
// them.
var Stores = []string{StoreEtcd, StorePostgres, StoreMySQL, StoreZooKeeper}

// Pending are the node stores firn serve offers (StoreKinds) that the
// fault run does not cover yet, with why: the run prints them rather than
// leave them out silently. The local store is one machine's and has no
// fault run. Every other store firn serve offers is covered today.
var Pending = map[string]string{}

// storeKinds reads the kinds "firn serve --help" lists for --store, as
// in "--store KIND   local, etcd, postgres or mysql:".
// storeKind is a line of --store's help naming one kind: "local: the
// data directory…", one a line under the flag (the store table's Help).
var storeKind = regexp.MustCompile(`^\s+([a-z]+): `)

// StoreKinds returns the node stores the firn binary bin offers.
func StoreKinds(bin string) ([]string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "serve", "--help")
	// firn refuses a FIRN_ variable it does not know, such as the
	// harness's own FIRN_CHAOS.
	cmd.Env = environ()
	out, _ := cmd.CombinedOutput()
	var kinds []string
	in := false
	for _, line := range strings.Split(string(out), "\n") {
		switch {
		case strings.HasPrefix(line, "  --store KIND"):
			in = true
		case in && strings.HasPrefix(line, "  --"):
			in = false
		case in:
			if m := storeKind.FindStringSubmatch(line); m != nil {
				kinds = append(kinds, m[1])
			}
		}
	}
	if len(kinds) == 0 {
		return nil, fmt.Errorf("%s serve --help lists no --store kinds:\n%s", bin, out)
	}
	return kinds, nil
}

// EmbeddedKinds returns the store kinds the embedding program bin
// (cmd/embedded) registers: those it can open with ids.Open.
func EmbeddedKinds(bin string) ([]string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, "-kinds").Output()
	if err != nil {
		return nil, fmt.Errorf("%s -kinds: %w", bin, err)
	}
	return strings.Fields(string(out)), nil
}

// nodeStore is where a cluster's processes keep node leases and HWMs: the
// one place that knows a store's addresses, flags and records.
type nodeStore interface {
	// upstreams are the host:port addresses of the store; every process
	// reaches each through a fault proxy of its own.
	upstreams() []string
	// flags are firn serve's store flags for a process whose proxies to
	// the upstreams are xs.
	flags(xs []*faultproxy.Proxy) []string
	// free reports when node n is free again, in the store's own terms
	// (see Stores), until ctx ends.
	free(ctx context.Context, n uint64) <-chan time.Time
	// hwmWritten reports the next write of node n's HWM after the call.
	hwmWritten(ctx context.Context, n uint64) <-chan time.Time
	// crash kills the store with SIGKILL (its leader, where it has one),
	// waits down, starts it again and waits until it answers; it returns
	// what it killed.
	crash(down time.Duration) (string, error)
}

// startStore starts the node store cfg names for c.
func (c *Cluster) startStore() nodeStore {
	switch c.cfg.Store {
	case StoreEtcd:
		return c.startEtcd()
	case StorePostgres:
		return c.startPostgres()
	case StoreMySQL:
		return c.startMariaDB()
	case StoreZooKeeper:
		return c.startZooKeeper()
	}
	c.t.Fatalf("node store %q: want one of %v", c.cfg.Store, Stores)
	return nil
}

// poll calls probe every interval until it says yes or ctx ends, and
// reports the time it first did.
func poll(ctx context.Context, interval time.Duration, probe func(context.Context) bool) <-chan time.Time {
	out := make(chan time.Time, 1)
	go func() {
		tk := time.NewTicker(interval)
		defer tk.Stop()
		for {
			if probe(ctx) {
				out <- time.Now()
				return
			}
			select {
			case <-ctx.Done():
				return
			case <-tk.C:
			}
		}
	}()
	return out
}
