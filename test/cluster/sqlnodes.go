package cluster

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/firn-id/firn/internal/faultproxy"
)

// sqlNodes is a SQL node store: firn_nodes in a database server of the
// harness's own. Node N is free again once its row has no owner or a
// lease_expires at or before the database's clock, the same test the
// store's claim makes, or once another owner holds it.
type sqlNodes struct {
	kind      string // postgres or mysql, as --store names it
	srv       *dbServer
	db        *sql.DB // the server, directly (never through a proxy)
	via       func(addr string) string
	namespace string
	isFree    string // is node (namespace, node)'s lease over? one bool
	hwm       string // node (namespace, node)'s HWM
}

// The harness's own servers keep what they confirm (synchronous_commit,
// innodb_flush_log_at_trx_commit=1); fsync is off, since a SIGKILL loses
// nothing the kernel holds.
func (c *Cluster) startPostgres() nodeStore {
	d := c.newDBServer("PostgreSQL", "postgres")
	bins, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	slices.Sort(bins)
	bin := "/usr/lib/postgresql/bin"
	if len(bins) > 0 {
		bin = bins[len(bins)-1]
	}
	initdb, postgres := c.tool(filepath.Join(bin, "initdb")), c.tool(filepath.Join(bin, "postgres"))
	runuser := c.tool("/usr/sbin/runuser")
	data := filepath.Join(d.dir, "data")
	host, port, _ := net.SplitHostPort(d.addr)
	if err := d.setup(runuser, "-u", "postgres", "--", initdb, "-D", data, "-U", "postgres", "--auth=trust", "--no-sync", "-E", "UTF8"); err != nil {
		c.t.Fatal(err)
	}
	d.args = []string{runuser, "-u", "postgres", "--", postgres, "-D", data, "-p", port, "-k", d.dir,
		"-c", "listen_addresses=" + host, "-c", "synchronous_commit=on", "-c", "fsync=off",
		"-c", "max_connections=200", "-c", "shared_buffers=32MB"}
	via := func(addr string) string { return "postgres://postgres@" + addr + "/postgres?sslmode=disable" }
	d.driver, d.dsn = "pgx", via(d.addr)
	return c.sqlNodes(StorePostgres, d, via,
		"SELECT owner IS NULL OR lease_expires IS NULL OR lease_expires <= clock_timestamp(), COALESCE(owner, '') FROM firn_nodes WHERE namespace = $1 AND node = $2",
		"SELECT hwm FROM firn_nodes WHERE namespace = $1 AND node = $2")
}

func (c *Cluster) startMariaDB() nodeStore {
	d := c.newDBServer("MariaDB", "mysql")
	install, mariadbd := c.tool("/usr/bin/mariadb-install-db"), c.tool("/usr/sbin/mariadbd")
	data := filepath.Join(d.dir, "data")
	host, port, _ := net.SplitHostPort(d.addr)
	// --no-defaults first: the system's my.cnf names the shared server's
	// data directory and socket.
	if err := d.setup(install, "--no-defaults", "--user=mysql", "--datadir="+data,
		"--auth-root-authentication-method=normal", "--skip-test-db"); err != nil {
		c.t.Fatal(err)
	}
	d.args = []string{mariadbd, "--no-defaults", "--user=mysql", "--datadir=" + data,
		"--port=" + port, "--bind-address=" + host, "--socket=" + filepath.Join(d.dir, "mysqld.sock"),
		"--pid-file=" + filepath.Join(d.dir, "mysqld.pid"), "--log-error=" + filepath.Join(d.dir, "error.log"),
		"--skip-name-resolve", "--skip-log-bin", "--innodb-flush-log-at-trx-commit=1",
		"--innodb-flush-method=nosync", "--innodb-buffer-pool-size=32M", "--max-connections=200"}
	via := func(addr string) string { return "root@tcp(" + addr + ")/mysql" }
	d.driver, d.dsn = "mysql", via(d.addr)
	return c.sqlNodes(StoreMySQL, d, via,
		"SELECT owner IS NULL OR lease_expires IS NULL OR lease_expires <= UTC_TIMESTAMP(3), COALESCE(owner, '') FROM firn_nodes WHERE namespace = ? AND node = ?",
		"SELECT hwm FROM firn_nodes WHERE namespace = ? AND node = ?")
}

// sqlNodes starts d and opens the harness's own connection to it.
func (c *Cluster) sqlNodes(kind string, d *dbServer, via func(string) string, isFree, hwm string) *sqlNodes {
	c.t.Cleanup(d.kill)
	if err := d.start(60 * time.Second); err != nil {
		c.t.Fatal(err)
	}
	db, err := sql.Open(d.driver, d.dsn)
	if err != nil {
		c.t.Fatal(err)
	}
	c.t.Cleanup(func() { db.Close() })
	return &sqlNodes{kind: kind, srv: d, db: db, via: via, namespace: "chaos-" + suffix(), isFree: isFree, hwm: hwm}
}

func (s *sqlNodes) upstreams() []string { return []string{s.srv.addr} }

func (s *sqlNodes) flags(xs []*faultproxy.Proxy) []string {
	return []string{"--store", s.kind, "--dsn", s.via(xs[0].Addr()), "--namespace", s.namespace}
}

// free polls node n's row until its lease is over, or until another
// owner than the one first seen holds it (a taker claimed it between two
// polls). A row not there yet is no node anyone holds.
func (s *sqlNodes) free(ctx context.Context, n uint64) <-chan time.Time {
	first := ""
	return poll(ctx, 10*time.Millisecond, func(ctx context.Context) bool {
		var over bool
		var owner string
		err := s.query(ctx, s.isFree, n, &over, &owner)
		if err == nil && first == "" {
			first = owner
		}
		return errors.Is(err, sql.ErrNoRows) || (err == nil && (over || owner != first))
	})
}

// hwmWritten polls node n's HWM until it differs from its first value.
func (s *sqlNodes) hwmWritten(ctx context.Context, n uint64) <-chan time.Time {
	first := int64(-1)
	return poll(ctx, 5*time.Millisecond, func(ctx context.Context) bool {
		var hwm int64
		if s.query(ctx, s.hwm, n, &hwm) != nil {
			return false
		}
		if first < 0 {
			first = hwm
		}
		return hwm != first
	})
}

// query reads one value of node n's row, with a deadline.
func (s *sqlNodes) query(ctx context.Context, q string, n uint64, dst ...any) error {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	if err := s.db.QueryRowContext(ctx, q, s.namespace, n).Scan(dst...); err != nil {
		return fmt.Errorf("%s on %s: %s: %w", s.srv.name, s.srv.addr, strings.Fields(q)[1], err)
	}
	return nil
}

func (s *sqlNodes) crash(down time.Duration) (string, error) { return s.srv.crash(down) }
