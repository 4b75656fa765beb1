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

	"github.com/firn-id/firn/cmd/firn/internal/backend"
	"github.com/firn-id/firn/cmd/firn/internal/config"
	"github.com/firn-id/firn/localstore"
	"github.com/firn-id/firn/nodeid"
)

func init() {
	// The MySQL driver logs to standard error on its own ("packets.go:
	// read: connection refused"); firn reports one line instead.
	_ = mysql.SetLogger(log.New(io.Discard, "", 0))
}

var storeFlagsUsage = "Store flags (where node IDs and their HWMs live):\n" + config.Usage("registry.store") +
	config.UsageEntry("", strings.Split(strings.TrimSpace(backend.Help("")), "\n")...) + config.Usage(without(storeUses, "registry.store")...)

// storeUses are the settings that choose a store, which every command
// that opens one takes (config.Register); the flags of storeFlagsUsage.
var storeUses = []string{"registry.store", "registry.data_dir", "registry.endpoints", "registry.dsn", "registry.namespace",
	"registry.table", "registry.dial_timeout", "segments.format", "segments.table", "segments.set", "segments.store", "segments.dsn", "zookeeper", "site"}

// storeOf is the store the settings name, for serve and every other
// command: the one translation of the configuration's store settings.
func storeOf(cfg *config.Config) backend.Options {
	stateHome, home := localstore.UserDirs()
	return backend.Options{Registry: cfg.Registry, Segments: cfg.Segments, ZooKeeper: cfg.ZooKeeper, ZooKeeperDigest: os.Getenv(config.DigestVar),
		StateHome: stateHome, Home: home}
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
