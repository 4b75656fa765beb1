package testserver

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/firn-id/firn/internal/testenv"
)

// ZooKeeperTick is every test server's tickTime: ZooKeeper grants session
// timeouts from 2 to 20 ticks (400 ms to 4 s).
const ZooKeeperTick = 200 * time.Millisecond

// Ensemble is a running set of ZooKeeper servers.
type Ensemble struct {
	members []*ZooKeeperMember
}

// ZooKeeperMember is one ZooKeeper server process.
type ZooKeeperMember struct {
	Addr    string // client host:port on loopback
	TLSAddr string // the TLS client port's, if ZooKeeperTLS started it
	args    []string
	log     *os.File

	mu  sync.Mutex
	cmd *exec.Cmd
}

// ZooKeeper starts a standalone server and waits until it answers. The
// process is killed when t ends.
func ZooKeeper(t testing.TB) *Ensemble { return ZooKeeperEnsemble(t, 1) }

// ZooKeeperTLS starts a standalone server that also serves clients over TLS,
// with a self-signed certificate for 127.0.0.1, and returns the client
// configuration that trusts it.
func ZooKeeperTLS(t testing.TB) (*Ensemble, *tls.Config) {
	t.Helper()
	dir := t.TempDir()
	keyPEM, certPEM, pool := selfSigned(t)
	key := filepath.Join(dir, "server.pem")
	trust := filepath.Join(dir, "trust.pem")
	if err := os.WriteFile(key, append(keyPEM, certPEM...), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(trust, certPEM, 0o644); err != nil {
		t.Fatal(err)
	}
	addr := Addr(t)
	_, port, _ := net.SplitHostPort(addr)
	e := start(t, 1, []string{
		"secureClientPort=" + port,
		"secureClientPortAddress=127.0.0.1",
		"serverCnxnFactory=org.apache.zookeeper.server.NettyServerCnxnFactory",
		"ssl.keyStore.location=" + key, "ssl.keyStore.type=PEM",
		"ssl.trustStore.location=" + trust, "ssl.trustStore.type=PEM",
		"ssl.clientAuth=none",
	})
	e.members[0].TLSAddr = addr
	return e, &tls.Config{RootCAs: pool, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12}
}

// selfSigned makes a key and a certificate for 127.0.0.1, in PEM, and a
// pool that trusts it.
func selfSigned(t testing.TB) (keyPEM, certPEM []byte, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "127.0.0.1"},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IsCA:         true, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	pk, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pk}), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pool
}

// ZooKeeperEnsemble starts n servers (n = 1: standalone) and waits until
// every one answers. Every process is killed when t ends.
func ZooKeeperEnsemble(t testing.TB, n int) *Ensemble {
	t.Helper()
	return start(t, n, nil)
}

func start(t testing.TB, n int, extra []string) *Ensemble {
	t.Helper()
	jar := testenv.Endpoint(t, "FIRN_TEST_ZOOKEEPER")
	if _, err := os.Stat(jar); err != nil {
		t.Fatalf("FIRN_TEST_ZOOKEEPER: want the ZooKeeper jar (/usr/share/java/zookeeper.jar): %v", err)
	}
	java := testenv.Tool(t, "java")
	// The jar's manifest lists most of what the server needs; Netty's
	// codec, resolver and unix transport (its TLS port) and a logger that
	// writes to server.log it leaves out.
	cp := []string{jar}
	for _, extra := range []string{"netty-codec.jar", "netty-resolver.jar", "netty-transport-native-unix-common.jar", "slf4j-simple.jar"} {
		if p := filepath.Join(filepath.Dir(jar), extra); fileExists(p) {
			cp = append(cp, p)
		}
	}
	dir := t.TempDir()
	// All ports at once: separate calls can hand out one port twice.
	addrs := Addrs(t, 3*n)
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
			fmt.Sprintf("tickTime=%d", ZooKeeperTick.Milliseconds()),
			"initLimit=10", "syncLimit=5",
			"dataDir=" + data,
			"clientPort=" + port(addrs[3*i]),
			"clientPortAddress=127.0.0.1",
			// The admin server would otherwise take *:8080, firn's port.
			"admin.enableServer=false",
			// srvr tells a member's mode (leader, follower, standalone).
			"4lw.commands.whitelist=ruok,srvr",
			"maxClientCnxns=0",
		}
		cfg = append(cfg, extra...)
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
		m := &ZooKeeperMember{Addr: addrs[3*i], log: log, args: []string{java, "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
			"-cp", strings.Join(cp, ":"), "org.apache.zookeeper.server.quorum.QuorumPeerMain", file}}
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
func (e *Ensemble) Members() []*ZooKeeperMember { return e.members }

// Servers returns every member's client address, for zkstore.Config.
func (e *Ensemble) Servers() []string {
	var s []string
	for _, m := range e.members {
		s = append(s, m.Addr)
	}
	return s
}

// Kill stops the process at once (SIGKILL) and waits for it.
func (m *ZooKeeperMember) Kill() {
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
func (m *ZooKeeperMember) Restart() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cmd != nil {
		return fmt.Errorf("testserver: %s is running", m.Addr)
	}
	cmd := exec.Command(m.args[0], m.args[1:]...)
	cmd.Stdout, cmd.Stderr = m.log, m.log
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("testserver: start ZooKeeper: %w", err)
	}
	m.cmd = cmd
	return nil
}

// waitReady waits until the member serves clients: "srvr" names its
// mode (leader, follower or standalone). A quorum member answers "ruok"
// as soon as its process runs, but serves only once it has a leader.
func (m *ZooKeeperMember) waitReady(limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		if m.Mode() != "" {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("testserver: ZooKeeper at %s did not serve within %s", m.Addr, limit)
}

// WaitReady waits until the member serves clients, as after Restart.
func (m *ZooKeeperMember) WaitReady(limit time.Duration) error { return m.waitReady(limit) }

// Mode is what the member's "srvr" says it is: "leader", "follower" or
// "standalone"; empty while it serves no clients (no leader yet, or the
// process is down).
func (m *ZooKeeperMember) Mode() string {
	for line := range strings.SplitSeq(fourLetter(m.Addr, "srvr"), "\n") {
		if mode, ok := strings.CutPrefix(line, "Mode: "); ok {
			return strings.TrimSpace(mode)
		}
	}
	return ""
}

// Leader returns the member whose "srvr" says it leads.
func (e *Ensemble) Leader() (*ZooKeeperMember, error) {
	for _, m := range e.members {
		if m.Mode() == "leader" {
			return m, nil
		}
	}
	return nil, fmt.Errorf("testserver: no member of %v says it leads", e.Servers())
}

// WaitServing waits until every member serves clients and one leads.
func (e *Ensemble) WaitServing(limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for _, m := range e.members {
		if err := m.waitReady(time.Until(deadline)); err != nil {
			return err
		}
	}
	if len(e.members) == 1 {
		return nil
	}
	for {
		if _, err := e.Leader(); err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
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
