package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/firn-id/firn/nodeid"
)

var _ nodeid.Recorder = (*Store)(nil)

// Record implements nodeid.Recorder.
func (s *Store) Record(ctx context.Context) (nodeid.LayoutID, error) {
	var id nodeid.LayoutID
	err := s.db.QueryRowContext(ctx, s.q.readNamespace, s.opt.Namespace).Scan(&id.Fingerprint, &id.Description)
	if errors.Is(err, sql.ErrNoRows) || Classify(err) == MissingTable {
		// No table yet: no record, and reading creates none (a
		// database of segments alone is asked whether it is a site's).
		return nodeid.LayoutID{}, nil
	}
	if err != nil {
		return nodeid.LayoutID{}, fmt.Errorf("read namespace record: %w", s.denied(ctx, err, true, "SELECT"))
	}
	return id, nil
}

// Rerecord implements nodeid.Recorder. Under the namespace row's lock,
// which every claim takes, it replaces the record and clears the owner of
// every node row: a renewal is fenced by its owner token (the
// statement's WHERE re-checks the row it waited for), so none taken under
// the old record succeeds after the commit.
func (s *Store) Rerecord(ctx context.Context, old, new nodeid.LayoutID) (err error) {
	if err := s.ensureSchema(ctx); err != nil {
		return err
	}
	if err := new.Check(); err != nil {
		return err
	}
	if old.Fingerprint == "" {
		res, err := s.db.ExecContext(ctx, s.q.addNamespace, s.opt.Namespace, new.Fingerprint, new.Description)
		if err != nil {
			return fmt.Errorf("record namespace: %w", s.denied(ctx, err, true, "INSERT"))
		}
		if n, err := res.RowsAffected(); err == nil && n == 1 {
			return nil
		}
		stored, err := s.Record(ctx)
		if err != nil {
			return err
		}
		return &nodeid.RecordChangedError{Stored: stored}
	}
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelReadCommitted})
	if err != nil {
		return fmt.Errorf("begin rerecord: %w", err)
	}
	defer tx.Rollback() // a no-op once committed
	var stored nodeid.LayoutID
	err = tx.QueryRowContext(ctx, s.q.lockNamespace, s.opt.Namespace).Scan(&stored.Fingerprint, &stored.Description)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("lock namespace: %w", s.denied(ctx, err, true, "SELECT FOR UPDATE"))
	}
	if stored.Fingerprint != old.Fingerprint || stored.Description != old.Description {
		return &nodeid.RecordChangedError{Stored: stored}
	}
	if _, err := tx.ExecContext(ctx, s.q.setRecord, new.Fingerprint, new.Description, s.opt.Namespace); err != nil {
		return fmt.Errorf("rerecord namespace: %w", s.denied(ctx, err, true, "UPDATE"))
	}
	if _, err := tx.ExecContext(ctx, s.q.endLeases, s.opt.Namespace); err != nil {
		return fmt.Errorf("end the namespace's leases: %w", s.denied(ctx, err, false, "UPDATE"))
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit rerecord: %w", err)
	}
	return nil
}

// HWMs implements nodeid.Recorder.
func (s *Store) HWMs(ctx context.Context) (map[uint64]int64, error) {
	rows, err := s.db.QueryContext(ctx, s.q.hwms, s.opt.Namespace)
	if err != nil {
		return nil, fmt.Errorf("read HWMs: %w", s.denied(ctx, err, false, "SELECT"))
	}
	defer rows.Close()
	out := map[uint64]int64{}
	for rows.Next() {
		var n uint64
		var hwm int64
		if err := rows.Scan(&n, &hwm); err != nil {
			return nil, fmt.Errorf("read HWMs: %w", err)
		}
		out[n] = hwm
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read HWMs: %w", err)
	}
	return out, nil
}

// Identity implements nodeid.Recorder: PostgreSQL's system identifier
// (set by initdb, the same in a physical replica, another in a server a
// dump is restored into), MySQL's server UUID (auto.cnf: another in a
// server a dump is restored into); MariaDB has neither, and gives "".
func (s *Store) Identity(ctx context.Context) (string, error) {
	var id sql.NullString
	switch s.dialect {
	case Postgres:
		if err := s.db.QueryRowContext(ctx, "SELECT system_identifier::text FROM pg_control_system()").Scan(&id); err != nil {
			return "", fmt.Errorf("read the server's system identifier: %w", err)
		}
		return "postgres:" + id.String, nil
	default:
		var version string
		if err := s.db.QueryRowContext(ctx, "SELECT VERSION()").Scan(&version); err != nil {
			return "", fmt.Errorf("read the server's version: %w", err)
		}
		if strings.Contains(strings.ToLower(version), "mariadb") {
			return "", nil
		}
		if err := s.db.QueryRowContext(ctx, "SELECT @@server_uuid").Scan(&id); err != nil {
			return "", fmt.Errorf("read the server's UUID: %w", err)
		}
		return "mysql:" + id.String, nil
	}
}

var _ nodeid.Clock = (*Store)(nil)

// Now implements nodeid.Clock: the database's clock.
func (s *Store) Now(ctx context.Context) (time.Time, error) {
	var ms int64
	q := "SELECT CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000 AS BIGINT)"
	if s.dialect == MySQL {
		q = "SELECT CAST(UNIX_TIMESTAMP() AS SIGNED) * 1000" // seconds since the epoch, whatever the session's time zone (a local time is ambiguous in a DST fall-back hour)
	}
	if err := s.db.QueryRowContext(ctx, q).Scan(&ms); err != nil {
		return time.Time{}, fmt.Errorf("read the database's clock: %w", err)
	}
	return time.UnixMilli(ms), nil
}
