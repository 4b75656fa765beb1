package main

import (
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
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
	// segKind and segDSN, when set, name a database of its own for the
	// segment table, in place of the registry's store.
	segKind, segDSN string
	// dialTimeout bounds the wait for a store's first answer.
	dialTimeout time.Duration
	// mustExist refuses a local data directory that does not exist,
	// rather than create it.
	mustExist bool
	// multi is the set of segment stores of the configuration file.
	multi []config.SegmentStore
	// tokenTable is Tinyid's token table, read with --segments tinyid
	// when checkTokens is set.
	tokenTable  string
	checkTokens bool
	log         *slog.Logger // for the token reader's failed refreshes
	// tokens is the reader of tokenTable in the (first) database of
	// Tinyid's table, set by the last open; nil when not checked.
	tokens *sqlstore.TinyidTokens
}

var storeFlagsUsage = `Store flags (where node IDs and their HWMs live):
  --store KIND        ` + backendNames() + `:
` + backendHelp() + `  --data-dir DIR      local: default $XDG_STATE_HOME/firn, or ~/.local/state/firn
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
func storeOf(cfg *config.Config) storeFlags {
	r, sg := cfg.Registry, cfg.Segments
	return storeFlags{kind: r.Store, dataDir: r.DataDir, dsn: r.DSN, endpoints: strings.Join(r.Endpoints, ","),
		namespace: r.Namespace, table: r.Table, segFormat: sg.Format, segTable: sg.Table, set: sg.Set, segKind: sg.Store, segDSN: sg.DSN,
		dialTimeout: r.DialTimeout, multi: sg.Stores}
}

// checkDataDir applies config.CheckDataDir to --data-dir.
func (f *storeFlags) checkDataDir() error {
	if err := config.CheckDataDir(f.kind, f.dataDir); err != nil {
		return usagef("data directory (--data-dir, FIRN_REGISTRY_DATA_DIR or registry.data_dir) %s", err)
	}
	return nil
}

// localDir is the local store's data directory: --data-dir, or the
// user's default.
func (f *storeFlags) localDir() (string, error) {
	if f.dataDir != "" {
		return f.dataDir, nil
	}
	home, _ := os.UserHomeDir()
	return localstore.DefaultDir(os.Getenv("XDG_STATE_HOME"), home)
}

// open returns the chosen node store and a function that closes it.
func (f *storeFlags) open() (nodeid.Store, func() error, error) {
	o, err := f.openBackend(f.kind)
	if err != nil {
		return nil, nil, err
	}
	return o.nodes, o.close, nil
}

// openLocal opens the data directory.
func openLocal(f *storeFlags) (*opened, error) {
	if f.dsn != "" {
		return nil, usagef("--dsn is for --store postgres or mysql")
	}
	dir, err := f.localDir()
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(dir); f.mustExist && err != nil {
		return nil, usagef("data directory %s: %s: nothing to advance there (firn next and firn serve create it; --data-dir names another)", dir, errors.Unwrap(err))
	}
	s, err := localstore.Open(dir)
	if err != nil {
		return nil, err
	}
	return &opened{nodes: s, segments: func() (segment.Store, error) { return s.Segments(), nil }, close: s.Close}, nil
}

// openEtcd connects to etcd.
func openEtcd(f *storeFlags) (*opened, error) {
	if f.endpoints == "" {
		return nil, usagef("--store etcd needs --endpoints")
	}
	if err := f.checkDialTimeout(); err != nil {
		return nil, err
	}
	endpoints := strings.Split(f.endpoints, ",")
	if err := checkEndpoints(endpoints); err != nil {
		return nil, err
	}
	prefix := f.namespace
	if prefix == "" {
		prefix = "/firn/default/"
	}
	// One spelling per namespace, said by the operator: a prefix that
	// etcdstore would have to rewrite is refused rather than moved.
	if c := path.Clean(prefix); !strings.HasPrefix(prefix, "/") || (prefix != c && prefix != c+"/") {
		return nil, usagef("--namespace %q: an etcd namespace is a clean key prefix starting with /, such as %q", f.namespace, path.Clean("/"+prefix)+"/")
	}
	cli, err := clientv3.New(clientv3.Config{Endpoints: endpoints, DialTimeout: f.dialTimeout, Logger: zap.NewNop()})
	if err != nil {
		return nil, usagef("--endpoints %s: %s", redact("endpoint", f.endpoints), scrub(err.Error()))
	}
	if err := pingEtcd(cli, endpoints, prefix+"layout", f.dialTimeout); err != nil {
		_ = cli.Close()
		return nil, err
	}
	s := etcdstore.New(cli, prefix)
	return &opened{nodes: s, segments: func() (segment.Store, error) { return s.Segments(), nil }, close: cli.Close}, nil
}

// openSQL connects to a database of dialect d: its node table, and the
// segment table of --segments over the same connection.
func openSQL(d sqlstore.Dialect) func(f *storeFlags) (*opened, error) {
	return func(f *storeFlags) (*opened, error) {
		if f.dsn == "" {
			return nil, usagef("--store %s needs --dsn", f.kind)
		}
		if err := f.checkSegFormat(); err != nil {
			return nil, err
		}
		db, err := f.openDB(f.kind, f.dsn)
		if err != nil {
			return nil, err
		}
		s, err := sqlstore.New(db, d, sqlstore.Options{Table: f.table, Namespace: f.namespace})
		if err != nil {
			db.Close()
			return nil, usagef("%s", err)
		}
		segs := func() (segment.Store, error) { return f.sqlSegments(d, db) }
		return &opened{nodes: s, segments: segs, close: db.Close}, nil
	}
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
	if f.segKind != "" {
		return f.ownSegments()
	}
	o, err := f.openBackend(f.kind)
	if err != nil {
		return nil, nil, err
	}
	segs, err := o.segments()
	if err != nil {
		return nil, nil, errors.Join(err, o.close())
	}
	return segs, o.close, nil
}

// ownSegments opens the segment table in the database of its own named
// by --segment-store and --segment-dsn.
func (f *storeFlags) ownSegments() (segment.Store, func() error, error) {
	switch {
	case f.segKind != "postgres" && f.segKind != "mysql":
		return nil, nil, usagef("--segment-store %q: want postgres or mysql", f.segKind)
	case f.segDSN == "":
		return nil, nil, usagef("--segment-store %s needs --segment-dsn", f.segKind)
	}
	if err := f.checkSegFormat(); err != nil {
		return nil, nil, err
	}
	return f.openSQLSegments(f.segKind, f.segDSN)
}

// checkSegFormat refuses an unknown --segments.
func (f *storeFlags) checkSegFormat() error {
	if f.segFormat != "leaf" && f.segFormat != "tinyid" && f.segFormat != "set" {
		return usagef("--segments %q: want leaf, tinyid or set", f.segFormat)
	}
	return nil
}

// sqlSegments is the segment table of the chosen format in db.
func (f *storeFlags) sqlSegments(d sqlstore.Dialect, db *sql.DB) (segment.Store, error) {
	var s segment.Store
	var err error
	switch f.segFormat {
	case "tinyid":
		s, err = sqlstore.NewTinyid(db, d, sqlstore.TinyidOptions{Table: f.segTable})
		if err == nil && f.checkTokens && f.tokens == nil {
			f.tokens, err = sqlstore.NewTinyidTokens(db, d, sqlstore.TinyidTokenOptions{Table: f.tokenTable, Log: f.log})
		}
	case "set":
		s, err = sqlstore.NewSetStore(db, d, sqlstore.SetOptions{Table: f.segTable, Set: f.set})
	default:
		s, err = sqlstore.NewSegments(db, d, sqlstore.SegmentOptions{Table: f.segTable})
	}
	if err != nil {
		return nil, usagef("--segment-table: %s", err)
	}
	return s, nil
}

// openSQLSegments opens the segment table of the chosen format in one
// database of a set.
func (f *storeFlags) openSQLSegments(kind, dsn string) (segment.Store, func() error, error) {
	d, _ := sqlstore.ParseDialect(kind)
	db, err := f.openDB(kind, dsn)
	if err != nil {
		return nil, nil, err
	}
	s, err := f.sqlSegments(d, db)
	if err != nil {
		db.Close()
		return nil, nil, err
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

// openBoth opens the node store and the segment store: the registry's
// own segment store over the same connection, or the set of segment
// stores of the configuration.
func (f *storeFlags) openBoth() (nodeid.Store, segment.Store, func() error, error) {
	f.tokens = nil // the first store of this open, not of one closed before
	o, err := f.openBackend(f.kind)
	if err != nil {
		return nil, nil, nil, err
	}
	if len(f.multi) > 0 || f.segKind != "" {
		open := f.openSet
		if f.segKind != "" {
			open = f.ownSegments
		}
		segs, closeSegs, err := open()
		if err != nil {
			return nil, nil, nil, errors.Join(err, o.close())
		}
		return o.nodes, segs, closeAll(o.close, closeSegs), nil
	}
	segs, err := o.segments()
	if err != nil {
		return nil, nil, nil, errors.Join(err, o.close())
	}
	return o.nodes, segs, o.close, nil
}
