// Package zktest starts real ZooKeeper servers for tests: a standalone
// server or an ensemble of several members, on free loopback ports, each
// with its own data directory and a short tickTime. The ZooKeeper jar
// comes from FIRN_TEST_ZOOKEEPER (see testenv): Debian's zookeeper package
// puts it at /usr/share/java/zookeeper.jar.
package zktest

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/firn-id/firn/internal/servetest"
	"github.com/firn-id/firn/internal/testenv"
)

// TickTime is every test server's tickTime: ZooKeeper grants session
// timeouts from 2 to 20 ticks (400 ms to 4 s).
const TickTime = 200 * time.Millisecond

// Ensemble is a running set of ZooKeeper servers.
type Ensemble struct {
	members []*Member
}

// Member is one ZooKeeper server process.
type Member struct {
	Addr string // client host:port on loopback
	args []string
	log  *os.File

	mu  sync.Mutex
	cmd *exec.Cmd
}

// Start starts a standalone server and waits until it answers. The
// process is killed when t ends.
func Start(t testing.TB) *Ensemble { return StartEnsemble(t, 1) }

// StartEnsemble starts n servers (n = 1: standalone) and waits until
// every one answers. Every process is killed when t ends.
func StartEnsemble(t testing.TB, n int) *Ensemble {
	t.Helper()
	jar := testenv.Endpoint(t, "FIRN_TEST_ZOOKEEPER")
	if _, err := os.Stat(jar); err != nil {
		t.Fatalf("FIRN_TEST_ZOOKEEPER: want the ZooKeeper jar (/usr/share/java/zookeeper.jar): %v", err)
	}
	java := testenv.Tool(t, "java")
	dir := t.TempDir()
	// All ports at once: separate calls can hand out one port twice.
	addrs := servetest.Addrs(t, 3*n)
	port := func(a string) string { _, p, _ := net.SplitHostPort(a); return p }
	var servers []string
	for i := range n {
		servers = append(servers, fmt.Sprintf("server.%d=127.0.0.1:%s:%s", i+1, port(addrs[3*i+1]), port(addrs[3*i+2])))
	}
	e := &Ensemble{}
	for i := range n {
		data := filepath.Join(dir, fmt.Sprintf("m%d", i+1))
		if err := os.MkdirAll(data, 0o755); err != nil {
			t.Fatal(err)
		}
		cfg := []string{
			fmt.Sprintf("tickTime=%d", TickTime.Milliseconds()),
			"initLimit=10", "syncLimit=5",
			"dataDir=" + data,
			"clientPort=" + port(addrs[3*i]),
			"clientPortAddress=127.0.0.1",
			// The admin server would otherwise take *:8080, firn's port.
			"admin.enableServer=false",
			"4lw.commands.whitelist=ruok",
			"maxClientCnxns=0",
		}
		if n > 1 {
			cfg = append(cfg, servers...)
			if err := os.WriteFile(filepath.Join(data, "myid"), fmt.Appendf(nil, "%d\n", i+1), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		file := filepath.Join(data, "zoo.cfg")
		if err := os.WriteFile(file, []byte(strings.Join(cfg, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		log, err := os.Create(filepath.Join(data, "server.log"))
		if err != nil {
			t.Fatal(err)
		}
		m := &Member{Addr: addrs[3*i], log: log, args: []string{java, "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
			"-cp", jar, "org.apache.zookeeper.server.quorum.QuorumPeerMain", file}}
		e.members = append(e.members, m)
		t.Cleanup(func() { m.Kill(); log.Close() })
		if err := m.Restart(); err != nil {
			t.Fatal(err)
		}
	}
	for _, m := range e.members {
		if err := m.waitReady(60 * time.Second); err != nil {
			t.Fatalf("%v; its log:\n%s", err, tail(m.log.Name()))
		}
	}
	return e
}

// Members returns the servers in the order they were started.
func (e *Ensemble) Members() []*Member { return e.members }

// Servers returns every member's client address, for zkstore.Config.
func (e *Ensemble) Servers() []string {
	var s []string
	for _, m := range e.members {
		s = append(s, m.Addr)
	}
	return s
}

// Kill stops the process at once (SIGKILL) and waits for it.
func (m *Member) Kill() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cmd != nil {
		_ = m.cmd.Process.Kill()
		_ = m.cmd.Wait()
		m.cmd = nil
	}
}

// Restart starts the process again with its data directory; it does not
// wait for it to answer.
func (m *Member) Restart() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cmd != nil {
		return fmt.Errorf("zktest: %s is running", m.Addr)
	}
	cmd := exec.Command(m.args[0], m.args[1:]...)
	cmd.Stdout, cmd.Stderr = m.log, m.log
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("zktest: start ZooKeeper: %w", err)
	}
	m.cmd = cmd
	return nil
}

// waitReady waits until the server answers "ruok" with "imok" and serves
// clients (a quorum member answers only once it has a leader).
func (m *Member) waitReady(limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		if fourLetter(m.Addr, "ruok") == "imok" {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("zktest: ZooKeeper at %s did not answer within %s", m.Addr, limit)
}

func fourLetter(addr, cmd string) string {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return ""
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte(cmd)); err != nil {
		return ""
	}
	var b bytes.Buffer
	_, _ = b.ReadFrom(c)
	return b.String()
}

func tail(file string) string {
	b, _ := os.ReadFile(file)
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}
