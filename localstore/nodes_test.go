package localstore_test

import (
	"bufio"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/firn-id/firn/localstore"
	"github.com/firn-id/firn/nodeid"
	"github.com/firn-id/firn/nodeid/nodeidtest"
)

// twoDirs opens two data directories sharing one node directory, as two
// firn processes of one user do.
func twoDirs(t *testing.T) (a, b *localstore.Store) {
	t.Helper()
	nodes := t.TempDir()
	a = openConfig(t, localstore.Config{Dir: t.TempDir(), NodeDir: nodes})
	b = openConfig(t, localstore.Config{Dir: t.TempDir(), NodeDir: nodes})
	return a, b
}

func claim(t *testing.T, s *localstore.Store, req nodeid.ClaimRequest) nodeid.Claim {
	t.Helper()
	c, err := s.Claim(context.Background(), req)
	if err != nil {
		t.Fatalf("claim in %s: %v", s.Dir(), err)
	}
	return c
}

func anyNode(pool uint64) nodeid.ClaimRequest {
	return nodeid.ClaimRequest{AnyNode: true, Pool: pool, Layout: nodeidtest.Layout}
}

func oneNode(node uint64) nodeid.ClaimRequest {
	return nodeid.ClaimRequest{Node: node, Pool: 8, Layout: nodeidtest.Layout}
}

// TestSecondDirectoryTakesTheNextNode: a node one directory holds is
// neither handed out nor given by number to another.
func TestSecondDirectoryTakesTheNextNode(t *testing.T) {
	ctx := context.Background()
	a, b := twoDirs(t)
	ca := claim(t, a, anyNode(8))
	cb := claim(t, b, anyNode(8))
	if ca.Node != 0 || cb.Node != 1 {
		t.Fatalf("directories %s and %s got nodes %d and %d; want 0 and 1", a.Dir(), b.Dir(), ca.Node, cb.Node)
	}
	_, err := b.Claim(ctx, oneNode(0))
	var nh *localstore.NodeHeldError
	var ce *nodeid.ConflictError
	if !errors.As(err, &nh) || !errors.As(err, &ce) || !errors.Is(err, nodeid.ErrNodeHeld) {
		t.Fatalf("claim of node 0 held by another directory: %v; want a *NodeHeldError, a *nodeid.ConflictError", err)
	}
	if nh.Node != 0 || nh.PID != strconv.Itoa(os.Getpid()) || nh.Dir != a.Dir() || !strings.Contains(err.Error(), a.Dir()) {
		t.Fatalf("held node reported as %+v (%v); want node 0, PID %d, data directory %s", nh, err, os.Getpid(), a.Dir())
	}
	if _, err := b.Advance(ctx, nodeid.AdvanceRequest{Node: 0, HWM: 1 << 40}); !errors.Is(err, nodeid.ErrNodeHeld) {
		t.Fatalf("advance of node 0 held by another directory: %v; want ErrNodeHeld", err)
	}
	if err := a.Release(ctx, ca); err != nil {
		t.Fatal(err)
	}
	if c := claim(t, b, oneNode(0)); c.Node != 0 {
		t.Fatalf("claim after release: node %d", c.Node)
	}
}

// TestDirectoriesNeverHoldOneNodeAtOnce: goroutines on two directories
// claim and release any node of a small pool; a node is marked held
// between a claim's return and its release, and never marked twice.
func TestDirectoriesNeverHoldOneNodeAtOnce(t *testing.T) {
	a, b := twoDirs(t)
	var mu sync.Mutex
	holder := map[uint64]string{}
	claims := 0
	var wg sync.WaitGroup
	for i := range 8 {
		s := []*localstore.Store{a, b}[i%2]
		wg.Go(func() {
			ctx := context.Background()
			for range 100 {
				c, err := s.Claim(ctx, anyNode(3))
				if errors.Is(err, nodeid.ErrPoolFull) {
					continue
				}
				if err != nil {
					t.Errorf("claim: %v", err)
					return
				}
				mu.Lock()
				if other, ok := holder[c.Node]; ok {
					t.Errorf("node %d claimed in %s while %s held it", c.Node, s.Dir(), other)
				}
				holder[c.Node] = s.Dir()
				claims++
				mu.Unlock()
				runtime.Gosched() // let the other directory try while this one holds the node
				mu.Lock()
				delete(holder, c.Node)
				mu.Unlock()
				if err := s.Release(ctx, c); err != nil {
					t.Errorf("release: %v", err)
				}
			}
		})
	}
	wg.Wait()
	if claims == 0 {
		t.Fatal("no claim succeeded")
	}
}

// TestFullPoolSaysWhatToDo: with every node of the layout held by some
// directory, a third is refused, naming the node directory and the ways
// out.
func TestFullPoolSaysWhatToDo(t *testing.T) {
	a, b := twoDirs(t)
	claim(t, a, anyNode(2))
	claim(t, b, anyNode(2))
	c := openConfig(t, localstore.Config{Dir: t.TempDir(), NodeDir: b.NodeDir()})
	_, err := c.Claim(context.Background(), anyNode(2))
	var pf *nodeid.PoolFullError
	if !errors.As(err, &pf) || pf.Held != 2 || pf.Pool != 2 {
		t.Fatalf("claim from a pool of 2 held by two directories: %v; want *PoolFullError{Pool 2, Held 2}", err)
	}
	for _, want := range []string{b.NodeDir(), "stop one", "firn serve", "shared registry"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("full pool: %q does not say %q", err, want)
		}
	}
}

// TestNextDirectoryStartsPastTheLast: directory A extends node 0's HWM
// and stops without releasing (a crash); directory B's claim of any node
// takes node 0 again, from A's HWM. A claim starts at the larger of the
// node directory's HWM and its data directory's, whichever a crash
// between the two writes left ahead.
func TestNextDirectoryStartsPastTheLast(t *testing.T) {
	ctx := context.Background()
	nodes := t.TempDir()
	a, err := localstore.Open(localstore.Config{Dir: t.TempDir(), NodeDir: nodes})
	if err != nil {
		t.Fatal(err)
	}
	ca := claim(t, a, anyNode(8))
	const hwm = 1_700_000_000_000
	if got, err := a.Renew(ctx, ca, hwm); err != nil || got != hwm {
		t.Fatalf("renew: %d, %v", got, err)
	}
	a.Close()
	b := openConfig(t, localstore.Config{Dir: t.TempDir(), NodeDir: nodes})
	if cb := claim(t, b, anyNode(8)); cb.Node != 0 || cb.HWM != hwm {
		t.Fatalf("claim in a second directory after the first stopped: node %d HWM %d; want node 0 HWM %d", cb.Node, cb.HWM, hwm)
	}

	tests := []struct {
		name        string
		shared, own int64
	}{
		{"node directory ahead", 9000, 4000},
		{"data directory ahead", 4000, 9000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir, nodes := t.TempDir(), t.TempDir()
			writeHWM(t, filepath.Join(nodes, "node-3.hwm"), tt.shared)
			writeHWM(t, filepath.Join(dir, "nodes", "3.hwm"), tt.own)
			s := openConfig(t, localstore.Config{Dir: dir, NodeDir: nodes})
			c := claim(t, s, oneNode(3))
			if c.HWM != 9000 {
				t.Fatalf("claim: HWM %d, want 9000", c.HWM)
			}
			if got, err := s.Renew(ctx, c, 9500); err != nil || got != 9500 {
				t.Fatalf("renew past both: %d, %v; want 9500", got, err)
			}
			for _, p := range []string{filepath.Join(nodes, "node-3.hwm"), filepath.Join(dir, "nodes", "3.hwm")} {
				if b, _ := os.ReadFile(p); strings.TrimSpace(string(b)) != "9500" {
					t.Errorf("%s holds %q after the renew; want 9500", p, b)
				}
			}
		})
	}
}

func writeHWM(t *testing.T, path string, hwm int64) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(strconv.FormatInt(hwm, 10)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestNodeLockAcrossProcesses: a child process holds node 0 from its own
// data directory; this one is refused node 0, naming the child, and gets
// node 1. Once the child is killed its lock is free, and node 0 starts
// at the HWM it wrote.
func TestNodeLockAcrossProcesses(t *testing.T) {
	if env := os.Getenv("FIRN_LOCALSTORE_HOLD_NODE"); env != "" {
		dir, nodes, _ := strings.Cut(env, ":")
		s, err := localstore.Open(localstore.Config{Dir: dir, NodeDir: nodes})
		if err == nil {
			var c nodeid.Claim
			if c, err = s.Claim(context.Background(), oneNode(0)); err == nil {
				_, err = s.Renew(context.Background(), c, 123456)
			}
		}
		if err != nil {
			os.Stdout.WriteString("error " + err.Error() + "\n")
			os.Exit(1)
		}
		os.Stdout.WriteString("held\n")
		bufio.NewReader(os.Stdin).ReadString('\n') // until killed
		os.Exit(0)
	}
	childDir, nodes := t.TempDir(), t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestNodeLockAcrossProcesses$")
	cmd.Env = append(os.Environ(), "FIRN_LOCALSTORE_HOLD_NODE="+childDir+":"+nodes)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close(); cmd.Process.Kill(); cmd.Wait() })
	if line, _ := bufio.NewReader(stdout).ReadString('\n'); line != "held\n" {
		t.Fatalf("child: %q", line)
	}
	s := openConfig(t, localstore.Config{Dir: t.TempDir(), NodeDir: nodes})
	_, err := s.Claim(context.Background(), oneNode(0))
	var nh *localstore.NodeHeldError
	if !errors.As(err, &nh) || nh.PID != strconv.Itoa(cmd.Process.Pid) || nh.Dir != childDir {
		t.Fatalf("claim of node 0 held by a child: %v; want a *NodeHeldError naming PID %d and %s", err, cmd.Process.Pid, childDir)
	}
	if c := claim(t, s, anyNode(8)); c.Node != 1 {
		t.Fatalf("any node beside the child: node %d, want 1", c.Node)
	}
	cmd.Process.Kill()
	cmd.Wait()
	if c := claim(t, s, oneNode(0)); c.HWM != 123456 {
		t.Fatalf("node 0 after the child was killed: HWM %d, want its 123456", c.HWM)
	}
}
