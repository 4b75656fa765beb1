package testserver

import (
	"errors"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/firn-id/firn/internal/testenv"
)

// build builds cmd/firn once per test binary.
var build = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "firn-servetest")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "firn")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/firn-id/firn/cmd/firn").CombinedOutput()
	if err != nil {
		return "", errors.New(string(out))
	}
	return bin, nil
})

// Binary returns the path of cmd/firn, built once per test binary.
func Binary(t testing.TB) string {
	t.Helper()
	testenv.NotShort(t, "a firn process")
	bin, err := build()
	if err != nil {
		t.Fatalf("build firn: %v", err)
	}
	return bin
}

// Addr returns a free loopback address.
func Addr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// Addrs returns n distinct free loopback addresses: every port is held
// until all are chosen, so the OS cannot hand one out twice (separate
// calls of Addr can return the same port).
func Addrs(t testing.TB, n int) []string {
	t.Helper()
	var out []string
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		out = append(out, ln.Addr().String())
	}
	return out
}

// Process is a running `firn serve`.
type Process struct {
	HTTP, GRPC string // listen addresses
	cmd        *exec.Cmd
	log        *lockedBuffer
}

// Firn runs `firn serve --http HTTP --grpc GRPC args…` with its own
// XDG_STATE_HOME and waits until /readyz answers 200. The process is
// killed at the end of the test; its log is printed if the test failed.
func Firn(t testing.TB, httpAddr, grpcAddr string, args ...string) *Process {
	t.Helper()
	testenv.NotShort(t, "a firn process")
	bin, err := build()
	if err != nil {
		t.Fatalf("build firn: %v", err)
	}
	cmd := exec.Command(bin, append([]string{"serve", "--http", httpAddr, "--grpc", grpcAddr}, args...)...)
	cmd.Env = append(os.Environ(), "XDG_STATE_HOME="+t.TempDir())
	p := &Process{HTTP: httpAddr, GRPC: grpcAddr, cmd: cmd, log: &lockedBuffer{}}
	cmd.Stderr = p.log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		p.Kill()
		if t.Failed() {
			t.Logf("firn serve --http %s's log:\n%s", httpAddr, p.log.String())
		}
	})
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if resp, err := http.Get("http://" + httpAddr + "/readyz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return p
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("firn serve --http %s: not ready after 15 s; log:\n%s", httpAddr, p.log.String())
		}
	}
}

// Kill kills the process at once (SIGKILL), as a crash.
func (p *Process) Kill() {
	if p.cmd.ProcessState == nil {
		_ = p.cmd.Process.Kill()
		_ = p.cmd.Wait()
	}
}

// Pause stops the process (SIGSTOP): its sockets stay open and nothing
// answers, as a server stalled by the OS, a debugger or a long pause.
func (p *Process) Pause() error { return p.cmd.Process.Signal(syscall.SIGSTOP) }

// Resume lets a paused process run again (SIGCONT).
func (p *Process) Resume() error { return p.cmd.Process.Signal(syscall.SIGCONT) }

// Stop sends SIGTERM and returns the process's exit error.
func (p *Process) Stop() error {
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return err
	}
	return p.cmd.Wait()
}

// Log is what the process wrote to stderr so far.
func (p *Process) Log() string { return p.log.String() }

type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
