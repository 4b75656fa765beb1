package sqlstore

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/firn-id/firn/nodeid"
	"github.com/firn-id/firn/store"
)

// Options configures a Store. The zero value means the defaults.
type Options struct {
	// Table is the node table; its namespace table is Table + "_namespaces".
	// Default "firn_nodes".
	Table string
	// Namespace is the set of nodes that must never collide. Default
	// "default".
	Namespace string
	// NoCreate stops the store from creating its tables on first use, for
	// application users that may not (see Schema and `firn schema`).
	NoCreate bool
}

// Store is a nodeid.Store on PostgreSQL or MySQL. Claims are rows of the
// node table; leases expire by the database's clock; every write is fenced
// by the claim's token and the lease's expiry in the same statement or
// row-locked transaction.
type Store struct {
	db      *sql.DB
	dialect Dialect
	opt     Options
	q       queries
	c       classifier

	schema schemaOnce
}

// DefaultNodeTable is the node table of a store whose Options name none.
const DefaultNodeTable = "firn_nodes"

// New returns a store on db, which the caller opens with a driver for
// dialect and closes. It does no I/O.
func New(db *sql.DB, d Dialect, opt Options) (*Store, error) {
	if opt.Table == "" {
		opt.Table = DefaultNodeTable
	}
	if opt.Namespace == "" {
		opt.Namespace = store.DefaultName
	}
	if err := checkTable(opt.Table); err != nil {
		return nil, err
	}
	if d != Postgres && d != MySQL {
		return nil, fmt.Errorf("sqlstore: unknown dialect %d", d)
	}
	if len(opt.Namespace) > 128 {
		return nil, fmt.Errorf("sqlstore: namespace %q longer than 128 bytes", opt.Namespace)
	}
	c := classifier{db: db, d: d, mode: ModeNodes, tables: Tables{Nodes: opt.Table}}
	return &Store{db: db, dialect: d, opt: opt, q: newQueries(d, opt.Table), c: c}, nil
}

// ensureSchema creates the tables once, unless NoCreate.
func (s *Store) ensureSchema(ctx context.Context) error {
	ddl, _ := Schema(s.dialect, s.opt.Table)
	return s.schema.ensure(ctx, s.c, s.opt.NoCreate, []string{s.opt.Table + "_namespaces", s.opt.Table}, ddl)
}

// denied is c.refused on the namespace table (ns) or the node table.
func (s *Store) denied(ctx context.Context, err error, ns bool, verb string) error {
	table := s.opt.Table
	if ns {
		table += "_namespaces"
	}
	return s.c.refused(ctx, err, table, verb)
}

// ttlArg is the TTL in the unit the dialect's interval expression takes.
func (s *Store) ttlArg(ttl time.Duration) int64 {
	if s.dialect == MySQL {
		return ttl.Microseconds()
	}
	return ttl.Milliseconds()
}

// Claim implements nodeid.Store. Claims of one namespace are serialized by
// a lock on its namespace row; the node's HWM is read under the lock of
// the node row the claim takes. A claim that a read without locks shows
// cannot succeed (every node held, the node asked for held, another
// layout) is answered from that read (see free), so that the processes
// waiting for a node of a full pool lock nothing.
func (s *Store) Claim(ctx context.Context, req nodeid.ClaimRequest) (c nodeid.Claim, err error) {
	if err := s.ensureSchema(ctx); err != nil {
		return c, err
	}
	if err := req.Layout.Check(); err != nil { // MySQL's INSERT IGNORE would cut a long one
		return c, err
	}
	conn, err := s.conn(ctx)
	if err != nil {
		return c, fmt.Errorf("connect: %w", err)
	}
	defer func() { _ = conn.Close() }() // back to the pool, or closed under Embed
	if err := s.free(ctx, conn, req); err != nil {
		return c, err
	}
	// The namespace row exists before the transaction locks it: inserting
	// it inside would take a shared lock that concurrent claims deadlock on.
	if _, err := conn.ExecContext(ctx, s.q.addNamespace, s.opt.Namespace, req.Layout.Fingerprint, req.Layout.Description); err != nil {
		return c, fmt.Errorf("add namespace: %w", s.denied(ctx, err, true, "INSERT"))
	}
	tx, err := conn.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelReadCommitted})
	if err != nil {
		return c, fmt.Errorf("begin claim: %w", err)
	}
	defer func() {
		if err != nil {
			tx.Rollback()
		}
	}()
	if err := s.lockNamespace(ctx, tx, req.Layout); err != nil {
		return c, s.denied(ctx, err, true, "SELECT FOR UPDATE")
	}
	rows, err := s.lockedNodes(ctx, tx)
	if err != nil {
		return c, s.denied(ctx, err, false, "SELECT FOR UPDATE")
	}
	node, err := pick(req, rows)
	if err != nil {
		return c, err
	}
	// Read the HWM under the lock of the row the claim takes: an Advance
	// may have created or raised it since the rows were read. A row that
	// exists is already locked; inserting over it would take a shared
	// lock that a concurrent renewal can deadlock with.
	if _, ok := rows[node]; !ok {
		if _, err := tx.ExecContext(ctx, s.q.addNode, s.opt.Namespace, node); err != nil {
			return c, fmt.Errorf("add node %d: %w", node, s.denied(ctx, err, false, "INSERT"))
		}
	}
	var hwm int64
	if err := tx.QueryRowContext(ctx, s.q.lockHWM, s.opt.Namespace, node).Scan(&hwm); err != nil {
		return c, fmt.Errorf("lock node %d: %w", node, s.denied(ctx, err, false, "SELECT FOR UPDATE"))
	}
	token := newToken()
	if _, err := tx.ExecContext(ctx, s.q.take, token, s.ttlArg(req.TTL), s.opt.Namespace, node); err != nil {
		return c, fmt.Errorf("take node %d: %w", node, s.denied(ctx, err, false, "UPDATE"))
	}
	if err := tx.Commit(); err != nil {
		return c, fmt.Errorf("commit claim of node %d: %w", node, err)
	}
	return nodeid.Claim{Node: node, Token: token, HWM: hwm, TTL: req.TTL}, nil
}

// free refuses, from reads that lock nothing, a claim the locked claim
// would refuse: another layout recorded, or no node pick could take
// (a *PoolFullError, a *ConflictError). A process waiting for a node
// of a full pool asks every 75–150 ms; a hundred of them taking the
// namespace row's lock FOR UPDATE and every node row's would queue the
// claims that can succeed behind them. Only the locked claim hands out a
// node: this read may be stale either way, and then only says no to a
// claim that would have succeeded, which is asked again, or lets through
// one that the locked claim refuses. A namespace not yet recorded is let
// through.
func (s *Store) free(ctx context.Context, conn *sql.Conn, req nodeid.ClaimRequest) error {
	var fp, desc string
	err := conn.QueryRowContext(ctx, s.q.readNamespace, s.opt.Namespace).Scan(&fp, &desc)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil
	case err != nil:
		return fmt.Errorf("read namespace: %w", s.denied(ctx, err, true, "SELECT"))
	case fp != req.Layout.Fingerprint:
		return &nodeid.LayoutMismatchError{Stored: desc, Want: req.Layout.Description}
	}
	rs, err := conn.QueryContext(ctx, s.q.liveNodes, s.opt.Namespace)
	if err != nil {
		return fmt.Errorf("read held nodes: %w", s.denied(ctx, err, false, "SELECT"))
	}
	defer rs.Close()
	held := map[uint64]nodeRow{}
	for rs.Next() {
		var n uint64
		if err := rs.Scan(&n); err != nil {
			return fmt.Errorf("read held nodes: %w", err)
		}
		held[n] = nodeRow{live: true}
	}
	if err := rs.Err(); err != nil {
		return fmt.Errorf("read held nodes: %w", err)
	}
	_, err = pick(req, held)
	return err
}

// lockNamespace locks the namespace row and checks the layout.
func (s *Store) lockNamespace(ctx context.Context, tx *sql.Tx, want nodeid.LayoutID) error {
	var fp, desc string
	if err := tx.QueryRowContext(ctx, s.q.lockNamespace, s.opt.Namespace).Scan(&fp, &desc); err != nil {
		return fmt.Errorf("lock namespace: %w", err)
	}
	if fp != want.Fingerprint {
		return &nodeid.LayoutMismatchError{Stored: desc, Want: want.Description}
	}
	return nil
}

type nodeRow struct{ live bool }

// lockedNodes reads and locks every node row of the namespace.
func (s *Store) lockedNodes(ctx context.Context, tx *sql.Tx) (map[uint64]nodeRow, error) {
	rs, err := tx.QueryContext(ctx, s.q.lockNodes, s.opt.Namespace)
	if err != nil {
		return nil, fmt.Errorf("lock nodes: %w", err)
	}
	defer rs.Close()
	out := map[uint64]nodeRow{}
	for rs.Next() {
		var n uint64
		var r nodeRow
		if err := rs.Scan(&n, &r.live); err != nil {
			return nil, fmt.Errorf("read nodes: %w", err)
		}
		out[n] = r
	}
	if err := rs.Err(); err != nil {
		return nil, fmt.Errorf("read nodes: %w", err)
	}
	return out, nil
}

// pick chooses the node to take.
func pick(req nodeid.ClaimRequest, rows map[uint64]nodeRow) (uint64, error) {
	if !req.AnyNode {
		if rows[req.Node].live {
			return 0, &nodeid.ConflictError{Node: req.Node}
		}
		return req.Node, nil
	}
	held := 0
	for n, r := range rows {
		if r.live && req.Free(n) {
			held++
		}
	}
	for n := req.First; n < req.Pool; n++ {
		if !rows[n].live && !slices.Contains(req.Reserved, n) {
			return n, nil
		}
	}
	return 0, &nodeid.PoolFullError{Pool: req.Size(), Held: held, Reserved: len(req.Reserved)}
}

// Renew implements nodeid.Store: one write, fenced by owner and expiry,
// that raises the HWM (never lowering it) and the lease together.
func (s *Store) Renew(ctx context.Context, c nodeid.Claim, hwm int64) (int64, error) {
	conn, err := s.conn(ctx)
	if err != nil {
		return 0, fmt.Errorf("renew node %d: connect: %w", c.Node, err)
	}
	defer func() { _ = conn.Close() }() // back to the pool, or closed under Embed
	if s.dialect == Postgres {
		var stored int64
		err := conn.QueryRowContext(ctx, s.q.renew, hwm, s.ttlArg(c.TTL), s.opt.Namespace, c.Node, c.Token).Scan(&stored)
		if errors.Is(err, sql.ErrNoRows) {
			return 0, nodeid.ErrLeaseLost
		}
		if err != nil {
			return 0, fmt.Errorf("renew node %d: %w", c.Node, s.denied(ctx, err, false, "UPDATE"))
		}
		return stored, nil
	}
	return s.renewLocked(ctx, conn, c, hwm)
}

// renewLocked renews under the node row's lock: MySQL has no RETURNING on
// UPDATE, and counts only changed rows.
func (s *Store) renewLocked(ctx context.Context, conn *sql.Conn, c nodeid.Claim, hwm int64) (stored int64, err error) {
	tx, err := conn.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelReadCommitted})
	if err != nil {
		return 0, fmt.Errorf("begin renew: %w", err)
	}
	defer func() {
		if err != nil {
			tx.Rollback()
		}
	}()
	var owner sql.NullString
	var live sql.NullBool
	err = tx.QueryRowContext(ctx, s.q.lockNode, s.opt.Namespace, c.Node).Scan(&owner, &live, &stored)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nodeid.ErrLeaseLost
	}
	if err != nil {
		return 0, fmt.Errorf("renew node %d: %w", c.Node, s.denied(ctx, err, false, "SELECT FOR UPDATE"))
	}
	if owner.String != c.Token || !live.Bool {
		return 0, nodeid.ErrLeaseLost
	}
	stored = max(stored, hwm)
	if _, err := tx.ExecContext(ctx, s.q.setHWM, stored, s.ttlArg(c.TTL), s.opt.Namespace, c.Node, c.Token); err != nil {
		return 0, fmt.Errorf("renew node %d: %w", c.Node, s.denied(ctx, err, false, "UPDATE"))
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("commit renewal of node %d: %w", c.Node, err)
	}
	return stored, nil
}

// Release implements nodeid.Store.
func (s *Store) Release(ctx context.Context, c nodeid.Claim) error {
	conn, err := s.conn(ctx)
	if err != nil {
		return fmt.Errorf("release node %d: connect: %w", c.Node, err)
	}
	defer func() { _ = conn.Close() }() // back to the pool, or closed under Embed
	if _, err := conn.ExecContext(ctx, s.q.release, s.opt.Namespace, c.Node, c.Token); err != nil {
		return fmt.Errorf("release node %d: %w", c.Node, s.denied(ctx, err, false, "UPDATE"))
	}
	return nil
}

// Advance implements nodeid.Store: in one transaction, under the node
// row's lock, it refuses a node whose lease is live by the database's
// clock and raises the HWM, never lowering it.
func (s *Store) Advance(ctx context.Context, req nodeid.AdvanceRequest) (stored int64, err error) {
	if err := s.ensureSchema(ctx); err != nil {
		return 0, err
	}
	if err := s.matchLayout(ctx, req); err != nil {
		return 0, err
	}
	// The row exists before the transaction locks it, as in Claim.
	if _, err := s.db.ExecContext(ctx, s.q.addNode, s.opt.Namespace, req.Node); err != nil {
		return 0, fmt.Errorf("advance node %d: %w", req.Node, err)
	}
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelReadCommitted})
	if err != nil {
		return 0, fmt.Errorf("begin advance: %w", err)
	}
	defer tx.Rollback() // a no-op once committed
	var owner sql.NullString
	var live sql.NullBool
	if err := tx.QueryRowContext(ctx, s.q.lockNode, s.opt.Namespace, req.Node).Scan(&owner, &live, &stored); err != nil {
		return 0, fmt.Errorf("advance node %d: %w", req.Node, err)
	}
	if owner.Valid && live.Bool {
		return 0, &nodeid.ConflictError{Node: req.Node}
	}
	if stored >= req.HWM {
		return stored, nil
	}
	if _, err := tx.ExecContext(ctx, s.q.advance, req.HWM, s.opt.Namespace, req.Node); err != nil {
		return 0, fmt.Errorf("advance node %d: %w", req.Node, err)
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("commit advance of node %d: %w", req.Node, err)
	}
	return req.HWM, nil
}

// matchLayout refuses a namespace with no recorded layout, a layout other
// than the recorded one, and a node outside it; it records none.
func (s *Store) matchLayout(ctx context.Context, req nodeid.AdvanceRequest) error {
	var fp, desc string
	err := s.db.QueryRowContext(ctx, s.q.readNamespace, s.opt.Namespace).Scan(&fp, &desc)
	if errors.Is(err, sql.ErrNoRows) {
		known, err := s.namespaces(ctx)
		if err != nil {
			return err
		}
		return &nodeid.UnknownNamespaceError{Namespace: s.opt.Namespace, Known: known}
	}
	if err != nil {
		return fmt.Errorf("read layout: %w", err)
	}
	switch {
	case req.Layout.Fingerprint == "":
		return nil
	case fp != req.Layout.Fingerprint:
		return &nodeid.LayoutMismatchError{Stored: desc, Want: req.Layout.Description}
	}
	return req.CheckNode()
}

// namespaces lists the namespaces of the table.
func (s *Store) namespaces(ctx context.Context) ([]string, error) {
	// The table name is checked by New (checkTable).
	rows, err := s.db.QueryContext(ctx, "SELECT namespace FROM "+s.opt.Table+"_namespaces ORDER BY namespace")
	if err != nil {
		return nil, fmt.Errorf("list namespaces: %w", err)
	}
	defer rows.Close()
	known := []string{}
	for rows.Next() {
		var ns string
		if err := rows.Scan(&ns); err != nil {
			return nil, fmt.Errorf("list namespaces: %w", err)
		}
		known = append(known, ns)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list namespaces: %w", err)
	}
	return known, nil
}

func newToken() string {
	b := make([]byte, 16)
	rand.Read(b)
	return hex.EncodeToString(b)
}
