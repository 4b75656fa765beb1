package migrate

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/firn-id/firn/segment"
	"github.com/firn-id/firn/snowflake"
	"github.com/firn-id/firn/sqlstore"
)

// A System is a previous system firn migrates from.
type System string

const (
	// Leaf is Meituan Leaf: segments in leaf_alloc, snowflake workers in
	// ZooKeeper.
	Leaf System = "leaf"
	// Tinyid is Didi Tinyid: segments in tiny_id_info, tokens in
	// tiny_id_token.
	Tinyid System = "tinyid"
	// UIDGenerator is Baidu uid-generator: one WORKER_NODE row per start,
	// whose ID is that process's worker ID.
	UIDGenerator System = "uid-generator"
)

// Systems lists the systems, in the order messages name them.
var Systems = []System{Leaf, Tinyid, UIDGenerator}

// systems holds each system's default table and snowflake layout preset,
// and the segment format firn serves its table with ("": none).
var systems = map[System]struct{ table, layout, format string }{
	Leaf:         {"leaf_alloc", "twitter", "leaf"},
	Tinyid:       {"tiny_id_info", "", "tinyid"},
	UIDGenerator: {"WORKER_NODE", "baidu", ""},
}

// Known reports whether s is one of Systems.
func (s System) Known() bool { _, ok := systems[s]; return ok }

// Table is the system's own table: leaf_alloc, tiny_id_info or
// WORKER_NODE.
func (s System) Table() string { return systems[s].table }

// Layout names the preset of the system's snowflake layout, twitter for
// Leaf and baidu for uid-generator; "" for Tinyid, which has none.
func (s System) Layout() string { return systems[s].layout }

// Format is the segment format (segments.format) firn serves the system's
// table with, leaf or tinyid; "" for uid-generator, which has no segments.
func (s System) Format() string { return systems[s].format }

// Column is a column of a table in the old system's database that holds
// IDs it issued.
type Column struct {
	Table, Column string
}

// ParseColumn reads TABLE.COLUMN, as Options.MaxIDFrom names a column.
func ParseColumn(s string) (Column, error) {
	table, col, ok := strings.Cut(s, ".")
	if !ok || table == "" || col == "" {
		return Column{}, fmt.Errorf("%q: want TABLE.COLUMN", s)
	}
	return Column{Table: table, Column: col}, nil
}

// ParseFloor reads Options.Floor, a positive decimal ID below 2^63;
// the empty string is 0, no floor given.
func ParseFloor(s string) (uint64, error) {
	if s == "" {
		return 0, nil
	}
	v, err := strconv.ParseUint(s, 10, 63)
	if err != nil || v == 0 {
		return 0, fmt.Errorf("%q: want a positive ID below 2^63", s)
	}
	return v, nil
}

// Options says what Check reads.
type Options struct {
	// From is the previous system.
	From System
	// Dialect is its database's.
	Dialect sqlstore.Dialect
	// OldTable is its table; default From.Table().
	OldTable string
	// TokenTable is Tinyid's token table; default tiny_id_token.
	TokenTable string
	// Layout is the previous system's snowflake layout.
	Layout snowflake.Layout
	// LayoutErr says why firn cannot issue IDs in Layout (decode-only,
	// or its time has run out), nil if it can: the caller's check, the
	// one firn serve makes. Apply refuses such a layout.
	LayoutErr error
	// Floor is the largest snowflake ID the previous system issued, as
	// the operator knows it; 0: not given.
	Floor uint64
	// MaxIDFrom are columns whose largest value is a floor too: the plan
	// takes the largest of them and Floor.
	MaxIDFrom []Column
	// RegistryHere is set when the registry Apply writes to is the node
	// table NodeTable in this same database: Check then checks its
	// privileges too, when there is a floor to record.
	RegistryHere bool
	// NodeTable is the registry's node table; default firn_nodes.
	NodeTable string
}

// Plan is what Check found in the previous system's database and what
// firn will do from it.
type Plan struct {
	// From, Dialect, OldTable and TokenTable are the options the plan was
	// made with, defaults filled in.
	From       System
	Dialect    sqlstore.Dialect
	OldTable   string
	TokenTable string
	// Privileges are the statements firn serve (and Apply) will run, each
	// tried with a statement that changes no row.
	Privileges []sqlstore.PrivilegeCheck
	// Tags are the segment rows firn will serve.
	Tags []segment.TagInfo
	// NoSegments is set for a Leaf with no segment table (one that runs
	// in snowflake mode only).
	NoSegments bool
	// TokenBizTypes are the bizTypes Tinyid's tokens cover, sorted.
	TokenBizTypes []string
	// Workers are uid-generator's WORKER_NODE rows.
	Workers []WorkerNode
	// Layout is the previous system's layout; LayoutErr says why firn
	// cannot issue IDs in it (nil: it can).
	Layout    snowflake.Layout
	LayoutErr error
	// Floor is the largest ID the previous system issued, as far as the
	// plan knows (0: not determined); FloorFrom says where it came from.
	Floor     uint64
	FloorFrom []string
	// Samples are the floor and each MAX, decoded with Layout.
	Samples []Sample
	// Reserved are the node IDs the previous system may still hold.
	Reserved []uint64
	// FirstNode is the node firn takes first: the lowest not reserved.
	FirstNode uint64
	// Unknown lists what the plan could not determine, one sentence each.
	Unknown []string
	// Applied lists what Apply wrote, one sentence each.
	Applied []string
}

// Sample is one ID of the previous system decoded with its layout.
type Sample struct {
	// What names where the ID came from: "--floor" or "MAX(c) FROM t".
	What  string
	ID    uint64
	Parts snowflake.Parts
	// Verdict is "" when the ID is plausibly one of the layout's, and
	// says why not otherwise.
	Verdict string
}

// Check reads the previous system's tables in db and works out the plan.
// It writes nothing. A layout whose time is not its top part is refused
// (*RefusedError) when a floor is to be read: no floor bounds what each
// node of such a layout issued.
func Check(ctx context.Context, db *sql.DB, o Options) (*Plan, error) {
	if !o.From.Known() {
		return nil, fmt.Errorf("migrate: unknown system %q (want leaf, tinyid or uid-generator)", o.From)
	}
	if o.OldTable == "" {
		o.OldTable = o.From.Table()
	}
	if o.TokenTable == "" {
		o.TokenTable = "tiny_id_token"
	}
	p := &Plan{From: o.From, Dialect: o.Dialect, OldTable: o.OldTable, TokenTable: o.TokenTable, Layout: o.Layout, LayoutErr: o.LayoutErr}
	l := o.Layout
	if !l.TimeFirst() && (o.From != Tinyid || o.Floor != 0 || len(o.MaxIDFrom) > 0) {
		return nil, &RefusedError{fmt.Sprintf("layout %s: time is not its top part, so the largest ID the old system issued is not its last: "+
			"an ID of a later tick on a lower node is smaller, so no floor bounds what each node issued and firn cannot "+
			"prove its IDs pass the old system's; firn migrate check plans a snowflake switch only for a layout with time "+
			"first (--order time,…); advance each node past its own last ID instead (firn admin advance --node N --past-id ID)", l)}
	}
	if err := p.readOld(ctx, db); err != nil {
		return nil, err
	}
	if err := p.readFloor(ctx, db, o); err != nil {
		return nil, err
	}
	if o.RegistryHere && p.Floor != 0 {
		checks, err := sqlstore.CheckPrivileges(ctx, db, p.Dialect, sqlstore.ModeNodes, sqlstore.Tables{Nodes: o.NodeTable})
		p.Privileges = append(p.Privileges, checks...)
		if err != nil {
			return nil, err
		}
	}
	p.reserveNodes()
	return p, nil
}

// readOld reads the previous system's tables and the privileges firn
// needs on them.
func (p *Plan) readOld(ctx context.Context, db *sql.DB) error {
	var mode sqlstore.Mode
	var tables sqlstore.Tables
	var segs segment.Store
	var err error
	d := p.Dialect
	switch p.From {
	case Leaf:
		mode, tables = sqlstore.ModeLeaf, sqlstore.Tables{Leaf: p.OldTable}
		segs, err = sqlstore.NewSegments(db, d, sqlstore.SegmentOptions{Table: p.OldTable, NoCreate: true})
		p.Unknown = append(p.Unknown, "Leaf's snowflake mode: its workers' IDs and last timestamps live in ZooKeeper "+
			"(leaf.snowflake.zk.address, /snowflake/{leaf.name}/forever), not in this database: firn migrate check --from "+
			"leaf-zookeeper takes them over (it fences Leaf off and records the reserved IDs and the floor in a ZooKeeper registry)")
	case Tinyid:
		mode, tables = sqlstore.ModeTinyid, sqlstore.Tables{Tinyid: p.OldTable, TinyidTokens: p.TokenTable}
		segs, err = sqlstore.NewTinyid(db, d, sqlstore.TinyidOptions{Table: p.OldTable, NoCreate: true})
		if err == nil {
			p.TokenBizTypes, err = sqlstore.TokenBizTypes(ctx, db, d, p.TokenTable)
		}
	case UIDGenerator:
		err = p.readWorkers(ctx, db)
	}
	if err != nil {
		return fmt.Errorf("read the %s tables: %w", p.From, err)
	}
	if segs == nil {
		return nil
	}
	p.Tags, err = segs.Tags(ctx)
	if p.From == Leaf && sqlstore.Classify(err) == sqlstore.MissingTable {
		// Leaf in snowflake mode only (leaf.segment.enable=false) has no
		// segment table: no segments, still a snowflake plan. Only a
		// table the database says is missing: an outage is an error.
		p.NoSegments = true
		return nil
	}
	if err != nil {
		return fmt.Errorf("read %s: %w", p.OldTable, err)
	}
	p.Privileges, err = sqlstore.CheckPrivileges(ctx, db, d, mode, tables)
	return err
}

// readWorkers reads uid-generator's WORKER_NODE and, on MySQL, checks the
// privileges Apply's fence needs (ALTER, and INSERT for the row that
// holds it).
func (p *Plan) readWorkers(ctx context.Context, db *sql.DB) error {
	var err error
	p.Workers, err = WorkerNodes(ctx, db, p.Dialect, p.OldTable)
	if err == nil && p.Dialect == sqlstore.MySQL {
		var c sqlstore.PrivilegeCheck
		c, err = CheckWorkerNodeFence(ctx, db, p.Dialect, p.OldTable, p.FenceAt())
		p.Privileges = append(p.Privileges, c)
	}
	if p.Dialect != sqlstore.MySQL {
		p.Unknown = append(p.Unknown, fmt.Sprintf("uid-generator's restarts on PostgreSQL: uid-generator ships WORKER_NODE for "+
			"MySQL only, so firn moves no counter here and --apply is refused; move the counter of %s.ID to %d or above by hand "+
			"before switching, or a uid-generator process that starts takes a node firn serves", p.OldTable, p.FenceAt()))
	}
	p.Unknown = append(p.Unknown,
		"uid-generator's bits and epoch: they live in its Spring configuration (timeBits, workerBits, seqBits, epochStr of "+
			"DefaultUidGenerator or CachedUidGenerator), not in this database: the layout flags say them, checked against the floor",
		"CachedUidGenerator issues ahead of the clock (its ring buffer borrows future seconds), so the current time is no floor: "+
			"give --floor or --max-id-from")
	return err
}

// readFloor takes the floor from o.Floor and o.MaxIDFrom, and decodes
// each with the layout.
func (p *Plan) readFloor(ctx context.Context, db *sql.DB, o Options) error {
	if o.Floor != 0 {
		p.Floor, p.FloorFrom = o.Floor, []string{"--floor"}
		p.check("--floor", o.Floor)
	}
	for _, c := range o.MaxIDFrom {
		v, found, err := MaxID(ctx, db, p.Dialect, c.Table, c.Column)
		if err != nil {
			return err
		}
		what := "MAX(" + c.Column + ") FROM " + c.Table
		if !found || v <= 0 {
			p.Unknown = append(p.Unknown, what+": the table holds no ID")
			continue
		}
		p.check(what, uint64(v))
		p.Floor = max(p.Floor, uint64(v))
		p.FloorFrom = append(p.FloorFrom, what)
	}
	if p.Floor == 0 && p.From != Tinyid {
		p.Unknown = append(p.Unknown, "the floor: no --floor or --max-id-from given, so firn cannot prove its snowflake IDs "+
			"pass the old system's; the configuration leaves snowflake off")
	}
	return nil
}

// check decodes id with the layout and judges whether it is one of its
// IDs: a time after the epoch and at most a day ahead of now, and for
// uid-generator a worker its table assigned.
func (p *Plan) check(what string, id uint64) {
	s := Sample{What: what, ID: id}
	parts, err := p.Layout.Decompose(id)
	s.Parts = parts
	now := time.Now()
	switch {
	case err != nil:
		s.Verdict = fmt.Sprintf("does not fit the %d-bit layout %s: another layout?", p.Layout.Bits(), p.Layout.Name)
	case parts.Time.After(now.Add(24 * time.Hour)):
		s.Verdict = fmt.Sprintf("decodes to %s, over a day ahead of now: another layout or epoch?", parts.Time.Format(timeFormat))
	case p.From == UIDGenerator && !slices.ContainsFunc(p.Workers, func(w WorkerNode) bool { return uint64(w.ID) == parts.Node }):
		s.Verdict = fmt.Sprintf("decodes to worker %d, which WORKER_NODE never assigned: another layout?", parts.Node)
	}
	p.Samples = append(p.Samples, s)
}

// timeFormat is how the plan writes a time, as firn parse does.
const timeFormat = "2006-01-02T15:04:05.000Z"

// reserveNodes lists the node IDs the previous system may still hold,
// and the node firn takes first.
func (p *Plan) reserveNodes() {
	for _, w := range p.Workers {
		if w.ID >= 0 && uint64(w.ID) <= p.Layout.MaxNode() {
			p.Reserved = append(p.Reserved, uint64(w.ID))
		}
	}
	for p.FirstNode <= p.Layout.MaxNode() && slices.Contains(p.Reserved, p.FirstNode) {
		p.FirstNode++
	}
}

// FloorTicks returns the tick after the floor's, from which firn issues,
// and the least ID of that tick.
func (p *Plan) FloorTicks() (tick uint64, least uint64, err error) {
	parts, err := p.Layout.Decompose(p.Floor)
	if err != nil {
		return 0, 0, err
	}
	least, err = p.Layout.Compose(parts.Tick+1, 0, 0)
	return parts.Tick + 1, least, err
}

// FenceAt is the AUTO_INCREMENT Apply gives uid-generator's table, and
// the ID of the row that holds it: the layout's last node + 1.
func (p *Plan) FenceAt() uint64 { return p.Layout.MaxNode() + 1 }
