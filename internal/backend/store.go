package backend

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/firn-id/firn/etcdstore"
	"github.com/firn-id/firn/internal/secret"
	"github.com/firn-id/firn/localstore"
	"github.com/firn-id/firn/segment"
	"github.com/firn-id/firn/sqlstore"
)

// openLocal opens the data directory.
func openLocal(_ context.Context, op *opener) (*opened, error) {
	if op.Registry.DSN != "" {
		return nil, configf("--dsn is for --store postgres or mysql")
	}
	dir, err := op.LocalDir()
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(dir); op.MustExist && err != nil {
		return nil, configf("data directory %s: %s: nothing to advance there (firn next and firn serve create it; --data-dir names another)", dir, errors.Unwrap(err))
	}
	s, err := localstore.Open(dir)
	if err != nil {
		return nil, err
	}
	return &opened{nodes: s, segments: func() (segment.Store, error) { return s.Segments(), nil }, close: s.Close}, nil
}

// openEtcd connects to etcd.
func openEtcd(ctx context.Context, op *opener) (*opened, error) {
	r := op.Registry
	// A comma inside one setting separates endpoints too, as on the
	// command line.
	joined := strings.Join(r.Endpoints, ",")
	if joined == "" {
		return nil, configf("--store etcd needs --endpoints")
	}
	if err := op.checkDialTimeout(); err != nil {
		return nil, err
	}
	endpoints := strings.Split(joined, ",")
	if err := op.checkEndpoints(endpoints); err != nil {
		return nil, err
	}
	prefix := r.Namespace
	if prefix == "" {
		prefix = "/firn/default/"
	}
	// One spelling per namespace, said by the operator: a prefix that
	// etcdstore would have to rewrite is refused rather than moved.
	if c := path.Clean(prefix); !strings.HasPrefix(prefix, "/") || (prefix != c && prefix != c+"/") {
		return nil, configf("--namespace %q: an etcd namespace is a clean key prefix starting with /, such as %q", r.Namespace, path.Clean("/"+prefix)+"/")
	}
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

// openSQL connects to a database of dialect d: its node table, and the
// segment table of Segments.Format over the same connection.
func openSQL(d sqlstore.Dialect) func(context.Context, *opener) (*opened, error) {
	return func(ctx context.Context, op *opener) (*opened, error) {
		r := op.Registry
		if r.DSN == "" {
			return nil, configf("--store %s needs --dsn", r.Store)
		}
		if err := op.checkSegFormat(); err != nil {
			return nil, err
		}
		db, err := op.OpenDB(ctx, r.Store, r.DSN)
		if err != nil {
			return nil, err
		}
		s, err := sqlstore.New(db, d, sqlstore.Options{Table: r.Table, Namespace: r.Namespace})
		if err != nil {
			db.Close()
			return nil, configf("%s", err)
		}
		segs := func() (segment.Store, error) { return op.sqlSegments(d, db) }
		return &opened{nodes: s, segments: segs, close: db.Close}, nil
	}
}

// RetryEvery is how often OpenRetrying tries again a store that did not
// answer.
const RetryEvery = time.Second

// OpenRetrying opens the stores, and while they do not answer (an
// *UnreachableError: an outage, which a server waits out) logs why and
// tries again, until ctx ends. Bad input is returned at once.
func (o Options) OpenRetrying(ctx context.Context, log *slog.Logger) (*Stores, error) {
	for {
		stores, err := o.Open(ctx)
		var ue *UnreachableError
		if !errors.As(err, &ue) {
			return stores, err
		}
		log.Error("store unreachable: not ready, retrying", "err", err, "retry", RetryEvery.String())
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(RetryEvery):
		}
	}
}
