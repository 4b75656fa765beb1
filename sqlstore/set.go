package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/firn-id/firn/segment"
)

// SetOptions configures a store on firn's own segment table.
type SetOptions struct {
	// Table is firn's segment table. Default "firn_segments".
	Table string
	// Set names the store set this database belongs to: every row it
	// creates records it, with the set's size, and segment.Multi refuses
	// rows of another set or size.
	Set string
	// NoCreate stops the store from creating the table on first use.
	NoCreate bool
}

// SetStore is a segment.Store on firn's own segment table: Tinyid's
// columns, semantics included, plus a description, the name and size of
// the store set each row belongs to, and the permutation of an opaque
// tag. Its methods are Tinyid's, on that table.
type SetStore struct {
	t *Tinyid
}

// NewSetStore returns a store on firn's own segment table. It does no
// I/O.
func NewSetStore(db *sql.DB, d Dialect, opt SetOptions) (*SetStore, error) {
	if opt.Table == "" {
		opt.Table = "firn_segments"
	}
	if len(opt.Set) > 128 {
		return nil, fmt.Errorf("sqlstore: set name %q longer than 128 bytes", opt.Set)
	}
	t, err := NewTinyid(db, d, TinyidOptions{Table: opt.Table, NoCreate: opt.NoCreate})
	if err != nil {
		return nil, err
	}
	t.own, t.set = true, opt.Set
	t.c.mode, t.c.tables = ModeSet, Tables{Set: opt.Table}
	return &SetStore{t: t}, nil
}

// SetSchema returns the DDL of firn's own segment table.
func SetSchema(d Dialect, table string) (string, error) {
	ddl, err := TinyidSchema(d, table)
	if err != nil {
		return "", err
	}
	extra := "    description VARCHAR(256) DEFAULT NULL,\n    set_name    VARCHAR(128) NOT NULL DEFAULT '',\n    set_size    INT          NOT NULL DEFAULT 1,\n" +
		"    opaque      VARCHAR(64)  NOT NULL DEFAULT '',\n"
	anchor := "    version     BIGINT       NOT NULL DEFAULT 0\n"
	if d == MySQL {
		extra = "  `description` varchar(256) DEFAULT NULL,\n  `set_name` varchar(128) NOT NULL DEFAULT '',\n  `set_size` int(11) NOT NULL DEFAULT '1',\n" +
			"  `opaque` varchar(64) NOT NULL DEFAULT '',\n"
		anchor = "  `version` bigint(20) NOT NULL DEFAULT '0',\n"
		return strings.Replace(ddl, anchor, anchor+extra, 1), nil
	}
	return strings.Replace(ddl, anchor, extra+anchor, 1), nil
}

// Limits implements segment.Limiter as Tinyid.Limits does on this table.
func (s *SetStore) Limits() segment.Limits { return s.t.Limits() }

// Reserve implements segment.Store as Tinyid.Reserve does.
func (s *SetStore) Reserve(ctx context.Context, tag string, step int64) (segment.Range, error) {
	return s.t.Reserve(ctx, tag, step)
}

// Tag implements segment.Store.
func (s *SetStore) Tag(ctx context.Context, tag string) (segment.TagInfo, error) {
	return s.t.Tag(ctx, tag)
}

// Tags implements segment.Store.
func (s *SetStore) Tags(ctx context.Context) ([]segment.TagInfo, error) { return s.t.Tags(ctx) }

// CreateTag implements segment.Store: one store, delta 1.
func (s *SetStore) CreateTag(ctx context.Context, tag string, first, step int64, description string) error {
	return s.t.CreateTag(ctx, tag, first, step, description)
}

// Collides implements segment.Collider as Tinyid.Collides does.
func (s *SetStore) Collides(ctx context.Context, tag string) (string, bool, error) {
	return s.t.Collides(ctx, tag)
}

// CreateTagResidue implements segment.ResidueCreator: the row records
// the store set, of delta stores.
func (s *SetStore) CreateTagResidue(ctx context.Context, tag string, first, step, delta, remainder int64, description string) error {
	return s.t.CreateTagResidue(ctx, tag, first, step, delta, remainder, description)
}

// CreateTagOpaque implements segment.OpaqueCreator: the row records the
// permutation in its opaque column.
func (s *SetStore) CreateTagOpaque(ctx context.Context, tag string, first, step, delta, remainder int64, description, permutation string) error {
	return s.t.CreateTagOpaque(ctx, tag, first, step, delta, remainder, description, permutation)
}

// Reclass implements segment.Reclasser as Tinyid.Reclass does. The row's
// set name and size are left as they are.
func (s *SetStore) Reclass(ctx context.Context, tag string, from segment.TagInfo, delta, remainder, next, step int64) error {
	return s.t.Reclass(ctx, tag, from, delta, remainder, next, step)
}

// SetStep implements segment.Store, for a step of 1 to segment.StepLimit.
func (s *SetStore) SetStep(ctx context.Context, tag string, step int64) error {
	return s.t.SetStep(ctx, tag, step)
}

// Advance implements segment.Store as Tinyid.Advance does.
func (s *SetStore) Advance(ctx context.Context, tag string, next int64) (int64, error) {
	return s.t.Advance(ctx, tag, next)
}
