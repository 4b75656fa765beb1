package cluster

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/firn-id/firn/internal/faultproxy"
	"github.com/firn-id/firn/internal/testserver"
)

// etcdNodes is the etcd node store: a real 3-member etcd on loopback.
type etcdNodes struct {
	c         *Cluster
	etcd      *testserver.EtcdCluster
	cli       *clientv3.Client
	namespace string // a key prefix of the run's own
}

func (c *Cluster) startEtcd() nodeStore {
	e := testserver.Etcd(c.t, 3)
	return &etcdNodes{c: c, etcd: e, cli: e.Client(), namespace: "/firn-chaos-" + suffix() + "/"}
}

func (s *etcdNodes) upstreams() []string {
	var out []string
	for _, ep := range s.etcd.Endpoints() {
		out = append(out, strings.TrimPrefix(ep, "http://"))
	}
	return out
}

func (s *etcdNodes) flags(xs []*faultproxy.Proxy) []string {
	var eps []string
	for _, x := range xs {
		eps = append(eps, "http://"+x.Addr())
	}
	return []string{"--store", StoreEtcd, "--endpoints", strings.Join(eps, ","), "--namespace", s.namespace}
}

// hwmKey is etcdstore's key of node n's HWM; nodeKey that of its claim.
func (s *etcdNodes) hwmKey(n uint64) string { return s.namespace + "hwm/" + strconv.FormatUint(n, 10) }
func (s *etcdNodes) nodeKey(n uint64) string {
	return s.namespace + "nodes/" + strconv.FormatUint(n, 10)
}

// free reports the deletion of node n's key: its lease expired or was
// revoked.
func (s *etcdNodes) free(ctx context.Context, n uint64) <-chan time.Time {
	return s.watch(ctx, s.nodeKey(n), mvccpb.DELETE)
}

func (s *etcdNodes) hwmWritten(ctx context.Context, n uint64) <-chan time.Time {
	return s.watch(ctx, s.hwmKey(n), mvccpb.PUT)
}

func (s *etcdNodes) watch(ctx context.Context, key string, typ mvccpb.Event_EventType) <-chan time.Time {
	out := make(chan time.Time, 1)
	wc := s.cli.Watch(ctx, key)
	go func() {
		for resp := range wc {
			for _, ev := range resp.Events {
				if ev.Type == typ {
					out <- time.Now()
					return
				}
			}
		}
	}()
	return out
}

// crash kills the etcd leader, waits past an election, and starts it
// again.
func (s *etcdNodes) crash(down time.Duration) (string, error) {
	m, err := s.leader()
	if err != nil {
		return "", err
	}
	m.Kill()
	time.Sleep(down)
	if err := m.Restart(); err != nil {
		return m.Name, fmt.Errorf("restart etcd member %s: %w", m.Name, err)
	}
	s.etcd.WaitHealthy(30 * time.Second)
	return "etcd leader " + m.Name, nil
}

// leader finds the etcd leader from each member's status.
func (s *etcdNodes) leader() (*testserver.EtcdMember, error) {
	for _, m := range s.etcd.Members() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		st, err := s.cli.Status(ctx, m.ClientURL)
		cancel()
		if err == nil && st.Header.MemberId == st.Leader {
			return m, nil
		}
	}
	return nil, fmt.Errorf("no etcd member of %v says it leads", s.etcd.Endpoints())
}
