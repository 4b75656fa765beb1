package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/firn-id/firn/segment"
)

// TinyidOptions configures Tinyid. The zero value means the defaults.
type TinyidOptions struct {
	// Table is Tinyid's table. Default "tiny_id_info".
	Table string
	// NoCreate stops the store from creating the table on first use.
	NoCreate bool
}

// Tinyid is a segment.Store on Didi Tinyid's tiny_id_info table, read and
// written as Tinyid does: a reservation moves max_id by the step under an
// optimistic check of version (READ COMMITTED), and the range is
// (old max_id, new max_id] restricted to the IDs equal to remainder modulo
// delta. Its delta and remainder columns let several databases serve one
// tag (segment.Multi).
type Tinyid struct {
	db      *sql.DB
	dialect Dialect
	opt     TinyidOptions
	own     bool   // firn's own table: Tinyid's columns plus set and description
	set     string // the store set this store belongs to (own table only)
	c       classifier

	schema schemaOnce
	column columnOnce // own table: the opaque column, added to a table made before it
	kind   kindOnce   // Tinyid's format: the table is not firn's own
}

// NewTinyid returns a Tinyid store on db. It does no I/O.
func NewTinyid(db *sql.DB, d Dialect, opt TinyidOptions) (*Tinyid, error) {
	if opt.Table == "" {
		opt.Table = "tiny_id_info"
	}
	if err := checkTable(opt.Table); err != nil {
		return nil, err
	}
	if d != Postgres && d != MySQL {
		return nil, fmt.Errorf("sqlstore: unknown dialect %d", d)
	}
	c := classifier{db: db, d: d, mode: ModeTinyid, tables: Tables{Tinyid: opt.Table}}
	return &Tinyid{db: db, dialect: d, opt: opt, c: c}, nil
}

// TinyidSchema returns the DDL of Tinyid's table: Tinyid's own for MySQL,
// its equivalent for PostgreSQL.
func TinyidSchema(d Dialect, table string) (string, error) {
	if err := checkTable(table); err != nil {
		return "", err
	}
	var ddl string
	switch d {
	case MySQL:
		ddl = "CREATE TABLE IF NOT EXISTS `{t}` (\n" +
			"  `id` bigint(20) unsigned NOT NULL AUTO_INCREMENT,\n" +
			"  `biz_type` varchar(63) NOT NULL DEFAULT '',\n" +
			"  `begin_id` bigint(20) NOT NULL DEFAULT '0',\n" +
			"  `max_id` bigint(20) NOT NULL DEFAULT '0',\n" +
			"  `step` int(11) DEFAULT '0',\n" +
			"  `delta` int(11) NOT NULL DEFAULT '1',\n" +
			"  `remainder` int(11) NOT NULL DEFAULT '0',\n" +
			"  `create_time` timestamp NOT NULL DEFAULT '2010-01-01 00:00:00',\n" +
			"  `update_time` timestamp NOT NULL DEFAULT '2010-01-01 00:00:00',\n" +
			"  `version` bigint(20) NOT NULL DEFAULT '0',\n" +
			"  PRIMARY KEY (`id`),\n" +
			"  UNIQUE KEY `uniq_biz_type` (`biz_type`)\n" +
			") ENGINE=InnoDB DEFAULT CHARSET=utf8;\n"
	case Postgres:
		ddl = `CREATE TABLE IF NOT EXISTS {t} (
    id          BIGSERIAL    PRIMARY KEY,
    biz_type    VARCHAR(63)  NOT NULL DEFAULT '' UNIQUE,
    begin_id    BIGINT       NOT NULL DEFAULT 0,
    max_id      BIGINT       NOT NULL DEFAULT 0,
    step        INT          DEFAULT 0,
    delta       INT          NOT NULL DEFAULT 1,
    remainder   INT          NOT NULL DEFAULT 0,
    create_time TIMESTAMP    NOT NULL DEFAULT '2010-01-01 00:00:00',
    update_time TIMESTAMP    NOT NULL DEFAULT '2010-01-01 00:00:00',
    version     BIGINT       NOT NULL DEFAULT 0
);
`
	default:
		return "", fmt.Errorf("sqlstore: unknown dialect %d", d)
	}
	return strings.ReplaceAll(ddl, "{t}", table), nil
}

func (s *Tinyid) q(query string) string {
	return rebind(s.dialect, strings.ReplaceAll(query, "{t}", s.opt.Table))
}

// Limits implements segment.Limiter: biz_type varchar(63); firn's own
// table keeps a description varchar(256), Tinyid's none. On MySQL the
// table's charset is utf8 (utf8mb3): no character above U+FFFF.
func (s *Tinyid) Limits() segment.Limits {
	l := segment.Limits{Tag: 63, BMP: s.dialect == MySQL}
	if s.own {
		l.Description = 256
	}
	return l
}

// where returns the condition on biz_type that matches tag byte for byte.
func (s *Tinyid) where(tag string) (string, []any) { return tagIs(s.dialect, "biz_type", tag) }

func (s *Tinyid) ensureSchema(ctx context.Context) error {
	ddl, _ := TinyidSchema(s.dialect, s.opt.Table)
	if s.own {
		ddl, _ = SetSchema(s.dialect, s.opt.Table)
	}
	if err := s.schema.ensure(ctx, s.c, s.opt.NoCreate, []string{s.opt.Table}, ddl); err != nil {
		return err
	}
	if !s.own {
		return s.kind.ensure(ctx, s.c, s.opt.Table)
	}
	return s.column.ensure(ctx, s.c, s.opt.Table, "opaque", "VARCHAR(64) NOT NULL DEFAULT ''")
}

type tinyRow struct {
	maxID, step, delta, remainder, version int64
	description, set                       string
	setSize                                int64
	opaque                                 string
}

// extraColumns are the columns of firn's own table.
func (s *Tinyid) extraColumns() string {
	if s.own {
		return ", COALESCE(description, ''), set_name, set_size, opaque"
	}
	return ", '', '', 0, ''"
}

func (s *Tinyid) read(ctx context.Context, tag string) (tinyRow, error) {
	var r tinyRow
	if err := segment.CheckTag(tag, s.Limits()); err != nil {
		return r, err
	}
	cond, args := s.where(tag)
	err := s.db.QueryRowContext(ctx, s.q("SELECT max_id, COALESCE(step, 0), delta, remainder, version"+s.extraColumns()+" FROM {t} WHERE "+cond), args...).
		Scan(&r.maxID, &r.step, &r.delta, &r.remainder, &r.version, &r.description, &r.set, &r.setSize, &r.opaque)
	if errors.Is(err, sql.ErrNoRows) {
		return r, segment.ErrUnknownTag
	}
	if err != nil {
		return r, fmt.Errorf("read tag %q: %w", tag, s.c.wrap(ctx, err, s.opt.Table, "SELECT"))
	}
	if err := segment.CheckResidue(r.delta, r.remainder); err != nil {
		return r, fmt.Errorf("read tag %q: %w: fix the row in %s (delta: the number of stores serving the tag, 1 alone; remainder: 0 to delta-1, this store's class)", tag, err, s.opt.Table)
	}
	return r, nil
}

// firstAfter returns the least ID above after that is remainder modulo
// delta: the first ID Tinyid issues from a row whose max_id is after.
func firstAfter(after, delta, remainder int64) int64 {
	id := after + 1
	return id + ((remainder-id%delta)%delta+delta)%delta
}

// Reserve implements segment.Store as Tinyid's getNextSegmentId does:
// read the row, then move max_id by step where version is still as read,
// retrying a lost race.
func (s *Tinyid) Reserve(ctx context.Context, tag string, step int64) (segment.Range, error) {
	if step < 1 {
		return segment.Range{}, fmt.Errorf("reserve %q: step %d under 1", tag, step)
	}
	if err := s.ensureSchema(ctx); err != nil {
		return segment.Range{}, err
	}
	for {
		r, err := s.read(ctx, tag)
		if err != nil {
			return segment.Range{}, err
		}
		// The range is (max_id, max_id+step]: IDs max_id+1 … max_id+step.
		if err := segment.CanReserve(r.maxID+1, step); err != nil {
			return segment.Range{}, fmt.Errorf("reserve %q: %w", tag, err)
		}
		cond, args := s.where(tag)
		args = append(append([]any{r.maxID + step}, args...), r.maxID, r.version)
		// update_time from the database's own clock, as Tinyid writes it
		// (TinyIdInfoDAOImpl.updateMaxId: update_time=now()).
		res, err := s.db.ExecContext(ctx, s.q("UPDATE {t} SET max_id = ?, update_time = now(), version = version + 1 WHERE "+cond+" AND max_id = ? AND version = ?"), args...)
		if err != nil {
			return segment.Range{}, fmt.Errorf("reserve %q: %w", tag, s.c.wrap(ctx, err, s.opt.Table, "UPDATE"))
		}
		if n, err := res.RowsAffected(); err != nil {
			return segment.Range{}, fmt.Errorf("reserve %q: %w", tag, err)
		} else if n == 1 {
			return segment.Range{Start: firstAfter(r.maxID, r.delta, r.remainder), End: r.maxID + step + 1, Delta: r.delta,
				Step: r.step, Set: r.set, SetSize: r.setSize, Opaque: r.opaque}, nil
		}
		if err := ctx.Err(); err != nil {
			return segment.Range{}, err
		}
	}
}

// Tag implements segment.Store.
func (s *Tinyid) Tag(ctx context.Context, tag string) (segment.TagInfo, error) {
	if err := s.ensureSchema(ctx); err != nil {
		return segment.TagInfo{}, err
	}
	r, err := s.read(ctx, tag)
	if err != nil {
		return segment.TagInfo{}, err
	}
	return segment.TagInfo{Tag: tag, Next: firstAfter(r.maxID, r.delta, r.remainder), Step: r.step, Delta: r.delta, Remainder: r.remainder,
		Description: r.description, Set: r.set, SetSize: r.setSize, Opaque: r.opaque}, nil
}

// Tags implements segment.Store.
func (s *Tinyid) Tags(ctx context.Context) ([]segment.TagInfo, error) {
	if err := s.ensureSchema(ctx); err != nil {
		return nil, err
	}
	rows, err := s.db.QueryContext(ctx, s.q("SELECT biz_type, max_id, COALESCE(step, 0), delta, remainder"+s.extraColumns()+" FROM {t} ORDER BY biz_type"))
	if err != nil {
		return nil, fmt.Errorf("list tags: %w", s.c.wrap(ctx, err, s.opt.Table, "SELECT"))
	}
	defer rows.Close()
	var out []segment.TagInfo
	for rows.Next() {
		var t segment.TagInfo
		var maxID int64
		if err := rows.Scan(&t.Tag, &maxID, &t.Step, &t.Delta, &t.Remainder, &t.Description, &t.Set, &t.SetSize, &t.Opaque); err != nil {
			return nil, fmt.Errorf("list tags: %w", err)
		}
		if segment.CheckResidue(t.Delta, t.Remainder) == nil {
			t.Next = firstAfter(maxID, t.Delta, t.Remainder)
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

// CreateTag implements segment.Store: one store, delta 1.
func (s *Tinyid) CreateTag(ctx context.Context, tag string, first, step int64, description string) error {
	return s.CreateTagResidue(ctx, tag, first, step, 1, 0, description)
}

// Collides implements segment.Collider: the row the table's collation
// matches tag to, if any (on MySQL "Order" matches "order").
func (s *Tinyid) Collides(ctx context.Context, tag string) (string, bool, error) {
	if err := s.ensureSchema(ctx); err != nil {
		return "", false, err
	}
	var row string
	err := s.db.QueryRowContext(ctx, s.q("SELECT biz_type FROM {t} WHERE biz_type = ?"), tag).Scan(&row)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return "", false, nil
	case err != nil:
		return "", false, fmt.Errorf("tag %q: %w", tag, s.c.wrap(ctx, err, s.opt.Table, "SELECT"))
	}
	return row, true, nil
}

// CreateTagResidue implements segment.ResidueCreator: a row whose first ID
// is the least at or after first that is remainder modulo delta. Tinyid's
// table has no description column and keeps none; firn's own also records
// the store set, of delta stores. The values are checked against the
// columns first (segment.CheckCreate), and MySQL inserts strictly: nothing
// is truncated.
func (s *Tinyid) CreateTagResidue(ctx context.Context, tag string, first, step, delta, remainder int64, description string) error {
	return s.CreateTagOpaque(ctx, tag, first, step, delta, remainder, description, "")
}

// CreateTagOpaque implements segment.OpaqueCreator on firn's own table,
// which records the permutation in its opaque column. Tinyid's table has
// no such column: an opaque tag there is refused
// (segment.ErrOpaqueUnsupported).
func (s *Tinyid) CreateTagOpaque(ctx context.Context, tag string, first, step, delta, remainder int64, description, permutation string) error {
	if err := segment.CheckCreate(tag, first, step, description, s.Limits()); err != nil {
		return err
	}
	if err := segment.CheckRecorded(permutation); err != nil {
		return err
	}
	if permutation != "" && !s.own {
		return &segment.TagError{Tag: tag, Err: segment.Errorf(segment.ErrOpaqueUnsupported, " (Tinyid's table %s)", s.opt.Table)}
	}
	if err := segment.CheckResidue(delta, remainder); err != nil {
		return fmt.Errorf("create tag %q: %w: %w", tag, err, segment.ErrInvalid)
	}
	if err := s.ensureSchema(ctx); err != nil {
		return err
	}
	insert := "INSERT INTO {t} (biz_type, begin_id, max_id, step, delta, remainder, create_time, update_time, version) VALUES (?, ?, ?, ?, ?, ?, now(), now(), 0)"
	if s.dialect == Postgres {
		insert += " ON CONFLICT DO NOTHING"
	}
	args := []any{tag, first - 1, first - 1, step, delta, remainder}
	if s.own {
		insert = strings.Replace(insert, "version)", "version, description, set_name, set_size, opaque)", 1)
		insert = strings.Replace(insert, "now(), 0)", "now(), 0, ?, ?, ?, ?)", 1)
		args = append(args, description, s.set, delta, permutation)
	}
	res, err := execStrict(ctx, s.db, s.dialect, s.q(insert), args...)
	if err != nil {
		return createErr(ctx, s.db, s.q("SELECT biz_type FROM {t} WHERE biz_type = ?"), tag, s.c, s.opt.Table, err)
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		return segment.ErrTagExists
	}
	return err
}

// SetStep implements segment.Store, for a step of 1 to segment.StepLimit.
func (s *Tinyid) SetStep(ctx context.Context, tag string, step int64) error {
	if err := segment.CheckStep(step); err != nil {
		return err
	}
	return s.update(ctx, tag, "step = ?", step)
}

// Advance implements segment.Store: max_id moves to at least next-1 (the
// next ID is then at least next), never back.
func (s *Tinyid) Advance(ctx context.Context, tag string, next int64) (int64, error) {
	if err := s.update(ctx, tag, "max_id = GREATEST(max_id, ?)", next-1); err != nil {
		return 0, err
	}
	t, err := s.Tag(ctx, tag)
	return t.Next, err
}

// Reclass implements segment.Reclasser in one UPDATE of the row, where
// it still holds from's delta, remainder and next ID. The row keeps the
// last ID issued (max_id), not the next: from's next ID is read from
// every max_id in from.Next-from.Delta … from.Next-1 (firstAfter), so
// the condition is that window, and the write sets max_id to next-1.
//
// Tinyid's servers read the row too (didi/tinyid at 49976d3):
//   - TinyIdInfoDAOImpl.java:36-40 moves max_id only "where id=? and
//     max_id=? and version=?", and DbSegmentIdServiceImpl.java:44-60
//     reads the row again when it loses. Reclass adds one to version, so a
//     server that read the row before it, even at the same max_id, cuts no
//     segment of the old class from it after it.
//   - DbSegmentIdServiceImpl.java:65-70 (convert) cuts the segment
//     (max_id, max_id+step] of the delta and remainder of the same read,
//     and SegmentId.java:30-57 (init, nextId) issues from the least ID
//     above max_id of that class: with max_id = next-1 that is next, then
//     next+delta, … IDs of the new class only, none below next.
//
// A segment a Tinyid server (or firn) cut before the reclass ends at or
// below the max_id the window matched, under from.Next, so under next: it
// may still be issued from memory after the reclass, and repeats nothing.
func (s *Tinyid) Reclass(ctx context.Context, tag string, from segment.TagInfo, delta, remainder, next, step int64) error {
	if err := segment.CheckTag(tag, s.Limits()); err != nil {
		return err
	}
	if err := segment.CheckReclass(from, delta, remainder, next, step); err != nil {
		return fmt.Errorf("reclass tag %q: %w", tag, err)
	}
	if err := s.ensureSchema(ctx); err != nil {
		return err
	}
	cond, args := s.where(tag)
	set, vals := "delta = ?, remainder = ?, max_id = ?, step = ?", []any{delta, remainder, next - 1, step}
	if s.own { // firn's own rows record their class's delta as the set's size
		set, vals = set+", set_size = ?", append(vals, delta)
	}
	args = append(append(vals, args...), from.Delta, from.Remainder, from.Next-from.Delta, from.Next-1)
	res, err := s.db.ExecContext(ctx, s.q("UPDATE {t} SET "+set+", update_time = now(), version = version + 1 WHERE "+cond+
		" AND delta = ? AND remainder = ? AND max_id BETWEEN ? AND ?"), args...)
	if err != nil {
		return fmt.Errorf("reclass tag %q: %w", tag, s.c.wrap(ctx, err, s.opt.Table, "UPDATE"))
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("reclass tag %q: %w", tag, err)
	} else if n == 1 {
		return nil
	}
	r, err := s.read(ctx, tag)
	if err != nil {
		return err
	}
	return fmt.Errorf("reclass tag %q: %w", tag, segment.Errorf(segment.ErrReclassed, ": the row holds %d mod %d from %d, not %d mod %d from %d",
		r.remainder, r.delta, firstAfter(r.maxID, r.delta, r.remainder), from.Remainder, from.Delta, from.Next))
}

func (s *Tinyid) update(ctx context.Context, tag, set string, v int64) error {
	if err := segment.CheckTag(tag, s.Limits()); err != nil {
		return err
	}
	if err := s.ensureSchema(ctx); err != nil {
		return err
	}
	cond, args := s.where(tag)
	res, err := execStrict(ctx, s.db, s.dialect, s.q("UPDATE {t} SET "+set+", version = version + 1 WHERE "+cond), append([]any{v}, args...)...)
	if err != nil {
		return fmt.Errorf("update tag %q: %w", tag, s.c.wrap(ctx, err, s.opt.Table, "UPDATE"))
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		return segment.ErrUnknownTag
	}
	return nil
}
