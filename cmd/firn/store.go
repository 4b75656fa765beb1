package main

import (
	"context"
	"io"
	"log"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql" // its logger; the row (kinds.go) registers the driver

	"github.com/firn-id/firn/internal/backend"
	"github.com/firn-id/firn/internal/config"
	"github.com/firn-id/firn/nodeid"
)

func init() {
	// The MySQL driver logs to standard error on its own ("packets.go:
	// read: connection refused"); firn reports one line instead.
	_ = mysql.SetLogger(log.New(io.Discard, "", 0))
}

var storeFlagsUsage = `Store flags (where node IDs and their HWMs live):
  --store KIND        ` + backend.Names() + `:
` + backend.Help("                        ") + `  --data-dir DIR      local: default $XDG_STATE_HOME/firn, or ~/.local/state/firn;
                      node IDs are the user's and the layout's, locked in
                      the default's nodes/ whichever directory is given
  --endpoints URLS    etcd: comma-separated client URLs (http://127.0.0.1:2379);
                      zookeeper: comma-separated servers (127.0.0.1:2181)
  --dsn DSN           postgres: postgres://user@host:5432/db?sslmode=disable
                      mysql: user:password@tcp(host:3306)/db; a parameter
                      that is no driver option is sent as SET, so only a
                      few session variables are taken (docs/config.md)
  --namespace NAME    the set of nodes that must never collide: in SQL a value
                      of the namespace column (default "default"), in etcd a
                      key prefix (default /firn/default/), in ZooKeeper a
                      path (default /firn/default)
  --table NAME        SQL: the node table (default firn_nodes)
  --segments FORMAT   SQL: the segment table's format: leaf (Meituan Leaf's
                      leaf_alloc, the default), tinyid (Didi Tinyid's
                      tiny_id_info) or set (firn's own firn_segments, whose
                      rows name their store set)
  --segment-table T   SQL: the segment table (default by format)
  --set NAME          --segments set: the store set this database belongs to
  --segment-store K   postgres or mysql: the segment table lives in a database
                      of its own (named by --segment-dsn), not in --store's;
                      node IDs from etcd and segments from Leaf's MySQL table
  --segment-dsn DSN   that database
  --dial-timeout D    how long to wait for etcd, ZooKeeper or the database to
                      answer before reporting it unreachable (default 5s)
  --zk-session-timeout D
                      zookeeper: the session timeout of sessions that hold no
                      node (1s to 10m, default 10s); a node's session asks for
                      --lease-ttl
  --zk-retry-pause D  zookeeper: the pause between passes over the servers
                      while none answers (10ms to 10s, default 1s)
  --zk-digest-file F  zookeeper: a file holding user:password, the digest
                      identity every znode firn creates is then restricted to
                      (or the variable FIRN_ZOOKEEPER_DIGEST; never a flag).
                      It travels in clear unless the connection is TLS
  --zk-tls-ca F, --zk-tls-cert F, --zk-tls-key F
                      zookeeper: connect to the servers' TLS port
                      (secureClientPort), trusting this PEM CA (default: the
                      system's), with this client certificate and key if set
`

// storeUses are the settings that choose a store, which every command
// that opens one takes (config.Register); the flags of storeFlagsUsage.
var storeUses = []string{"registry.store", "registry.data_dir", "registry.endpoints", "registry.dsn", "registry.namespace",
	"registry.table", "registry.dial_timeout", "segments.format", "segments.table", "segments.set", "segments.store", "segments.dsn", "zookeeper"}

// storeOf is the store the settings name, for serve and every other
// command: the one translation of the configuration's store settings.
func storeOf(cfg *config.Config) backend.Options {
	home, _ := os.UserHomeDir()
	return backend.Options{Registry: cfg.Registry, Segments: cfg.Segments, ZooKeeper: cfg.ZooKeeper, ZooKeeperDigest: os.Getenv(config.DigestVar),
		StateHome: os.Getenv("XDG_STATE_HOME"), Home: home}
}

// exposer is a node store whose records anyone who reaches it might
// change: zkstore's, whose znodes carry an ACL of one identity only with
// digest credentials.
type exposer interface {
	Protected() bool
	HWMDir() string
	Exposed(ctx context.Context) ([]string, error)
}

// warnExposed logs one line at WARN when anyone who reaches the node
// store may rewrite its HWMs (and so make firn repeat IDs): no digest
// configured, or znodes left without one by an earlier start. It never
// stops a start: the store serves as before.
func warnExposed(ctx context.Context, nodes nodeid.Store, timeout time.Duration, log *slog.Logger) {
	e, ok := nodes.(exposer)
	if !ok {
		return
	}
	const why = "WORLD-WRITABLE HWMs: anyone who reaches the ZooKeeper ensemble can rewrite an HWM and make firn repeat IDs; "
	if !e.Protected() {
		log.Warn(why+"configure digest credentials (zookeeper.digest_file or "+config.DigestVar+"), docs/config.md#zookeeper", "path", e.HWMDir())
		return
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	open, err := e.Exposed(ctx)
	switch {
	case err != nil:
		log.Warn("ZooKeeper ACLs not checked at start", "path", e.HWMDir(), "err", err)
	case len(open) > 0:
		log.Warn(why+"these znodes were created without digest credentials: give them the digest identity's ACL (setAcl)", "path", strings.Join(open, ","))
	}
}
