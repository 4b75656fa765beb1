package zkstore

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/go-zookeeper/zk"

	"github.com/firn-id/firn/nodeid"
)

var _ nodeid.Recorder = (*Store)(nil)

// Record implements nodeid.Recorder, in a session of its own: the layout
// znode, read after a Sync.
func (s *Store) Record(ctx context.Context) (nodeid.LayoutID, error) {
	ctx, cancel := s.withDeadline(ctx)
	defer cancel()
	sess, err := s.open(ctx, s.cfg.SessionTimeout)
	if err != nil {
		return nodeid.LayoutID{}, err
	}
	defer sess.close()
	const op = "read the namespace's record"
	if err := syncPath(ctx, sess.conn, s.prefix); err != nil {
		return nodeid.LayoutID{}, s.fail(op, err)
	}
	id, _, err := s.readRecord(ctx, sess.conn)
	if err != nil {
		return nodeid.LayoutID{}, s.fail(op, err)
	}
	return id, nil
}

// readRecord reads the layout znode: the record and its version; absent
// is the zero LayoutID and version -1.
func (s *Store) readRecord(ctx context.Context, conn *zk.Conn) (nodeid.LayoutID, int32, error) {
	data, st, err := get(ctx, conn, s.layoutPath())
	if err != nil || st == nil {
		return nodeid.LayoutID{}, -1, err
	}
	id, err := parseLayout(data)
	return id, st.Version, err
}

// Rerecord implements nodeid.Recorder, in a session of its own: it
// creates the layout znode (old is the zero LayoutID) or sets it at the
// version whose value it compared with old. Every claim's Multi checks
// the layout znode at the version it read, and so does every extension
// of that claim: setting it ends every lease of the namespace in this one
// write, including an extension in flight, which lands before it or not
// at all. The holders' held/N stay until their sessions end (their next
// Renew fails, or their TTL passes), so no claim takes their nodes
// meanwhile. A write whose answer was lost is decided by a read after a
// Sync.
func (s *Store) Rerecord(ctx context.Context, old, new nodeid.LayoutID) error {
	if err := new.Check(); err != nil {
		return err
	}
	ctx, cancel := s.withDeadline(ctx)
	defer cancel()
	sess, err := s.open(ctx, s.cfg.SessionTimeout)
	if err != nil {
		return err
	}
	defer sess.close()
	conn := sess.conn
	const op = "rerecord the namespace"
	if old.Fingerprint == "" {
		if err := s.makeZnodes(ctx, conn); err != nil {
			return err
		}
	}
	val := layoutValue(new)
	var (
		// lost is the error of a write whose answer was lost: it may
		// have landed, or land yet (a request still on its way from a
		// server the connection to was cut), so it is kept to the end.
		lost  error
		tried int32 = -2 // the version the last write was sent at; -1 a create
	)
	for range maxRounds {
		if err := syncPath(ctx, conn, s.prefix); err != nil {
			return s.fail(op, unknown(lost, err))
		}
		stored, version, err := s.readRecord(ctx, conn)
		if err != nil {
			return s.fail(op, unknown(lost, err))
		}
		if lost != nil && sameRecord(stored, new) && version != tried {
			// A write whose answer was lost landed (or one of the same
			// record did): the znode holds new, past the version the
			// last write was sent at.
			return nil
		}
		if !sameRecord(stored, old) {
			// Every write sent was at a version (or a create) the znode
			// has moved past: none can land any more.
			return &nodeid.RecordChangedError{Stored: stored}
		}
		tried = version
		var write any = &zk.SetDataRequest{Path: s.layoutPath(), Data: val, Version: version}
		if version < 0 {
			write = &zk.CreateRequest{Path: s.layoutPath(), Data: val, Acl: s.acl}
		}
		_, err = s.multi(ctx, conn, write)
		switch {
		case err == nil:
			return nil
		case !definite(err):
			lost = err
		}
		// Refused (the record moved since the read) or lost: the next
		// read decides.
	}
	return s.fail(op, unknown(lost, fmt.Errorf("the layout znode changed under %d attempts", maxRounds)))
}

// sameRecord reports whether a and b are one record: fingerprint and
// description.
func sameRecord(a, b nodeid.LayoutID) bool {
	return a.Fingerprint == b.Fingerprint && a.Description == b.Description
}

// unknown is err, marked ErrOutcomeUnknown after a write whose answer
// was lost (lost not nil).
func unknown(lost, err error) error {
	if lost == nil {
		return err
	}
	return fmt.Errorf("%w: %w; then: %w", ErrOutcomeUnknown, lost, err)
}

// HWMs implements nodeid.Recorder, in a session of its own: every hwm/N,
// read after a Sync.
func (s *Store) HWMs(ctx context.Context) (map[uint64]int64, error) {
	ctx, cancel := s.withDeadline(ctx)
	defer cancel()
	sess, err := s.open(ctx, s.cfg.SessionTimeout)
	if err != nil {
		return nil, err
	}
	defer sess.close()
	conn := sess.conn
	const op = "read the HWMs"
	if err := syncPath(ctx, conn, s.prefix); err != nil {
		return nil, s.fail(op, err)
	}
	kids, err := do(ctx, func() ([]string, error) {
		k, _, err := conn.Children(s.hwmDir())
		return k, err
	})
	out := map[uint64]int64{}
	if errors.Is(err, zk.ErrNoNode) {
		return out, nil
	}
	if err != nil {
		return nil, s.fail(op, err)
	}
	for _, k := range kids {
		n, err := strconv.ParseUint(k, 10, 64)
		if err != nil || strconv.FormatUint(n, 10) != k {
			continue // not a node's (hwmPath spells every node so)
		}
		hwm, st, err := s.readHWM(ctx, conn, n)
		if err != nil {
			return nil, s.fail(op, err)
		}
		if st != nil {
			out[n] = hwm
		}
	}
	return out, nil
}

// Identity implements nodeid.Recorder: "". ZooKeeper keeps no identity
// of its own that a copy of its data does not carry: an ensemble rebuilt
// from another's snapshots and transaction logs holds the same znodes,
// zxids and versions, and there is no cluster ID. A registry on
// ZooKeeper is told from a copy by the random ID in its site record
// alone.
func (s *Store) Identity(context.Context) (string, error) { return "", nil }
