package backend

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/firn-id/firn/etcdstore"
	"github.com/firn-id/firn/internal/config"
	"github.com/firn-id/firn/internal/secret"
	"github.com/firn-id/firn/localstore"
	"github.com/firn-id/firn/segment"
	"github.com/firn-id/firn/sqlstore"
)

// checkLocal refuses a DSN given to the local store.
func checkLocal(op *opener) error {
	if op.Registry.DSN != "" {
		return configf("--dsn is for --store postgres or mysql")
	}
	return nil
}

// openLocal opens the data directory, with the user's node directory.
func openLocal(_ context.Context, op *opener) (*opened, error) {
	dir, err := op.LocalDir()
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(dir); op.MustExist && err != nil {
		return nil, configf("data directory %s: %s: nothing to advance there (firn next and firn serve create it; --data-dir names another)", dir, errors.Unwrap(err))
	}
	nodeDir, err := localstore.DefaultNodeDir(op.StateHome, op.Home)
	if err != nil {
		return nil, err
	}
	s, err := localstore.Open(localstore.Config{Dir: dir, NodeDir: nodeDir})
	if errors.Is(err, localstore.ErrLocked) {
		// Another directory would not help: the node directory is shared.
		return nil, fmt.Errorf("%w: stop it, or ask it for IDs (firn next and firn tag find a firn serve there on their own, "+
			"or name one with --server URL); several servers share a registry (--store etcd, postgres, mysql or zookeeper)", err)
	}
	if err != nil {
		return nil, err
	}
	return &opened{nodes: s, segments: func() (segment.Store, error) { return s.Segments(), nil }, close: s.Close}, nil
}

// etcdTarget is the endpoints and key prefix the registry names. A comma
// inside one setting separates endpoints too, as on the command line.
func etcdTarget(r config.Registry) (endpoints []string, prefix string) {
	if joined := strings.Join(r.Endpoints, ","); joined != "" {
		endpoints = strings.Split(joined, ",")
	}
	prefix = r.Namespace
	if prefix == "" {
		prefix = "/firn/default/"
	}
	return endpoints, prefix
}

// checkEtcd refuses etcd settings openEtcd could not dial.
func checkEtcd(op *opener) error {
	r := op.Registry
	endpoints, prefix := etcdTarget(r)
	if len(endpoints) == 0 {
		return configf("--store etcd needs --endpoints")
	}
	if err := op.checkDialTimeout(); err != nil {
		return err
	}
	if err := op.checkEndpoints(endpoints); err != nil {
		return err
	}
	// One spelling per namespace, said by the operator: a prefix that
	// etcdstore would have to rewrite is refused rather than moved.
	if c := path.Clean(prefix); !strings.HasPrefix(prefix, "/") || (prefix != c && prefix != c+"/") {
		return configf("--namespace %q: an etcd namespace is a clean key prefix starting with /, such as %q", r.Namespace, path.Clean("/"+prefix)+"/")
	}
	return nil
}

// openEtcd connects to etcd.
func openEtcd(ctx context.Context, op *opener) (*opened, error) {
	r := op.Registry
	endpoints, prefix := etcdTarget(r)
	joined := strings.Join(endpoints, ",")
	cli, err := clientv3.New(clientv3.Config{Endpoints: endpoints, DialTimeout: r.DialTimeout, Logger: zap.NewNop()})
	if err != nil {
		return nil, configf("--endpoints %s: %s", Redact("endpoint", joined), secret.Scrub(err.Error()))
	}
	if err := op.pingEtcd(ctx, cli, endpoints, prefix+"layout"); err != nil {
		_ = cli.Close()
		return nil, err
	}
	s := etcdstore.New(cli, prefix)
	return &opened{nodes: s, segments: func() (segment.Store, error) { return s.Segments(), nil }, close: cli.Close}, nil
}

// checkSQL refuses settings of a database of dialect d that openSQL
// could not open: no DSN, or one its driver cannot read, a dial timeout
// out of range, and the node and segment tables' own rules.
func checkSQL(d sqlstore.Dialect) func(*opener) error {
	return func(op *opener) error {
		r := op.Registry
		if r.DSN == "" {
			return configf("--store %s needs --dsn", r.Store)
		}
		if err := op.checkSegFormat(); err != nil {
			return err
		}
		if err := op.checkDB(r.Store, r.DSN); err != nil {
			return err
		}
		// The node store's constructor does no I/O: given no database
		// it applies its rules alone.
		if _, err := nodeStore(d, nil, r); err != nil {
			return err
		}
		return op.checkSegTable(d)
	}
}

// nodeStore is the node table of the registry in db.
func nodeStore(d sqlstore.Dialect, db *sql.DB, r config.Registry) (*sqlstore.Store, error) {
	s, err := sqlstore.New(db, d, sqlstore.Options{Table: r.Table, Namespace: r.Namespace})
	if err != nil {
		return nil, configf("%s", err)
	}
	return s, nil
}

// openSQL connects to a database of dialect d: its node table, and the
// segment table of Segments.Format over the same connection.
func openSQL(d sqlstore.Dialect) func(context.Context, *opener) (*opened, error) {
	return func(ctx context.Context, op *opener) (*opened, error) {
		r := op.Registry
		db, err := op.OpenDB(ctx, r.Store, r.DSN)
		if err != nil {
			return nil, err
		}
		s, err := nodeStore(d, db, r)
		if err != nil {
			db.Close()
			return nil, err
		}
		segs := func() (segment.Store, error) { return op.sqlSegments(d, db) }
		return &opened{nodes: s, segments: segs, close: db.Close}, nil
	}
}

// RetryEvery is how often OpenRetrying tries again a store that did not
// answer.
const RetryEvery = time.Second

// OpenRetrying opens the stores, and while they do not answer (an
// *UnreachableError: an outage, which a server waits out) logs why,
// hands it to unready (nil: none) and tries again, until ctx ends. Bad
// input is returned at once.
func (o Options) OpenRetrying(ctx context.Context, log *slog.Logger, unready func(error)) (*Stores, error) {
	for {
		stores, err := o.Open(ctx)
		var ue *UnreachableError
		if !errors.As(err, &ue) || ctx.Err() != nil {
			return stores, err
		}
		log.Error("store unreachable: not ready, retrying", "err", err, "retry_in", RetryEvery.String())
		if unready != nil {
			unready(err)
		}
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(RetryEvery):
		}
	}
}
