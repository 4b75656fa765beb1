package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"io"
	"time"

	"github.com/firn-id/firn/cmd/firn/internal/backend"
	"github.com/firn-id/firn/cmd/firn/internal/config"
	"github.com/firn-id/firn/migrate"
	"github.com/firn-id/firn/nodeid"
	"github.com/firn-id/firn/sqlstore"
	"github.com/firn-id/firn/store"
)

var migrateUsage = `Usage: firn migrate check --from leaf|tinyid|uid-generator --dsn DSN [flags] [layout flags]
       firn migrate check --from leaf-zookeeper --leaf-endpoints HOST:PORT,… --leaf-name NAME
                          [--sample-id ID]… [--apply] --store zookeeper --endpoints … [--namespace …]

Reads the database of a Meituan Leaf, Didi Tinyid or Baidu uid-generator
deployment and prints the plan for serving from firn instead: the tags or
nodes firn will serve, the first IDs it will issue and why they cannot
collide with the IDs the old system issued (the counters of the segment
table; the floor for a snowflake layout), the node IDs to reserve, the
privileges firn will need (checked with statements that change no row),
what it could not determine, and a configuration for firn config check.
It writes nothing unless --apply.

` + ownFlags(
	[2]string{"--from SYSTEM", "leaf (leaf_alloc; none: snowflake mode only), tinyid (tiny_id_info and tiny_id_token) or uid-generator (WORKER_NODE)"},
	[2]string{"--dsn DSN", "the old system's database, as the account firn will use; mysql: user:password@tcp(host:3306)/db, " +
		"postgres: postgres://user@host:5432/db"},
	[2]string{"--dialect D", "mysql (default: the originals' database) or postgres"},
	[2]string{"--old-table NAME", "the old table (default leaf_alloc, tiny_id_info or WORKER_NODE)"},
	[2]string{"--token-table NAME", "tinyid: its token table (default tiny_id_token)"},
	[2]string{"--floor ID", "the largest snowflake ID the old system issued"},
	[2]string{"--max-id-from T.C", "the floor from data: the largest value of column C of table T in the same database, " +
		"compared as numbers (IDs kept as text too; a largest value past 2^63-1 or not whole is refused), for each --max-id-from given"},
	[2]string{"--apply", "record the floor in the registry: move the HWM of the reserved nodes and of the --nodes lowest others " +
		"past it (as firn admin advance --past-id); refused without a floor. Stop every firn process of the namespace first. " +
		"uid-generator (MySQL): first move the AUTO_INCREMENT of WORKER_NODE past the layout's last node, held by a row there, " +
		"so a uid-generator process that starts later refuses to (needs ALTER and INSERT on WORKER_NODE); " +
		"refused if a worker started since the table was read"},
	[2]string{"--nodes N", "--apply: how many nodes besides the reserved ones (default 64, at most the layout's); " +
		"a firn process that takes another node refuses to start below snowflake.floor"},
) + `
The registry --apply writes to and the plan's configuration names
(default: the node table firn_nodes in the same database):
` + config.Usage(migrateRegistryUses...) + `
The layout flags describe the old system's snowflake layout (default:
twitter for leaf, baidu for uid-generator): Leaf's snowflake mode keeps
its state in ZooKeeper and uid-generator its bits in its Spring
configuration, so neither is read from the database; the floor is decoded
with them to check that they fit.

A layout whose time is not its top part (--order node,time,sequence, the
seata preset) is refused: its largest ID is not its last, so no floor
bounds what each node issued.

Opaque IDs (--opaque) are refused: spread over the whole ID space, they
cannot follow the old system's IDs in one column whatever the floor.

` + leafZooKeeperUsage + "\n" + layoutHelp()

// migrateRegistryUses are the settings that name the registry firn
// migrate check --apply writes to; its --dsn is the old system's database.
var migrateRegistryUses = []string{"registry.store", "registry.endpoints", "registry.namespace", "registry.table",
	"registry.data_dir", "registry.dial_timeout"}

// migrateFlags are firn migrate check's settings.
type migrateFlags struct {
	from, dsn, dialect, oldTable, tokenTable string
	floor                                    string
	maxIDFrom                                []string
	apply                                    bool
	nodes                                    int
	stores                                   backend.Options
	layout                                   config.Layout
	opaque                                   config.Opaque
	explicit                                 map[string]bool // flags given on the command line
	opt                                      migrate.Options // what the flags ask migrate.Check
	leaf                                     leafFlags       // --from leaf-zookeeper's
}

func runMigrate(args []string, stdout io.Writer) error {
	if len(args) == 0 || args[0] != "check" {
		if len(args) > 0 && isHelp(args[0]) {
			return errHelp
		}
		return usagef("want a subcommand: firn migrate check --from leaf|tinyid|uid-generator --dsn DSN")
	}
	f, err := parseMigrate(args[1:])
	if err != nil {
		return err
	}
	if migrate.System(f.from) == migrate.LeafZooKeeper {
		return runLeafZooKeeper(f, stdout)
	}
	db, err := f.stores.OpenDB(context.Background(), f.dialect, f.dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 4*f.stores.Registry.DialTimeout)
	defer cancel()
	p, err := migrate.Check(ctx, db, f.opt)
	if err != nil {
		return migrateErr(err)
	}
	var after []sqlstore.PrivilegeCheck
	if f.apply {
		if err := p.Apply(context.Background(), db, f.applyOptions()); err != nil {
			return migrateErr(err)
		}
		// The node table was read before --apply wrote it (or created it,
		// if it was missing): what a read finds now is the last word.
		if f.opt.RegistryHere {
			actx, cancel := context.WithTimeout(context.Background(), 2*f.stores.Registry.DialTimeout)
			defer cancel()
			if after, err = sqlstore.CheckPrivileges(actx, db, p.Dialect, sqlstore.ModeNodes, sqlstore.Tables{Nodes: f.opt.NodeTable}); err != nil {
				return err
			}
		}
	}
	cfg, err := f.configSnippet(p)
	if err != nil {
		return err
	}
	_, err = io.WriteString(stdout, planText(p, after, cfg))
	return err
}

// migrateErr makes a plan or an apply migrate refused bad input: exit 2.
func migrateErr(err error) error {
	var re *migrate.RefusedError
	if errors.As(err, &re) {
		return usagef("%s", re.Reason)
	}
	return err
}

// parseMigrate reads and checks the flags.
func parseMigrate(args []string) (*migrateFlags, error) {
	f := &migrateFlags{explicit: map[string]bool{}}
	fs := flag.NewFlagSet("migrate", flag.ContinueOnError)
	cfg := config.Default()
	cfg.Register(fs, append([]string{"layout"}, append(storeUses, opaqueUses...)...)...)
	fs.StringVar(&f.from, "from", "", "")
	fs.StringVar(&f.dialect, "dialect", sqlstore.MySQL.String(), "") // Leaf's, Tinyid's and uid-generator's database
	fs.StringVar(&f.oldTable, "old-table", "", "")
	fs.StringVar(&f.tokenTable, "token-table", "", "")
	fs.StringVar(&f.floor, "floor", "", "")
	fs.Func("max-id-from", "", func(s string) error { f.maxIDFrom = append(f.maxIDFrom, s); return nil })
	fs.BoolVar(&f.apply, "apply", false, "")
	fs.IntVar(&f.nodes, "nodes", 64, "")
	f.leaf.register(fs)
	rest, err := parseFlags(fs, args)
	if err != nil {
		return nil, err
	}
	if len(rest) > 0 {
		return nil, extraArg("migrate", rest[0])
	}
	fs.Visit(func(fl *flag.Flag) { f.explicit[fl.Name] = true })
	f.stores, f.layout, f.opaque = storeOf(&cfg), cfg.Layout, cfg.Opaque
	sys := migrate.System(f.from)
	if err := f.checkSource(sys); err != nil || sys == migrate.LeafZooKeeper {
		return f, err
	}
	switch {
	case f.stores.Registry.DSN == "":
		return nil, usagef("--dsn is required: the old system's database")
	case !isDatabase(f.dialect):
		return nil, usagef("--dialect %q: want %s", f.dialect, store.Names(store.IsDatabase))
	case f.nodes < 0:
		return nil, usagef("--nodes %d: want 0 or more", f.nodes)
	}
	f.dsn = f.stores.Registry.DSN
	if !f.explicit["layout"] && sys.Layout() != "" {
		f.layout.Preset = sys.Layout()
	}
	if !f.explicit["store"] {
		f.stores.Registry.Store = f.dialect // the registry: the node table in the same database
	}
	if err := f.stores.CheckDataDir(); err != nil {
		return nil, err
	}
	return f, f.options(sys)
}

// checkSource refuses a --from firn does not know, opaque IDs, and the
// flags of one kind of source given to the other; then the Leaf fleet's
// flags when it is one.
func (f *migrateFlags) checkSource(sys migrate.System) error {
	switch {
	case f.from == "":
		return usagef("--from is required: the old system, leaf, leaf-zookeeper, tinyid or uid-generator")
	case !sys.Known() && sys != migrate.LeafZooKeeper:
		return usagef("--from %q: want leaf, leaf-zookeeper, tinyid or uid-generator", f.from)
	case f.opaque.Snowflake:
		// Opaque IDs are spread over the whole space: no floor keeps
		// them from the old system's IDs in one column.
		return usagef("--opaque: opaque snowflake IDs cannot follow %s's IDs in the same column, whatever the floor (they are spread over the whole ID space); "+
			"give firn's opaque IDs a column or table of their own, or migrate with plain IDs", f.from)
	}
	notFor := leafOnly
	if sys == migrate.LeafZooKeeper {
		notFor = dbOnly
	}
	for _, name := range notFor {
		if f.explicit[name] {
			return usagef("--%s is not for --from %s", name, f.from)
		}
	}
	if sys != migrate.LeafZooKeeper {
		return nil
	}
	return f.checkLeaf()
}

// options turns the flags into f.opt.
func (f *migrateFlags) options(sys migrate.System) error {
	d, _ := sqlstore.ParseDialect(f.dialect)
	l, err := f.layout.Snowflake()
	if err != nil {
		return err
	}
	f.opt = migrate.Options{From: sys, Dialect: d, OldTable: f.oldTable, TokenTable: f.tokenTable, Layout: l,
		LayoutErr: config.CheckGenerates(l, time.Now()), NodeTable: f.stores.Registry.Table,
		RegistryHere: f.stores.Registry.Store == f.dialect && f.stores.Registry.DSN == f.dsn}
	if f.opt.Floor, err = migrate.ParseFloor(f.floor); err != nil {
		return usagef("--floor %s", err)
	}
	for _, tc := range f.maxIDFrom {
		c, err := migrate.ParseColumn(tc)
		if err != nil {
			return usagef("--max-id-from %s", err)
		}
		f.opt.MaxIDFrom = append(f.opt.MaxIDFrom, c)
	}
	return nil
}

// applyOptions says where --apply records the floor: the registry of
// the store flags (by default the node table in the old database).
func (f *migrateFlags) applyOptions() migrate.ApplyOptions {
	sf := f.stores
	if !isDatabase(sf.Registry.Store) {
		sf.Registry.DSN = "" // the old database's, not the registry's
	}
	open := func() (nodeid.Store, func() error, error) { return sf.OpenNodes(context.Background()) }
	registry := sf.Describe()
	if isDatabase(sf.Registry.Store) {
		registry += " (table " + cmp.Or(sf.Registry.Table, sqlstore.DefaultNodeTable) + ")"
	}
	return migrate.ApplyOptions{Open: open, Registry: registry, Source: backend.Redact(f.dialect, f.dsn),
		Space: config.SpaceID(f.opt.Layout, nil), Nodes: f.nodes, Timeout: f.stores.Registry.DialTimeout}
}

// isDatabase reports whether kind is a store reached by a DSN: a
// database that can hold firn's node table beside the old system's.
func isDatabase(kind string) bool {
	k, ok := store.Lookup(kind)
	return ok && k.Database
}
