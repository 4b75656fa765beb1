package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/firn-id/firn/segment"
)

// SegmentOptions configures Segments. The zero value means the defaults.
type SegmentOptions struct {
	// Table is Leaf's segment table. Default "leaf_alloc".
	Table string
	// NoCreate stops the store from creating the table on first use.
	NoCreate bool
}

// Segments is a segment.Store on Meituan Leaf's leaf_alloc table, read and
// written as Leaf defines it, so an existing Leaf database is served as it
// is: a reservation adds the step to max_id and returns [old max_id, new
// max_id), and the next ID continues after Leaf's. Leaf's table has no
// residue-class columns, so it serves one store per tag.
type Segments struct {
	db      *sql.DB
	dialect Dialect
	opt     SegmentOptions
	c       classifier

	schema schemaOnce
}

// NewSegments returns a segment store on db. It does no I/O.
func NewSegments(db *sql.DB, d Dialect, opt SegmentOptions) (*Segments, error) {
	if opt.Table == "" {
		opt.Table = "leaf_alloc"
	}
	if err := checkTable(opt.Table); err != nil {
		return nil, err
	}
	if d != Postgres && d != MySQL {
		return nil, fmt.Errorf("sqlstore: unknown dialect %d", d)
	}
	c := classifier{db: db, d: d, mode: ModeLeaf, tables: Tables{Leaf: opt.Table}}
	return &Segments{db: db, dialect: d, opt: opt, c: c}, nil
}

// SegmentSchema returns the DDL of Leaf's table: Leaf's own for MySQL, and
// its PostgreSQL equivalent (which sets update_time in every write, having
// no ON UPDATE).
func SegmentSchema(d Dialect, table string) (string, error) {
	if err := checkTable(table); err != nil {
		return "", err
	}
	var ddl string
	switch d {
	case MySQL:
		ddl = "CREATE TABLE IF NOT EXISTS `{t}` (\n" +
			"  `biz_tag` varchar(128) NOT NULL DEFAULT '',\n" +
			"  `max_id` bigint(20) NOT NULL DEFAULT '1',\n" +
			"  `step` int(11) NOT NULL,\n" +
			"  `description` varchar(256) DEFAULT NULL,\n" +
			"  `update_time` timestamp NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP,\n" +
			"  PRIMARY KEY (`biz_tag`)\n" +
			") ENGINE=InnoDB;\n"
	case Postgres:
		ddl = `CREATE TABLE IF NOT EXISTS {t} (
    biz_tag     VARCHAR(128) NOT NULL DEFAULT '' PRIMARY KEY,
    max_id      BIGINT       NOT NULL DEFAULT 1,
    step        INT          NOT NULL,
    description VARCHAR(256) DEFAULT NULL,
    update_time TIMESTAMP    NOT NULL DEFAULT CURRENT_TIMESTAMP
);
`
	default:
		return "", fmt.Errorf("sqlstore: unknown dialect %d", d)
	}
	return strings.ReplaceAll(ddl, "{t}", table), nil
}

func (s *Segments) q(query string) string {
	return rebind(s.dialect, strings.ReplaceAll(query, "{t}", s.opt.Table))
}

// Limits implements segment.Limiter: biz_tag varchar(128), description
// varchar(256).
func (s *Segments) Limits() segment.Limits { return segment.DefaultLimits }

// where returns the condition on biz_tag that matches tag byte for byte.
func (s *Segments) where(tag string) (string, []any) { return tagIs(s.dialect, "biz_tag", tag) }

func (s *Segments) ensureSchema(ctx context.Context) error {
	ddl, _ := SegmentSchema(s.dialect, s.opt.Table)
	return s.schema.ensure(ctx, s.c, s.opt.NoCreate, []string{s.opt.Table}, ddl)
}

// Reserve implements segment.Store with Leaf's own statements: add the
// step to max_id, then read it, in one transaction (PostgreSQL: one
// UPDATE … RETURNING).
func (s *Segments) Reserve(ctx context.Context, tag string, step int64) (r segment.Range, err error) {
	if step < 1 {
		return r, fmt.Errorf("reserve %q: step %d under 1", tag, step)
	}
	if err := segment.CheckTag(tag, s.Limits()); err != nil {
		return r, err
	}
	if err := s.ensureSchema(ctx); err != nil {
		return r, err
	}
	if err := segment.CanReserve(0, step); err != nil {
		return r, fmt.Errorf("reserve %q: %w", tag, err)
	}
	// The counter moves only while it stays in 0..MaxEnd: it never wraps.
	limit := segment.MaxEnd - step
	var maxID, rowStep int64
	if s.dialect == Postgres {
		err = s.db.QueryRowContext(ctx, s.q("UPDATE {t} SET max_id = max_id + ?, update_time = now() WHERE biz_tag = ? AND max_id BETWEEN 0 AND ? RETURNING max_id, step"),
			step, tag, limit).Scan(&maxID, &rowStep)
	} else {
		maxID, rowStep, err = s.reserveMySQL(ctx, tag, step, limit)
	}
	if errors.Is(err, sql.ErrNoRows) {
		var next int64
		cond, args := s.where(tag)
		if rerr := s.db.QueryRowContext(ctx, s.q("SELECT max_id FROM {t} WHERE "+cond), args...).Scan(&next); errors.Is(rerr, sql.ErrNoRows) {
			return r, segment.ErrUnknownTag
		} else if rerr != nil {
			return r, fmt.Errorf("reserve %q: %w", tag, s.c.wrap(ctx, rerr, s.opt.Table, "SELECT"))
		}
		if cerr := segment.CanReserve(next, step); cerr != nil {
			return r, fmt.Errorf("reserve %q: %w", tag, cerr)
		}
		return r, fmt.Errorf("reserve %q: the row appeared during the update; try again", tag)
	}
	if err != nil {
		return r, fmt.Errorf("reserve %q: %w", tag, s.c.wrap(ctx, err, s.opt.Table, "UPDATE"))
	}
	return segment.Range{Start: maxID - step, End: maxID, Delta: 1, Step: rowStep}, nil
}

func (s *Segments) reserveMySQL(ctx context.Context, tag string, step, limit int64) (maxID, rowStep int64, err error) {
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelReadCommitted})
	if err != nil {
		return 0, 0, err
	}
	defer func() {
		if err != nil {
			tx.Rollback()
		}
	}()
	cond, args := s.where(tag)
	res, err := tx.ExecContext(ctx, s.q("UPDATE {t} SET max_id = max_id + ? WHERE "+cond+" AND max_id BETWEEN 0 AND ?"), append(append([]any{step}, args...), limit)...)
	if err != nil {
		return 0, 0, err
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return 0, 0, sql.ErrNoRows
	}
	if err := tx.QueryRowContext(ctx, s.q("SELECT max_id, step FROM {t} WHERE "+cond), args...).Scan(&maxID, &rowStep); err != nil {
		return 0, 0, err
	}
	return maxID, rowStep, tx.Commit()
}

// tagColumns reads update_time as Unix seconds, which needs no driver
// time parsing.
func (s *Segments) tagColumns() string {
	stamp := "CAST(EXTRACT(EPOCH FROM update_time) AS BIGINT)"
	if s.dialect == MySQL {
		stamp = "UNIX_TIMESTAMP(update_time)"
	}
	return "biz_tag, max_id, step, COALESCE(description, ''), " + stamp
}

func scanTag(sc interface{ Scan(...any) error }) (segment.TagInfo, error) {
	var t segment.TagInfo
	var unix int64
	err := sc.Scan(&t.Tag, &t.Next, &t.Step, &t.Description, &unix)
	t.Updated, t.Delta = time.Unix(unix, 0).UTC(), 1
	return t, err
}

// Tag implements segment.Store. A row inserted into the table directly is
// seen at once.
func (s *Segments) Tag(ctx context.Context, tag string) (segment.TagInfo, error) {
	if err := segment.CheckTag(tag, s.Limits()); err != nil {
		return segment.TagInfo{}, err
	}
	if err := s.ensureSchema(ctx); err != nil {
		return segment.TagInfo{}, err
	}
	cond, args := s.where(tag)
	t, err := scanTag(s.db.QueryRowContext(ctx, s.q("SELECT "+s.tagColumns()+" FROM {t} WHERE "+cond), args...))
	if errors.Is(err, sql.ErrNoRows) {
		return t, segment.ErrUnknownTag
	}
	if err != nil {
		return t, fmt.Errorf("read tag %q: %w", tag, s.c.wrap(ctx, err, s.opt.Table, "SELECT"))
	}
	return t, nil
}

// Tags implements segment.Store.
func (s *Segments) Tags(ctx context.Context) ([]segment.TagInfo, error) {
	if err := s.ensureSchema(ctx); err != nil {
		return nil, err
	}
	rows, err := s.db.QueryContext(ctx, s.q("SELECT "+s.tagColumns()+" FROM {t} ORDER BY biz_tag"))
	if err != nil {
		return nil, fmt.Errorf("list tags: %w", s.c.wrap(ctx, err, s.opt.Table, "SELECT"))
	}
	defer rows.Close()
	var out []segment.TagInfo
	for rows.Next() {
		t, err := scanTag(rows)
		if err != nil {
			return nil, fmt.Errorf("list tags: %w", err)
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

// CreateTag implements segment.Store. The tag, step and description are
// checked against the columns first (segment.CheckCreate), and MySQL
// inserts strictly: nothing is truncated.
func (s *Segments) CreateTag(ctx context.Context, tag string, first, step int64, description string) error {
	if err := segment.CheckCreate(tag, first, step, description, s.Limits()); err != nil {
		return err
	}
	if err := s.ensureSchema(ctx); err != nil {
		return err
	}
	insert := "INSERT INTO {t} (biz_tag, max_id, step, description, update_time) VALUES (?, ?, ?, ?, now())"
	if s.dialect == Postgres {
		insert += " ON CONFLICT DO NOTHING"
	}
	res, err := execStrict(ctx, s.db, s.dialect, s.q(insert), tag, first, step, description)
	if err != nil {
		return createErr(ctx, s.db, s.q("SELECT biz_tag FROM {t} WHERE biz_tag = ?"), tag, s.c, s.opt.Table, err)
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		return segment.ErrTagExists
	}
	return err
}

// createErr explains a failed insert of tag: ErrTagExists if a row the
// table takes for the same tag exists (on MySQL's case-insensitive
// collations "Order" is "order"), naming that row; ErrInvalid for a value
// the database refused; the error otherwise.
func createErr(ctx context.Context, db *sql.DB, same, tag string, c classifier, table string, err error) error {
	var other string
	if db.QueryRowContext(ctx, same, tag).Scan(&other) == nil {
		if other != tag {
			return fmt.Errorf("create tag %q: the table's collation takes it for the tag %q: %w", tag, other, segment.ErrTagExists)
		}
		return segment.ErrTagExists
	}
	return fmt.Errorf("create tag %q: %w", tag, c.wrap(ctx, err, table, "INSERT"))
}

// SetStep implements segment.Store, for a step of 1 to segment.StepLimit.
func (s *Segments) SetStep(ctx context.Context, tag string, step int64) error {
	if err := segment.CheckStep(step); err != nil {
		return err
	}
	return s.update(ctx, tag, "step = ?", step)
}

// Advance implements segment.Store: max_id moves to at least next, never
// back.
func (s *Segments) Advance(ctx context.Context, tag string, next int64) (int64, error) {
	if err := s.update(ctx, tag, "max_id = GREATEST(max_id, ?)", next); err != nil {
		return 0, err
	}
	t, err := s.Tag(ctx, tag)
	return t.Next, err
}

func (s *Segments) update(ctx context.Context, tag, set string, v int64) error {
	if err := segment.CheckTag(tag, s.Limits()); err != nil {
		return err
	}
	if err := s.ensureSchema(ctx); err != nil {
		return err
	}
	stamp := ", update_time = now()"
	if s.dialect == MySQL {
		stamp = ""
	}
	cond, args := s.where(tag)
	res, err := execStrict(ctx, s.db, s.dialect, s.q("UPDATE {t} SET "+set+stamp+" WHERE "+cond), append([]any{v}, args...)...)
	if err != nil {
		return fmt.Errorf("update tag %q: %w", tag, s.c.wrap(ctx, err, s.opt.Table, "UPDATE"))
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		// MySQL counts changed rows only: tell "no such tag" from "no change".
		if _, err := s.Tag(ctx, tag); err != nil {
			return err
		}
	}
	return nil
}
