package localstore_test

import (
	"bufio"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/firn-id/firn/localstore"
	"github.com/firn-id/firn/nodeid"
	"github.com/firn-id/firn/nodeid/nodeidtest"
)

// config is dir with the node directory a default data directory has:
// its own nodes/.
func config(dir string) localstore.Config {
	return localstore.Config{Dir: dir, NodeDir: filepath.Join(dir, "nodes")}
}

func open(t *testing.T, dir string) *localstore.Store {
	t.Helper()
	return openConfig(t, config(dir))
}

func openConfig(t *testing.T, cfg localstore.Config) *localstore.Store {
	t.Helper()
	s, err := localstore.Open(cfg)
	if err != nil {
		t.Fatalf("Open(%+v): %v", cfg, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestConformance(t *testing.T) {
	nodeidtest.RunStoreTests(t, func(t *testing.T) nodeid.Store { return open(t, t.TempDir()) },
		nodeidtest.Options{})
}

func TestSecondOpenIsLocked(t *testing.T) {
	dir := t.TempDir()
	open(t, dir)
	_, err := localstore.Open(config(dir))
	var le *localstore.LockedError
	if !errors.As(err, &le) || !errors.Is(err, localstore.ErrLocked) {
		t.Fatalf("second Open: %v, want *LockedError", err)
	}
	if le.PID != strconv.Itoa(os.Getpid()) {
		t.Fatalf("lock names PID %q, want %d", le.PID, os.Getpid())
	}
}

// TestLockAcrossProcesses holds the lock in a child process.
func TestLockAcrossProcesses(t *testing.T) {
	if dir := os.Getenv("FIRN_LOCALSTORE_HOLD"); dir != "" {
		s, err := localstore.Open(config(dir))
		if err != nil {
			os.Stdout.WriteString("error " + err.Error() + "\n")
			os.Exit(1)
		}
		os.Stdout.WriteString("locked\n")
		bufio.NewReader(os.Stdin).ReadString('\n')
		s.Close()
		os.Exit(0)
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestLockAcrossProcesses$")
	cmd.Env = append(os.Environ(), "FIRN_LOCALSTORE_HOLD="+dir)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close(); cmd.Wait() })
	line, _ := bufio.NewReader(stdout).ReadString('\n')
	if line != "locked\n" {
		t.Fatalf("child: %q", line)
	}
	_, err := localstore.Open(config(dir))
	var le *localstore.LockedError
	if !errors.As(err, &le) || le.PID != strconv.Itoa(cmd.Process.Pid) {
		t.Fatalf("Open while a child holds the lock: %v, want *LockedError naming PID %d", err, cmd.Process.Pid)
	}
	stdin.Close()
	cmd.Wait()
	open(t, dir) // the lock ends with the process
}

func TestHWMSurvivesReopen(t *testing.T) {
	dir := t.TempDir()
	s, err := localstore.Open(config(dir))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	c, err := s.Claim(ctx, nodeid.ClaimRequest{Node: 5, Pool: 8, Layout: nodeidtest.Layout})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Renew(ctx, c, 123456); err != nil {
		t.Fatal(err)
	}
	s.Close() // a crash: no Release
	s2 := open(t, dir)
	c2, err := s2.Claim(ctx, nodeid.ClaimRequest{Node: 5, Pool: 8, Layout: nodeidtest.Layout})
	if err != nil || c2.HWM != 123456 {
		t.Fatalf("claim after reopen: HWM %d, %v; want 123456", c2.HWM, err)
	}
	if _, err := s.Renew(ctx, c, 999999); !errors.Is(err, nodeid.ErrClosed) {
		t.Fatalf("renew through a closed store: %v, want ErrClosed", err)
	}
}

func TestCorruptHWMIsAnError(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir)
	if err := os.WriteFile(filepath.Join(dir, "nodes", "0.hwm"), []byte("garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := s.Claim(context.Background(), nodeid.ClaimRequest{Node: 0, Pool: 8, Layout: nodeidtest.Layout})
	if err == nil || !strings.Contains(err.Error(), "corrupt") {
		t.Fatalf("claim over a corrupt HWM: %v, want an error saying so", err)
	}
}

func TestDefaultDir(t *testing.T) {
	tests := []struct{ xdg, home, want string }{
		{"/var/tmp/state", "/home/someone", "/var/tmp/state/firn"},
		{"relative/path", "/home/someone", "/home/someone/.local/state/firn"},
		{"", "/root", "/root/.local/state/firn"},
		{"", "", ""},
	}
	for _, tt := range tests {
		got, err := localstore.DefaultDir(tt.xdg, tt.home)
		if got != tt.want || (tt.want == "") != (err != nil) {
			t.Errorf("DefaultDir(%q, %q) = %q, %v; want %q", tt.xdg, tt.home, got, err, tt.want)
		}
	}
}
