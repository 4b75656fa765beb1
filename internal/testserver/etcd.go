package testserver

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/firn-id/firn/internal/testenv"
)

// EtcdCluster is a running etcd cluster.
type EtcdCluster struct {
	t       testing.TB
	bin     string
	members []*EtcdMember
}

// EtcdMember is one etcd process.
type EtcdMember struct {
	Name      string
	ClientURL string
	args      []string
	bin       string
	log       *os.File

	mu  sync.Mutex
	cmd *exec.Cmd
}

// Etcd starts a cluster of n members and waits until it answers. Every
// process is killed when t ends, whether it passed or not.
func Etcd(t testing.TB, n int) *EtcdCluster {
	t.Helper()
	bin := testenv.Endpoint(t, "FIRN_TEST_ETCD")
	c := &EtcdCluster{t: t, bin: bin}
	dir := t.TempDir()
	peers := make([]string, n)
	clients := make([]string, n)
	// All ports at once: separate calls of Addr can hand out one
	// port twice, and a member whose two URLs share a port never starts.
	addrs := Addrs(t, 2*n)
	for i := range n {
		peers[i] = "http://" + addrs[2*i]
		clients[i] = "http://" + addrs[2*i+1]
	}
	var initial []string
	for i := range n {
		initial = append(initial, fmt.Sprintf("m%d=%s", i, peers[i]))
	}
	for i := range n {
		name := fmt.Sprintf("m%d", i)
		m := &EtcdMember{Name: name, ClientURL: clients[i], bin: bin, args: []string{
			"--name", name,
			"--data-dir", filepath.Join(dir, name),
			"--listen-client-urls", clients[i], "--advertise-client-urls", clients[i],
			"--listen-peer-urls", peers[i], "--initial-advertise-peer-urls", peers[i],
			"--initial-cluster", strings.Join(initial, ","),
			"--initial-cluster-state", "new", "--initial-cluster-token", "firn-test",
			"--heartbeat-interval", "50", "--election-timeout", "500",
			"--logger", "zap", "--log-level", "error",
		}}
		log, err := os.Create(filepath.Join(dir, name+".log"))
		if err != nil {
			t.Fatal(err)
		}
		m.log = log
		c.members = append(c.members, m)
	}
	t.Cleanup(func() {
		for _, m := range c.members {
			m.Kill()
			m.log.Close()
		}
	})
	for _, m := range c.members {
		if err := m.start(); err != nil {
			t.Fatalf("testserver: start %s: %v", m.Name, err)
		}
	}
	c.WaitHealthy(30 * time.Second)
	return c
}

func (m *EtcdMember) start() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	cmd := exec.Command(m.bin, m.args...)
	cmd.Stdout, cmd.Stderr = m.log, m.log
	if err := cmd.Start(); err != nil {
		return err
	}
	m.cmd = cmd
	return nil
}

// Kill stops the member at once, as a crash would.
func (m *EtcdMember) Kill() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cmd != nil {
		_ = m.cmd.Process.Kill()
		_ = m.cmd.Wait()
		m.cmd = nil
	}
}

// Restart starts a killed member again on its data.
func (m *EtcdMember) Restart() error { return m.start() }

// Members returns the members.
func (c *EtcdCluster) Members() []*EtcdMember { return c.members }

// Endpoints returns every member's client URL.
func (c *EtcdCluster) Endpoints() []string {
	var eps []string
	for _, m := range c.members {
		eps = append(eps, m.ClientURL)
	}
	return eps
}

// Client returns a client of the given endpoints (every member if none),
// closed when the test ends.
func (c *EtcdCluster) Client(endpoints ...string) *clientv3.Client {
	c.t.Helper()
	if len(endpoints) == 0 {
		endpoints = c.Endpoints()
	}
	cli, err := clientv3.New(clientv3.Config{Endpoints: endpoints, DialTimeout: 2 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		c.t.Fatalf("testserver: client: %v", err)
	}
	c.t.Cleanup(func() { _ = cli.Close() })
	return cli
}

// WaitHealthy waits until every running member answers a read.
func (c *EtcdCluster) WaitHealthy(timeout time.Duration) {
	c.t.Helper()
	deadline := time.Now().Add(timeout)
	for _, m := range c.members {
		m.mu.Lock()
		running := m.cmd != nil
		m.mu.Unlock()
		if !running {
			continue
		}
		cli := c.Client(m.ClientURL)
		for {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			_, err := cli.Get(ctx, "health")
			cancel()
			if err == nil {
				break
			}
			if time.Now().After(deadline) {
				c.t.Fatalf("testserver: member %s not healthy after %s: %v", m.Name, timeout, err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
}
