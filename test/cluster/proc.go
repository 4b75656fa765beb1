package cluster

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/firn-id/firn/internal/faultproxy"
	"github.com/firn-id/firn/test/cluster/history"
)

// Proc is one firn serve process, or one that embeds firn through
// package ids (cmd/embedded), started again as new lives. It reaches the
// node store through fault proxies of its own, so it can be cut off from
// the store alone.
type Proc struct {
	c    *Cluster
	Name string
	// Embedded: the process embeds firn (cmd/embedded). It serves
	// snowflake IDs only — no segments, no Go client — on the HTTP
	// route the load asks firn serve's on.
	Embedded bool
	proxies  []*faultproxy.Proxy
	ledger   []*faultproxy.Proxy // to each member of the site's ledger; none outside a site
	db       []*faultproxy.Proxy // to each segment database of the set; none when embedded
	front    *front              // the Go client's fixed address of the process; nil when embedded
	log      *os.File

	mu     chan struct{} // a one-slot lock, usable with select
	life   int
	addr   string
	cmd    *exec.Cmd
	exited chan struct{}
	node   int64 // the node held, -1 while none
	clock  time.Duration
	// stopping is set once the harness stops the current life, so an
	// exit it did not ask for can be told apart.
	stopping bool
}

func (c *Cluster) newProc(name string, embedded bool) *Proc {
	p := &Proc{c: c, Name: name, Embedded: embedded, mu: make(chan struct{}, 1), node: -1}
	p.proxies = c.proxies(c.store.upstreams())
	if c.cfg.Site != nil {
		p.ledger = c.proxies(c.cfg.Site.Ledger.etcd.upstreams())
	}
	if !embedded {
		p.db = c.dbProxies()
		p.front = newFront(c.t, p)
	}
	f, err := os.Create(filepath.Join(c.Dir, name+".log"))
	if err != nil {
		c.t.Fatal(err)
	}
	c.t.Cleanup(func() { f.Close() })
	p.log = f
	return p
}

func (p *Proc) lock()   { p.mu <- struct{}{} }
func (p *Proc) unlock() { <-p.mu }

// Life names the current life ("f0#2") and its HTTP address; the address
// is empty while no life runs.
func (p *Proc) Life() (name, addr string) {
	p.lock()
	defer p.unlock()
	return fmt.Sprintf("%s#%d", p.Name, p.life), p.addr
}

// Node returns the node the current life holds, or -1.
func (p *Proc) Node() int64 {
	p.lock()
	defer p.unlock()
	return p.node
}

// Start starts a new life on a fresh address.
func (p *Proc) Start() error {
	addr, err := p.c.freeAddr()
	if err != nil {
		return err
	}
	args, err := p.args(addr)
	if err != nil {
		return err
	}
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	p.lock()
	defer p.unlock()
	p.life++
	life := fmt.Sprintf("%s#%d", p.Name, p.life)
	bin, env := p.c.bin, append(environ(), p.c.lifeEnv(life)...)
	switch {
	case p.Embedded:
		bin = p.c.embeddedBin
	case !Production() || p.clock != 0:
		bin = p.c.clockBin
	}
	if p.clock != 0 {
		env = append(env, "FIRN_TEST_CLOCK_HOOK=1", "FIRN_TEST_CLOCK_OFFSET="+p.clock.String())
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = w, w
	fmt.Fprintf(p.log, "=== %s %s on %s\n", time.Now().Format(time.RFC3339Nano), life, addr)
	if err := cmd.Start(); err != nil {
		w.Close()
		r.Close()
		return fmt.Errorf("start %s: %w", life, err)
	}
	w.Close()
	p.cmd, p.addr, p.node, p.exited, p.stopping = cmd, addr, -1, make(chan struct{}), false
	logged := make(chan struct{})
	go p.readLog(life, r, logged)
	go func(exited chan struct{}) {
		<-logged
		err := cmd.Wait()
		p.lock()
		if !p.stopping && p.cmd == cmd {
			p.c.exitedAlone(life, err)
		}
		p.unlock()
		close(exited)
	}(p.exited)
	return nil
}

// args are a life's arguments: firn serve's, or cmd/embedded's, which
// takes the same store and layout flags.
func (p *Proc) args(addr string) ([]string, error) {
	ttl := p.c.cfg.TTL.String()
	if p.Embedded {
		args := append(p.c.store.flags(p.proxies), "--http", addr, "--lease-ttl", ttl, "--dial-timeout", "1s")
		return append(args, p.c.layoutFlags()...), nil
	}
	args := append([]string{"serve"}, p.c.store.flags(p.proxies)...)
	args = append(args, "--http", addr, "--grpc", "off",
		"--lease-ttl", ttl, "--dial-timeout", "1s",
		"--max-batch", "100000", "--log-format", "json")
	args = append(args, p.c.layoutFlags()...)
	if s := p.c.cfg.Site; s != nil {
		args = append(args, s.flags(p.ledger)...)
	}
	seg, err := p.c.segmentConfig(p.Name, p.db)
	if err != nil {
		return nil, err
	}
	return append(args, seg...), nil
}

// logLine is what the harness reads of firn's JSON log.
type logLine struct {
	Time time.Time `json:"time"`
	Msg  string    `json:"msg"`
	Node *uint64   `json:"node"`
}

// readLog copies a life's output to the process's log and records each
// node it takes as an acquisition in the history.
func (p *Proc) readLog(life string, r io.ReadCloser, done chan struct{}) {
	defer close(done)
	defer r.Close()
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Bytes()
		if _, err := p.log.Write(append(line, '\n')); err != nil {
			p.c.t.Errorf("%s: write its log: %v", life, err)
		}
		var l logLine
		if json.Unmarshal(line, &l) != nil || l.Node == nil {
			continue
		}
		switch l.Msg {
		case "serving", "serving again":
			p.c.Record(history.Record{Kind: history.KindAcquire, Proc: life, Node: *l.Node, At: l.Time.UnixNano()})
			p.setNode(life, int64(*l.Node))
		case "lease lost: acquiring a node again":
			p.setNode(life, -1)
		}
	}
}

func (p *Proc) setNode(life string, n int64) {
	p.lock()
	defer p.unlock()
	if fmt.Sprintf("%s#%d", p.Name, p.life) == life {
		p.node = n
	}
}

// SetClock makes every later life run the clock-hook build with its wall
// clock offset by d (0: the hook off again).
func (p *Proc) SetClock(d time.Duration) {
	p.lock()
	defer p.unlock()
	p.clock = d
}

// Signal sends sig to the current life.
func (p *Proc) Signal(sig syscall.Signal) error {
	p.lock()
	defer p.unlock()
	if p.cmd == nil {
		return fmt.Errorf("%s: not running", p.Name)
	}
	if sig == syscall.SIGTERM || sig == syscall.SIGKILL {
		p.stopping = true
	}
	return p.cmd.Process.Signal(sig)
}

// Kill kills the current life with SIGKILL and waits for it.
func (p *Proc) Kill() {
	_ = p.Signal(syscall.SIGCONT)
	if err := p.Signal(syscall.SIGKILL); err == nil || errors.Is(err, os.ErrProcessDone) {
		p.waitExit(10 * time.Second)
	}
}

// Stop stops the current life with SIGTERM (it releases its node) and
// waits for it to exit.
func (p *Proc) Stop(timeout time.Duration) error {
	err := p.Signal(syscall.SIGTERM)
	if errors.Is(err, os.ErrProcessDone) {
		// It exited by itself (reported by ExitedAlone): reap it.
		p.waitExit(timeout)
		return nil
	}
	if err != nil {
		return err
	}
	if !p.waitExit(timeout) {
		p.Kill()
		return fmt.Errorf("%s: still running %s after SIGTERM", p.Name, timeout)
	}
	return nil
}

func (p *Proc) waitExit(timeout time.Duration) bool {
	p.lock()
	exited := p.exited
	p.unlock()
	select {
	case <-exited:
	case <-time.After(timeout):
		return false
	}
	p.lock()
	p.cmd, p.addr, p.node = nil, "", -1
	p.unlock()
	return true
}

// WaitReady waits until the current life answers /readyz with 200.
func (p *Proc) WaitReady(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	cl := http.Client{Timeout: time.Second}
	for time.Now().Before(deadline) {
		_, addr := p.Life()
		if addr != "" {
			resp, err := cl.Get("http://" + addr + "/readyz")
			if err == nil {
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					return nil
				}
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("%s: not ready after %s", p.Name, timeout)
}

// Cut cuts the process off from the node store (every member of it);
// Restore lets it through again.
func (p *Proc) Cut() {
	for _, x := range p.proxies {
		x.Cut()
	}
}

// Restore ends a Cut.
func (p *Proc) Restore() {
	for _, x := range p.proxies {
		x.Restore()
	}
}

// Environ is the harness's environment without its FIRN_ variables:
// firn serve refuses a FIRN_ variable it does not know.
func Environ() []string { return environ() }

func environ() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "FIRN_") {
			env = append(env, kv)
		}
	}
	return env
}
