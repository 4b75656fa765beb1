package main

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/firn-id/firn/internal/config"
	"github.com/firn-id/firn/nodeid"
	"github.com/firn-id/firn/segment"
	"github.com/firn-id/firn/snowflake"
	"github.com/firn-id/firn/sqlstore"
)

var migrateUsage = `Usage: firn migrate check --from leaf|tinyid|uid-generator --dsn DSN [flags] [layout flags]

Reads the database of a Meituan Leaf, Didi Tinyid or Baidu uid-generator
deployment and prints the plan for serving from firn instead: the tags or
nodes firn will serve, the first IDs it will issue and why they cannot
collide with the IDs the old system issued (the counters of the segment
table; the floor for a snowflake layout), the node IDs to reserve, the
privileges firn will need (checked with statements that change no row),
what it could not determine, and a configuration for firn config check.
It writes nothing unless --apply.

  --from SYSTEM       leaf (leaf_alloc; none: snowflake mode only), tinyid
                      (tiny_id_info and tiny_id_token) or uid-generator
                      (WORKER_NODE)
  --dsn DSN           the old system's database, as the account firn will
                      use; mysql: user:password@tcp(host:3306)/db,
                      postgres: postgres://user@host:5432/db
  --dialect D         mysql (default: the originals' database) or postgres
  --old-table NAME    the old table (default leaf_alloc, tiny_id_info or
                      WORKER_NODE)
  --token-table NAME  tinyid: its token table (default tiny_id_token)
  --floor ID          the largest snowflake ID the old system issued
  --max-id-from T.C   the floor from data: the largest value of column C
                      of table T in the same database, compared as
                      numbers (IDs kept as text too; a largest value
                      past 2^63-1 or not whole is refused), for each
                      --max-id-from given
  --apply             record the floor in the registry: move the HWM of the
                      reserved nodes and of the --nodes lowest others past
                      it (as firn admin advance --past-id); refused without
                      a floor. Stop every firn process of the namespace
                      first. uid-generator (MySQL): first move the
                      AUTO_INCREMENT of WORKER_NODE past the layout's last
                      node, so a uid-generator process that starts later
                      refuses to (needs ALTER on WORKER_NODE)
  --nodes N           --apply: how many nodes besides the reserved ones
                      (default 64, at most the layout's); a firn process
                      that takes another node refuses to start below
                      snowflake.floor
  --store, --endpoints, --namespace, --table, --data-dir, --dial-timeout
                      the registry --apply writes to and the plan's
                      configuration names (default: the node table
                      firn_nodes in the same database)

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

` + layoutHelp()

// migrateFlags are firn migrate check's settings.
type migrateFlags struct {
	from, dsn, dialect, oldTable, tokenTable string
	floor                                    string
	maxIDFrom                                []string
	apply                                    bool
	nodes                                    int
	stores                                   storeFlags
	layout                                   config.Layout
	opaque                                   config.Opaque
	explicit                                 map[string]bool // flags given on the command line
}

// oldSystems are the previous systems firn migrate check reads, with the
// default table, layout and segment format of each.
var oldSystems = map[string]struct{ table, layout, format string }{
	"leaf":          {"leaf_alloc", "twitter", "leaf"},
	"tinyid":        {"tiny_id_info", "", "tinyid"},
	"uid-generator": {"WORKER_NODE", "baidu", ""},
}

func runMigrate(args []string, stdout io.Writer) error {
	if len(args) == 0 || args[0] != "check" {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "-help") {
			return errHelp
		}
		return usagef("want a subcommand: firn migrate check --from leaf|tinyid|uid-generator --dsn DSN")
	}
	f, err := parseMigrate(args[1:])
	if err != nil {
		return err
	}
	kind := f.dialect
	d, _ := sqlstore.ParseDialect(kind)
	db, err := f.stores.openDB(kind, f.dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 4*f.stores.dialTimeout)
	defer cancel()
	p, err := f.plan(ctx, db, d)
	if err != nil {
		return err
	}
	if f.apply {
		if err := f.applyFloor(ctx, p, db, d); err != nil {
			return err
		}
	}
	_, err = io.WriteString(stdout, p.String())
	return err
}

// parseMigrate reads and checks the flags.
func parseMigrate(args []string) (*migrateFlags, error) {
	f := &migrateFlags{explicit: map[string]bool{}}
	fs := flag.NewFlagSet("migrate", flag.ContinueOnError)
	cfg := config.Default()
	cfg.Register(fs, append([]string{"layout"}, append(storeUses, opaqueUses...)...)...)
	fs.StringVar(&f.from, "from", "", "")
	fs.StringVar(&f.dialect, "dialect", "mysql", "")
	fs.StringVar(&f.oldTable, "old-table", "", "")
	fs.StringVar(&f.tokenTable, "token-table", "tiny_id_token", "")
	fs.StringVar(&f.floor, "floor", "", "")
	fs.Func("max-id-from", "", func(s string) error { f.maxIDFrom = append(f.maxIDFrom, s); return nil })
	fs.BoolVar(&f.apply, "apply", false, "")
	fs.IntVar(&f.nodes, "nodes", 64, "")
	rest, err := parseFlags(fs, args)
	if err != nil {
		return nil, err
	}
	if len(rest) > 0 {
		return nil, usagef("unexpected argument %q; run 'firn help migrate'", rest[0])
	}
	fs.Visit(func(fl *flag.Flag) { f.explicit[fl.Name] = true })
	f.stores, f.layout, f.opaque = storeOf(&cfg), cfg.Layout, cfg.Opaque
	sys, ok := oldSystems[f.from]
	switch {
	case f.from == "":
		return nil, usagef("--from is required: the old system, leaf, tinyid or uid-generator")
	case !ok:
		return nil, usagef("--from %q: want leaf, tinyid or uid-generator", f.from)
	case f.stores.dsn == "":
		return nil, usagef("--dsn is required: the old system's database")
	case f.dialect != "mysql" && f.dialect != "postgres":
		return nil, usagef("--dialect %q: want mysql or postgres", f.dialect)
	case f.nodes < 0:
		return nil, usagef("--nodes %d: want 0 or more", f.nodes)
	case f.opaque.Snowflake:
		// Opaque IDs are spread over the whole space: no floor keeps
		// them from the old system's IDs in one column.
		return nil, usagef("--opaque: opaque snowflake IDs cannot follow %s's IDs in the same column, whatever the floor (they are spread over the whole ID space); "+
			"give firn's opaque IDs a column or table of their own, or migrate with plain IDs", f.from)
	}
	f.dsn = f.stores.dsn
	if f.oldTable == "" {
		f.oldTable = sys.table
	}
	if !f.explicit["layout"] && sys.layout != "" {
		f.layout.Preset = sys.layout
	}
	if !f.explicit["store"] {
		f.stores.kind = f.dialect // the registry: the node table in the same database
	}
	if err := f.stores.checkDataDir(); err != nil {
		return nil, err
	}
	return f, nil
}

// migratePlan is what firn migrate check found and proposes.
type migratePlan struct {
	from, dialect string
	oldTable      string
	privileges    []sqlstore.PrivilegeCheck
	tags          []segment.TagInfo // the segment rows firn will serve
	noSegments    bool              // leaf: no segment table (snowflake mode only)
	tokenBizTypes []string          // tinyid: the bizTypes its tokens cover
	workers       []sqlstore.WorkerNode
	layout        snowflake.Layout
	layoutErr     error         // the layout cannot generate IDs
	floor         uint64        // 0: none
	floorFrom     []string      // where the floor came from
	samples       []sampleCheck // the floor and each MAX, decoded
	reserved      []uint64      // node IDs to reserve
	firstNode     uint64        // the node firn takes first: the lowest not reserved
	unknown       []string      // what could not be determined
	config        string        // a configuration for firn config check
	applied       []string      // what --apply wrote
}

// sampleCheck is one ID of the old system decoded with the old layout.
type sampleCheck struct {
	what    string
	id      uint64
	parts   snowflake.Parts
	verdict string // "" when plausible
}

// plan reads the old tables and works the plan out; it writes nothing.
func (f *migrateFlags) plan(ctx context.Context, db *sql.DB, d sqlstore.Dialect) (*migratePlan, error) {
	p := &migratePlan{from: f.from, dialect: f.dialect, oldTable: f.oldTable}
	l, err := layoutOf(f.layout)
	if err != nil {
		return nil, err
	}
	p.layout, p.layoutErr = l, checkGenerates(l, time.Now())
	if !l.TimeFirst() && (f.from != "tinyid" || f.floor != "" || len(f.maxIDFrom) > 0) {
		return nil, usagef("layout %s: time is not its top part, so the largest ID the old system issued is not its last: "+
			"an ID of a later tick on a lower node is smaller, so no floor bounds what each node issued and firn cannot "+
			"prove its IDs pass the old system's; firn migrate check plans a snowflake switch only for a layout with time "+
			"first (--order time,…); advance each node past its own last ID instead (firn admin advance --node N --past-id ID)", l)
	}
	if err := f.readOld(ctx, db, d, p); err != nil {
		return nil, err
	}
	if err := f.readFloor(ctx, db, d, p); err != nil {
		return nil, err
	}
	if err := f.checkNodeTable(ctx, db, d, p); err != nil {
		return nil, err
	}
	p.reserveNodes()
	p.config = f.configSnippet(p)
	return p, nil
}

// readOld reads the old system's tables and the privileges firn needs.
func (f *migrateFlags) readOld(ctx context.Context, db *sql.DB, d sqlstore.Dialect, p *migratePlan) error {
	var mode sqlstore.Mode
	var tables sqlstore.Tables
	var segs segment.Store
	var err error
	switch f.from {
	case "leaf":
		mode, tables = sqlstore.ModeLeaf, sqlstore.Tables{Leaf: f.oldTable}
		segs, err = sqlstore.NewSegments(db, d, sqlstore.SegmentOptions{Table: f.oldTable, NoCreate: true, Denied: deniedSQL, Missing: missingSQL})
		p.unknown = append(p.unknown, "Leaf's snowflake mode: its workers' IDs and last timestamps live in ZooKeeper "+
			"(leaf.snowflake.zk.address, /snowflake/{leaf.name}/forever), not in this database: name the node IDs its workers hold "+
			"in registry.reserved_nodes, and give --floor or --max-id-from for its IDs")
	case "tinyid":
		mode, tables = sqlstore.ModeTinyid, sqlstore.Tables{Tinyid: f.oldTable, TinyidTokens: f.tokenTable}
		segs, err = sqlstore.NewTinyid(db, d, sqlstore.TinyidOptions{Table: f.oldTable, NoCreate: true, Denied: deniedSQL, Missing: missingSQL})
		if err == nil {
			p.tokenBizTypes, err = sqlstore.TokenBizTypes(ctx, db, d, f.tokenTable)
		}
	case "uid-generator":
		p.workers, err = sqlstore.WorkerNodes(ctx, db, d, f.oldTable)
		if err == nil && d == sqlstore.MySQL {
			var c sqlstore.PrivilegeCheck
			c, err = sqlstore.CheckWorkerNodeFence(ctx, db, d, f.oldTable, p.fenceAt(), deniedSQL, duplicateColumnSQL)
			p.privileges = append(p.privileges, c)
		}
		if d != sqlstore.MySQL {
			p.unknown = append(p.unknown, fmt.Sprintf("uid-generator's restarts on PostgreSQL: uid-generator ships WORKER_NODE for "+
				"MySQL only, so firn moves no counter here and --apply is refused; move the counter of %s.ID to %d or above by hand "+
				"before switching, or a uid-generator process that starts takes a node firn serves", f.oldTable, p.fenceAt()))
		}
		p.unknown = append(p.unknown,
			"uid-generator's bits and epoch: they live in its Spring configuration (timeBits, workerBits, seqBits, epochStr of "+
				"DefaultUidGenerator or CachedUidGenerator), not in this database: the layout flags say them, checked against the floor",
			"CachedUidGenerator issues ahead of the clock (its ring buffer borrows future seconds), so the current time is no floor: "+
				"give --floor or --max-id-from")
	}
	if err != nil {
		return fmt.Errorf("read the %s tables: %w", f.from, err)
	}
	if segs != nil {
		p.tags, err = segs.Tags(ctx)
		if f.from == "leaf" && missingSQL(err) {
			// Leaf in snowflake mode only (leaf.segment.enable=false)
			// has no segment table: no segments, still a snowflake plan.
			p.noSegments = true
			return nil
		}
		if err != nil {
			return fmt.Errorf("read %s: %w", f.oldTable, err)
		}
		p.privileges, err = sqlstore.CheckPrivileges(ctx, db, d, mode, tables, deniedSQL)
	}
	return err
}

// checkNodeTable checks the privileges of the node table when the
// registry is this database and snowflake IDs will be served.
func (f *migrateFlags) checkNodeTable(ctx context.Context, db *sql.DB, d sqlstore.Dialect, p *migratePlan) error {
	if f.stores.kind != f.dialect || f.stores.dsn != f.dsn || p.floor == 0 {
		return nil
	}
	checks, err := sqlstore.CheckPrivileges(ctx, db, d, sqlstore.ModeNodes, sqlstore.Tables{Nodes: f.stores.table}, deniedSQL)
	p.privileges = append(p.privileges, checks...)
	return err
}

// readFloor takes the floor from --floor and --max-id-from, and decodes
// it with the old layout.
func (f *migrateFlags) readFloor(ctx context.Context, db *sql.DB, d sqlstore.Dialect, p *migratePlan) error {
	if f.floor != "" {
		v, err := strconv.ParseUint(f.floor, 10, 63)
		if err != nil || v == 0 {
			return usagef("--floor %q: want a positive ID", f.floor)
		}
		p.floor, p.floorFrom = v, []string{"--floor"}
		p.check("--floor", v)
	}
	for _, tc := range f.maxIDFrom {
		table, col, ok := strings.Cut(tc, ".")
		if !ok {
			return usagef("--max-id-from %q: want TABLE.COLUMN", tc)
		}
		v, found, err := sqlstore.MaxID(ctx, db, d, table, col)
		if err != nil {
			return err
		}
		if !found || v <= 0 {
			p.unknown = append(p.unknown, "MAX("+col+") FROM "+table+": the table holds no ID")
			continue
		}
		p.check("MAX("+col+") FROM "+table, uint64(v))
		if uint64(v) > p.floor {
			p.floor = uint64(v)
		}
		p.floorFrom = append(p.floorFrom, "MAX("+col+") FROM "+table)
	}
	if p.floor == 0 && f.from != "tinyid" {
		p.unknown = append(p.unknown, "the floor: no --floor or --max-id-from given, so firn cannot prove its snowflake IDs "+
			"pass the old system's; the configuration leaves snowflake off")
	}
	return nil
}

// check decodes id with the old layout and judges whether it is one of
// its IDs: a time after the epoch and at most a day ahead of now, and for
// uid-generator a worker its table assigned.
func (p *migratePlan) check(what string, id uint64) {
	s := sampleCheck{what: what, id: id}
	parts, err := p.layout.Decompose(id)
	s.parts = parts
	now := time.Now()
	switch {
	case err != nil:
		s.verdict = fmt.Sprintf("does not fit the %d-bit layout %s: another layout?", p.layout.Bits(), p.layout.Name)
	case parts.Time.After(now.Add(24 * time.Hour)):
		s.verdict = fmt.Sprintf("decodes to %s, over a day ahead of now: another layout or epoch?", parts.Time.Format(timeFormat))
	case p.from == "uid-generator" && !slices.ContainsFunc(p.workers, func(w sqlstore.WorkerNode) bool { return uint64(w.ID) == parts.Node }):
		s.verdict = fmt.Sprintf("decodes to worker %d, which WORKER_NODE never assigned: another layout?", parts.Node)
	}
	p.samples = append(p.samples, s)
}

// reserveNodes lists the node IDs the old system may still hold, and the
// node firn takes first.
func (p *migratePlan) reserveNodes() {
	for _, w := range p.workers {
		if w.ID >= 0 && uint64(w.ID) <= p.layout.MaxNode() {
			p.reserved = append(p.reserved, uint64(w.ID))
		}
	}
	for p.firstNode <= p.layout.MaxNode() && slices.Contains(p.reserved, p.firstNode) {
		p.firstNode++
	}
}

// floorTicks returns the tick after the floor's, from which firn issues,
// and the least ID of that tick.
func (p *migratePlan) floorTicks() (tick uint64, least uint64, err error) {
	parts, err := p.layout.Decompose(p.floor)
	if err != nil {
		return 0, 0, err
	}
	least, err = p.layout.Compose(parts.Tick+1, 0, 0)
	return parts.Tick + 1, least, err
}

// fenceAt is the AUTO_INCREMENT --apply gives uid-generator's table: the
// layout's last node + 1.
func (p *migratePlan) fenceAt() uint64 { return p.layout.MaxNode() + 1 }

// applyFloor records the floor: for uid-generator, WORKER_NODE's
// AUTO_INCREMENT moves past the layout's last node first (fenceWorkers);
// then the HWM of the reserved nodes and of the --nodes lowest others
// moves past the floor, as firn admin advance --past-id.
func (f *migrateFlags) applyFloor(ctx context.Context, p *migratePlan, db *sql.DB, d sqlstore.Dialect) (err error) {
	switch {
	case p.floor == 0:
		return usagef("--apply needs a floor (--floor or --max-id-from): without one firn cannot prove its IDs pass the old system's; nothing written")
	case p.layoutErr != nil:
		return p.layoutErr
	}
	if bad := slices.IndexFunc(p.samples, func(s sampleCheck) bool { return s.verdict != "" }); bad >= 0 {
		s := p.samples[bad]
		return usagef("--apply: %s %d %s; nothing written", s.what, s.id, s.verdict)
	}
	parts, err := p.layout.Decompose(p.floor)
	if err != nil {
		return usagef("--apply: the floor %d does not fit layout %s", p.floor, p.layout.Name)
	}
	if err := f.fenceWorkers(ctx, p, db, d); err != nil {
		return err
	}
	hwm := parts.Time.Add(p.layout.Tick).UnixMilli()
	sf := f.stores
	if sf.kind == "local" || sf.kind == "etcd" {
		sf.dsn = "" // the old database's, not the registry's
	}
	store, closeStore, err := sf.open()
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, closeStore()) }()
	nodes := slices.Clone(p.reserved)
	for n := uint64(0); n <= p.layout.MaxNode() && len(nodes) < len(p.reserved)+f.nodes; n++ {
		if !slices.Contains(p.reserved, n) {
			nodes = append(nodes, n)
		}
	}
	for i, n := range nodes {
		if err := advancePast(store, p.layout, n, hwm, f.stores.dialTimeout); err != nil {
			done := "no node advanced yet"
			if i > 0 {
				done = fmt.Sprintf("nodes %v already advanced (moving an HWM forward again is harmless)", nodes[:i])
			}
			hint := ""
			if errors.Is(err, nodeid.ErrNodeHeld) {
				hint = "; stop the process holding it first (it keeps issuing below any new HWM), then run --apply again"
			}
			return fmt.Errorf("--apply, node %d (%s): %w%s; %s", n, sf.describe(), err, hint, done)
		}
	}
	p.applied = append(p.applied, fmt.Sprintf("the HWM of %s in %s is at least %s, past the floor %d",
		plural(len(nodes), "node"), sf.describe(), time.UnixMilli(hwm).UTC().Format(timeFormat), p.floor))
	return nil
}

// fenceWorkers moves uid-generator's WORKER_NODE AUTO_INCREMENT past the
// layout's last node, before any HWM: DisposableWorkerIdAssigner gives
// every start the next AUTO_INCREMENT as its worker ID, so an old process
// that restarts during the switch would otherwise take a node firn
// serves; past the last node, DefaultUidGenerator refuses to start.
func (f *migrateFlags) fenceWorkers(ctx context.Context, p *migratePlan, db *sql.DB, d sqlstore.Dialect) error {
	if f.from != "uid-generator" {
		return nil
	}
	if d != sqlstore.MySQL {
		return usagef("--apply --from uid-generator: %s; nothing written", sqlstore.ErrFenceDialect)
	}
	ctx, cancel := context.WithTimeout(ctx, 2*f.stores.dialTimeout)
	defer cancel()
	if err := sqlstore.FenceWorkerNodes(ctx, db, d, f.oldTable, p.fenceAt(), deniedSQL); err != nil {
		return fmt.Errorf("--apply (%s): %w; nothing written", redact(f.dialect, f.dsn), err)
	}
	p.applied = append(p.applied, fmt.Sprintf("the AUTO_INCREMENT of %s is %d: a uid-generator process that starts now is given "+
		"worker %d or above, past the layout's last node %d, and refuses to start", f.oldTable, p.fenceAt(), p.fenceAt(), p.layout.MaxNode()))
	return nil
}

// advancePast raises node's HWM to hwm (nodeid.Store.Advance, as firn
// admin advance). A namespace never used has no layout recorded, so
// Advance refuses it: one claim of the node, released at once, records
// it first.
func advancePast(store nodeid.Store, l snowflake.Layout, node uint64, hwm int64, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*timeout)
	defer cancel()
	req := nodeid.AdvanceRequest{Node: node, HWM: hwm, Layout: spaceID(l, nil), Pool: l.MaxNode() + 1}
	_, err := store.Advance(ctx, req)
	if errors.Is(err, nodeid.ErrUnknownNamespace) {
		c, cerr := store.Claim(ctx, nodeid.ClaimRequest{Node: node, Pool: req.Pool, Layout: req.Layout, TTL: time.Second})
		if cerr != nil {
			return cerr
		}
		if rerr := store.Release(ctx, c); rerr != nil {
			return rerr
		}
		_, err = store.Advance(ctx, req)
	}
	return err
}
