package cluster

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/firn-id/firn/internal/testenv"
)

// dbServer is a database server the harness runs itself, as the
// database's own system user, so a fault can kill it with SIGKILL and
// start it again without touching the shared servers other tests use.
type dbServer struct {
	name   string // PostgreSQL or MariaDB, for messages
	addr   string // host:port on loopback
	dir    string // owned by the server's user; removed when the test ends
	args   []string
	driver string // database/sql driver
	dsn    string // as the harness reaches it, directly
	log    *os.File

	mu  sync.Mutex
	cmd *exec.Cmd
}

// newDBServer makes a directory owned by the system user owner for a
// server on a fresh loopback address.
func (c *Cluster) newDBServer(name, owner string) *dbServer {
	c.t.Helper()
	u, err := user.Lookup(owner)
	if err != nil {
		c.missing(fmt.Sprintf("the system user %s (%s runs as it): %v", owner, name, err))
	}
	dir, err := os.MkdirTemp("", "firn-chaos-"+owner+"-")
	if err != nil {
		c.t.Fatal(err)
	}
	c.t.Cleanup(func() { _ = os.RemoveAll(dir) })
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	if err := errors.Join(os.Chmod(dir, 0o755), os.Chown(dir, uid, gid)); err != nil {
		c.t.Fatalf("hand %s to %s: %v", dir, owner, err)
	}
	addr, err := c.freeAddr()
	if err != nil {
		c.t.Fatal(err)
	}
	log, err := os.Create(filepath.Join(c.Dir, owner+".log"))
	if err != nil {
		c.t.Fatal(err)
	}
	c.t.Cleanup(func() { log.Close() })
	return &dbServer{name: name, addr: addr, dir: dir, log: log}
}

// missing fails under CI=true and skips otherwise: make services
// installs what the run needs.
func (c *Cluster) missing(what string) {
	c.t.Helper()
	if os.Getenv("CI") == "true" {
		c.t.Fatalf("%s is missing and CI=true", what)
	}
	c.t.Skipf("%s is missing: skipping this store (make services installs it)", what)
}

// tool returns the path of a program, or skips (fails under CI=true).
func (c *Cluster) tool(path string) string {
	c.t.Helper()
	if _, err := os.Stat(path); err != nil {
		return testenv.Tool(c.t, filepath.Base(path))
	}
	return path
}

// setup runs a command that prepares the server's directory.
func (d *dbServer) setup(args ...string) error {
	cmd := exec.Command(args[0], args[1:]...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("set up %s in %s: %s: %w\n%s", d.name, d.dir, args[0], err, out)
	}
	return nil
}

// start starts the server in a process group of its own and waits until
// it answers.
func (d *dbServer) start(timeout time.Duration) error {
	d.mu.Lock()
	cmd := exec.Command(d.args[0], d.args[1:]...)
	cmd.Stdout, cmd.Stderr = d.log, d.log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	fmt.Fprintf(d.log, "=== %s start %s on %s\n", time.Now().Format(time.RFC3339Nano), d.name, d.addr)
	err := cmd.Start()
	if err == nil {
		d.cmd = cmd
	}
	d.mu.Unlock()
	if err != nil {
		return fmt.Errorf("start %s on %s: %w", d.name, d.addr, err)
	}
	return d.wait(timeout)
}

// wait waits until the server answers a query.
func (d *dbServer) wait(timeout time.Duration) error {
	db, err := sql.Open(d.driver, d.dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	deadline := time.Now().Add(timeout)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err = db.PingContext(ctx)
		cancel()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s on %s: no answer within %s: %w (its log: %s)", d.name, d.addr, timeout, err, d.log.Name())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// kill kills the server's whole process group with SIGKILL, as a crash
// of the machine's database would, and waits for it.
func (d *dbServer) kill() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.cmd == nil {
		return
	}
	_ = syscall.Kill(-d.cmd.Process.Pid, syscall.SIGKILL)
	_ = d.cmd.Wait()
	d.cmd = nil
	fmt.Fprintf(d.log, "=== %s killed %s\n", time.Now().Format(time.RFC3339Nano), d.name)
}

// crash kills the server, waits down, and starts it again.
func (d *dbServer) crash(down time.Duration) (string, error) {
	d.kill()
	time.Sleep(down)
	return d.name, d.start(30 * time.Second)
}
