package main

import (
	"io"
	"log"
	"os"

	"github.com/go-sql-driver/mysql"   // the mysql driver for --store mysql
	_ "github.com/jackc/pgx/v5/stdlib" // the pgx driver for --store postgres

	"github.com/firn-id/firn/internal/backend"
	"github.com/firn-id/firn/internal/config"
)

func init() {
	// The MySQL driver logs to standard error on its own ("packets.go:
	// read: connection refused"); firn reports one line instead.
	_ = mysql.SetLogger(log.New(io.Discard, "", 0))
}

var storeFlagsUsage = `Store flags (where node IDs and their HWMs live):
  --store KIND        ` + backend.Names() + `:
` + backend.Help("                        ") + `  --data-dir DIR      local: default $XDG_STATE_HOME/firn, or ~/.local/state/firn
  --endpoints URLS    etcd: comma-separated client URLs (http://127.0.0.1:2379)
  --dsn DSN           postgres: postgres://user@host:5432/db?sslmode=disable
                      mysql: user:password@tcp(host:3306)/db
  --namespace NAME    the set of nodes that must never collide: in SQL a value
                      of the namespace column (default "default"), in etcd a
                      key prefix (default /firn/default/)
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
  --dial-timeout D    how long to wait for etcd or the database to answer
                      before reporting it unreachable (default 5s)
`

// storeUses are the settings that choose a store, which every command
// that opens one takes (config.Register); the flags of storeFlagsUsage.
var storeUses = []string{"registry.store", "registry.data_dir", "registry.endpoints", "registry.dsn", "registry.namespace",
	"registry.table", "registry.dial_timeout", "segments.format", "segments.table", "segments.set", "segments.store", "segments.dsn"}

// storeOf is the store the settings name, for serve and every other
// command: the one translation of the configuration's store settings.
func storeOf(cfg *config.Config) backend.Options {
	home, _ := os.UserHomeDir()
	return backend.Options{Registry: cfg.Registry, Segments: cfg.Segments, StateHome: os.Getenv("XDG_STATE_HOME"), Home: home}
}
