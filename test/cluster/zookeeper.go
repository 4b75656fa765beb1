package cluster

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/firn-id/firn/internal/faultproxy"
	"github.com/firn-id/firn/internal/testserver"
)

// zkNodes is the ZooKeeper node store: a real 3-member ensemble on
// loopback (internal/testserver, tickTime testserver.ZooKeeperTick). Node N is free
// again once zkstore's held/N, the ephemeral znode of the holding claim's
// session, is gone: its session expired or was closed.
type zkNodes struct {
	ens       *testserver.Ensemble
	conn      *zk.Conn // the harness's own session, to the members directly
	namespace string   // a path of the run's own
}

func (c *Cluster) startZooKeeper() nodeStore {
	e := testserver.ZooKeeperEnsemble(c.t, 3)
	conn, _, err := zk.Connect(e.Servers(), 4*time.Second, zk.WithLogger(quiet{}), zk.WithLogInfo(false))
	if err != nil {
		c.t.Fatal(err)
	}
	c.t.Cleanup(conn.Close)
	return &zkNodes{ens: e, conn: conn, namespace: "/firn-chaos/" + suffix()}
}

// quiet drops the ZooKeeper client's own log lines.
type quiet struct{}

func (quiet) Printf(string, ...any) {}

func (s *zkNodes) upstreams() []string { return s.ens.Servers() }

func (s *zkNodes) flags(xs []*faultproxy.Proxy) []string {
	var eps []string
	for _, x := range xs {
		eps = append(eps, x.Addr())
	}
	return []string{"--store", StoreZooKeeper, "--endpoints", strings.Join(eps, ","), "--namespace", s.namespace}
}

// heldPath is zkstore's ephemeral znode of node n's claim; hwmPath its
// HWM's.
func (s *zkNodes) heldPath(n uint64) string {
	return s.namespace + "/held/" + strconv.FormatUint(n, 10)
}
func (s *zkNodes) hwmPath(n uint64) string { return s.namespace + "/hwm/" + strconv.FormatUint(n, 10) }

// free polls node n's held/N, after a Sync (a member's reads can lag the
// leader), until it is gone or belongs to a session other than the one
// first seen: a taker that claimed it between two polls does not hide
// that it was freed.
func (s *zkNodes) free(ctx context.Context, n uint64) <-chan time.Time {
	owner := int64(-1)
	return poll(ctx, 10*time.Millisecond, func(context.Context) bool {
		st, found, err := s.stat(s.heldPath(n))
		switch {
		case err != nil:
			return false
		case !found:
			return true
		case owner < 0:
			owner = st.EphemeralOwner
		}
		return st.EphemeralOwner != owner
	})
}

// hwmWritten polls node n's hwm/N until its version differs from the
// first one seen.
func (s *zkNodes) hwmWritten(ctx context.Context, n uint64) <-chan time.Time {
	first := int32(-1)
	return poll(ctx, 5*time.Millisecond, func(context.Context) bool {
		st, found, err := s.stat(s.hwmPath(n))
		if err != nil || !found {
			return false
		}
		if first < 0 {
			first = st.Version
		}
		return st.Version != first
	})
}

// stat reads path's stat after a Sync of the namespace.
func (s *zkNodes) stat(path string) (*zk.Stat, bool, error) {
	if _, err := s.conn.Sync(s.namespace); err != nil && !errors.Is(err, zk.ErrNoNode) {
		return nil, false, err
	}
	found, st, err := s.conn.Exists(path)
	return st, found, err
}

// crash kills the ensemble's leader, waits down, starts it again and
// waits until every member serves under a leader.
func (s *zkNodes) crash(down time.Duration) (string, error) {
	m, err := s.ens.Leader()
	if err != nil {
		return "", err
	}
	m.Kill()
	time.Sleep(down)
	if err := m.Restart(); err != nil {
		return m.Addr, fmt.Errorf("restart ZooKeeper member %s: %w", m.Addr, err)
	}
	what := "zookeeper leader " + m.Addr
	if err := s.ens.WaitServing(30 * time.Second); err != nil {
		return what, err
	}
	return what, nil
}
