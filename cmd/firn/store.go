package main

import (
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"os"
	"path"
	"strings"
	"time"

	_ "github.com/go-sql-driver/mysql" // the mysql driver for --store mysql
	_ "github.com/jackc/pgx/v5/stdlib" // the pgx driver for --store postgres

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/firn-id/firn/etcdstore"
	"github.com/firn-id/firn/internal/config"
	"github.com/firn-id/firn/localstore"
	"github.com/firn-id/firn/nodeid"
	"github.com/firn-id/firn/segment"
	"github.com/firn-id/firn/sqlstore"
)

// storeFlags choose where node IDs and HWMs live.
type storeFlags struct {
	kind, dataDir, dsn, endpoints, namespace, table string
	segTable, segFormat, set                        string
	// multi is the set of segment stores of the configuration file.
	multi []config.SegmentStore
}

const storeFlagsUsage = `Store flags (where node IDs and their HWMs live):
  --store KIND        local (default: the data directory), etcd, postgres, mysql
  --data-dir DIR      local: default $XDG_STATE_HOME/firn, or ~/.local/state/firn
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
`

func (f *storeFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.kind, "store", "local", "")
	fs.StringVar(&f.dataDir, "data-dir", "", "")
	fs.StringVar(&f.dsn, "dsn", "", "")
	fs.StringVar(&f.endpoints, "endpoints", "", "")
	fs.StringVar(&f.namespace, "namespace", "", "")
	fs.StringVar(&f.table, "table", "", "")
	fs.StringVar(&f.segFormat, "segments", "leaf", "")
	fs.StringVar(&f.segTable, "segment-table", "", "")
	fs.StringVar(&f.set, "set", "", "")
}

// open returns the chosen store and a function that closes it.
func (f *storeFlags) open() (nodeid.Store, func() error, error) {
	switch f.kind {
	case "local":
		if f.dsn != "" {
			return nil, nil, usagef("--dsn is for --store postgres or mysql")
		}
		dir := f.dataDir
		if dir == "" {
			home, _ := os.UserHomeDir()
			d, err := localstore.DefaultDir(os.Getenv("XDG_STATE_HOME"), home)
			if err != nil {
				return nil, nil, err
			}
			dir = d
		}
		s, err := localstore.Open(dir)
		if err != nil {
			return nil, nil, err
		}
		return s, s.Close, nil
	case "postgres", "mysql":
		return f.openSQL()
	case "etcd":
		return f.openEtcd()
	}
	return nil, nil, usagef("--store %q: want local, etcd, postgres or mysql", f.kind)
}

func (f *storeFlags) openEtcd() (nodeid.Store, func() error, error) {
	if f.endpoints == "" {
		return nil, nil, usagef("--store etcd needs --endpoints")
	}
	cli, err := clientv3.New(clientv3.Config{Endpoints: strings.Split(f.endpoints, ","), DialTimeout: 5 * time.Second,
		Logger: zap.NewNop()})
	if err != nil {
		return nil, nil, usagef("--endpoints: %s", err)
	}
	prefix := f.namespace
	if prefix == "" {
		prefix = "/firn/default/"
	}
	// One spelling per namespace, said by the operator: a prefix that
	// etcdstore would have to rewrite is refused rather than moved.
	if c := path.Clean(prefix); !strings.HasPrefix(prefix, "/") || (prefix != c && prefix != c+"/") {
		_ = cli.Close()
		return nil, nil, usagef("--namespace %q: an etcd namespace is a clean key prefix starting with /, such as %q", f.namespace, path.Clean("/"+prefix)+"/")
	}
	return etcdstore.New(cli, prefix), cli.Close, nil
}

func (f *storeFlags) openSQL() (nodeid.Store, func() error, error) {
	if f.dsn == "" {
		return nil, nil, usagef("--store %s needs --dsn", f.kind)
	}
	d, _ := sqlstore.ParseDialect(f.kind)
	driver := map[sqlstore.Dialect]string{sqlstore.Postgres: "pgx", sqlstore.MySQL: "mysql"}[d]
	db, err := sql.Open(driver, f.dsn)
	if err != nil {
		return nil, nil, usagef("--dsn: %s", err)
	}
	s, err := sqlstore.New(db, d, sqlstore.Options{Table: f.table, Namespace: f.namespace})
	if err != nil {
		db.Close()
		return nil, nil, usagef("%s", err)
	}
	return s, db.Close, nil
}

// describe names the store for messages.
func (f *storeFlags) describe() string {
	ns := f.namespace
	switch {
	case f.kind == "local":
		return "local data directory"
	case ns == "" && f.kind == "etcd":
		ns = "/firn/default/"
	case ns == "":
		ns = "default"
	}
	return fmt.Sprintf("%s namespace %q", f.kind, ns)
}

// openSegments returns the chosen segment store and a function that closes
// it.
func (f *storeFlags) openSegments() (segment.Store, func() error, error) {
	if f.segFormat != "leaf" && f.segFormat != "tinyid" && f.segFormat != "set" {
		return nil, nil, usagef("--segments %q: want leaf, tinyid or set", f.segFormat)
	}
	switch f.kind {
	case "local":
		s, closer, err := f.open()
		if err != nil {
			return nil, nil, err
		}
		return s.(*localstore.Store).Segments(), closer, nil
	case "etcd":
		s, closer, err := f.open()
		if err != nil {
			return nil, nil, err
		}
		return s.(*etcdstore.Store).Segments(), closer, nil
	case "postgres", "mysql":
		if f.dsn == "" {
			return nil, nil, usagef("--store %s needs --dsn", f.kind)
		}
		return f.openSQLSegments(f.kind, f.dsn)
	}
	return nil, nil, usagef("--store %q: want local, etcd, postgres or mysql", f.kind)
}

// openSQLSegments opens the segment table of the chosen format in one
// database.
func (f *storeFlags) openSQLSegments(kind, dsn string) (segment.Store, func() error, error) {
	d, _ := sqlstore.ParseDialect(kind)
	db, err := sql.Open(map[sqlstore.Dialect]string{sqlstore.Postgres: "pgx", sqlstore.MySQL: "mysql"}[d], dsn)
	if err != nil {
		return nil, nil, usagef("--dsn: %s", err)
	}
	var s segment.Store
	switch f.segFormat {
	case "tinyid":
		s, err = sqlstore.NewTinyid(db, d, sqlstore.TinyidOptions{Table: f.segTable, Invalid: invalidSQLInput})
	case "set":
		s, err = sqlstore.NewSetStore(db, d, sqlstore.SetOptions{Table: f.segTable, Set: f.set, Invalid: invalidSQLInput})
	default:
		s, err = sqlstore.NewSegments(db, d, sqlstore.SegmentOptions{Table: f.segTable, Invalid: invalidSQLInput})
	}
	if err != nil {
		db.Close()
		return nil, nil, usagef("--segment-table: %s", err)
	}
	return s, db.Close, nil
}

// openSet opens the set of segment stores of the configuration
// (segments.stores), store i issuing remainder i.
func (f *storeFlags) openSet() (segment.Store, func() error, error) {
	if f.segFormat != "tinyid" && f.segFormat != "set" {
		return nil, nil, usagef("--segments %q with segments.stores: want tinyid or set, whose rows record their residue class", f.segFormat)
	}
	var stores []segment.Store
	var closers []func() error
	closeAll := func() error {
		var errs []error
		for _, c := range closers {
			errs = append(errs, c())
		}
		return errors.Join(errs...)
	}
	for i, st := range f.multi {
		s, closer, err := f.openSQLSegments(st.Store, st.DSN)
		if err != nil {
			return nil, nil, errors.Join(fmt.Errorf("segments.stores[%d]: %w", i, err), closeAll())
		}
		stores = append(stores, s)
		closers = append(closers, closer)
	}
	m, err := segment.NewMulti(stores...)
	if err != nil {
		return nil, nil, errors.Join(err, closeAll())
	}
	return m, closeAll, nil
}

// openBoth opens the node store and the segment store, sharing the local
// directory's lock or the etcd client.
func (f *storeFlags) openBoth() (nodeid.Store, segment.Store, func() error, error) {
	nodes, closeNodes, err := f.open()
	if err != nil {
		return nil, nil, nil, err
	}
	if len(f.multi) > 0 {
		segs, closeSegs, err := f.openSet()
		if err != nil {
			return nil, nil, nil, errors.Join(err, closeNodes())
		}
		return nodes, segs, func() error { return errors.Join(closeSegs(), closeNodes()) }, nil
	}
	switch s := nodes.(type) {
	case *localstore.Store:
		return s, s.Segments(), closeNodes, nil
	case *etcdstore.Store:
		return s, s.Segments(), closeNodes, nil
	}
	segs, closeSegs, err := f.openSegments()
	if err != nil {
		return nil, nil, nil, errors.Join(err, closeNodes())
	}
	return nodes, segs, func() error { return errors.Join(closeSegs(), closeNodes()) }, nil
}
