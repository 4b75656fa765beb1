package zkstore

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/go-zookeeper/zk"
)

// Tree reads and writes another system's znodes (Meituan Leaf's
// /snowflake/{leaf.name}, for firn migrate), in one session. Every read
// follows a Sync, so it sees every write committed before it; every call
// has the store's call timeout unless ctx has a deadline, and its errors
// name the ensemble.
type Tree struct {
	s    *Store
	sess *session
}

// OpenTree opens a session to cfg's ensemble; cfg.Namespace is the path
// the tree's reads Sync on.
func OpenTree(ctx context.Context, cfg Config) (*Tree, error) {
	s, err := New(cfg)
	if err != nil {
		return nil, err
	}
	ctx, cancel := s.withDeadline(ctx)
	defer cancel()
	sess, err := s.open(ctx, s.cfg.SessionTimeout)
	if err != nil {
		return nil, err
	}
	return &Tree{s: s, sess: sess}, nil
}

// Close ends the session.
func (t *Tree) Close() error { t.sess.close(); return nil }

// Children lists path's children; an absent path gives found false.
func (t *Tree) Children(ctx context.Context, path string) (kids []string, found bool, err error) {
	ctx, cancel := t.s.withDeadline(ctx)
	defer cancel()
	if err := syncPath(ctx, t.sess.conn, t.s.prefix); err != nil {
		return nil, false, t.s.fail("list "+path, err)
	}
	kids, err = do(ctx, func() ([]string, error) { k, _, err := t.sess.conn.Children(path); return k, err })
	if errors.Is(err, zk.ErrNoNode) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, t.s.fail("list "+path, err)
	}
	return kids, true, nil
}

// Get reads path: its data, data version, modification time (Unix
// milliseconds, the ensemble's clock) and sequence, the number its next
// sequential child gets; found false when absent.
//
// The sequence is not the child version ZooKeeper reports. ZooKeeper
// counts creates only, names a sequential child by that count
// (PrepRequestProcessor.pRequest2TxnCreate, "%010d" of the parent's
// cversion) and reports creates plus deletes, as twice the count less the
// children still there (DataNode.copyStat): three children created and
// one deleted show child version 4, and the next one is numbered 3. Both
// numbers come from one Stat, so the sequence read is exact. The sum is
// taken modulo 2^32, as Java computed the child version in an int: the
// count is below 2^31, so half the sum is the count even when the
// reported child version wrapped.
func (t *Tree) Get(ctx context.Context, path string) (data []byte, version int32, mtime int64, sequence int32, found bool, err error) {
	ctx, cancel := t.s.withDeadline(ctx)
	defer cancel()
	if err := syncPath(ctx, t.sess.conn, t.s.prefix); err != nil {
		return nil, 0, 0, 0, false, t.s.fail("read "+path, err)
	}
	data, st, err := get(ctx, t.sess.conn, path)
	if err != nil {
		return nil, 0, 0, 0, false, t.s.fail("read "+path, err)
	}
	if st == nil {
		return nil, 0, 0, 0, false, nil
	}
	return data, st.Version, st.Mtime, createCount(st.Cversion, st.NumChildren), true, nil
}

// Set writes data into path at version; another version gives an error
// matching ErrVersion.
func (t *Tree) Set(ctx context.Context, path string, data []byte, version int32) error {
	ctx, cancel := t.s.withDeadline(ctx)
	defer cancel()
	_, err := do(ctx, func() (*zk.Stat, error) { return t.sess.conn.Set(path, data, version) })
	if errors.Is(err, zk.ErrBadVersion) {
		err = fmt.Errorf("%w: %w", ErrVersion, err)
	}
	if err != nil {
		return t.s.fail("write "+path, err)
	}
	return nil
}

// BumpChildren raises parent's sequence (Get) from `from` by n in one
// Multi that runs only if the sequence is `from` when it does: it creates
// n sequential children, which ZooKeeper numbers from the sequence, then
// deletes them by the numbers they get when it is `from`. At any other
// sequence a delete misses and the whole Multi fails (ErrVersion),
// nothing changed: a child created after the caller read `from` cannot
// slip under the push. When marker is not "", the same Multi creates
// marker holding markerData and rewrites parent's data as it is
// (parentData), so that parent's modification zxid and the marker's
// creation zxid are both this Multi's (Zxids reads them): the proof,
// later, that the marker and the push are one transaction. An existing
// marker fails the Multi too (ErrNodeExists inside the error).
func (t *Tree) BumpChildren(ctx context.Context, parent string, parentData []byte, from int32, n int, marker string, markerData []byte) error {
	ctx, cancel := t.s.withDeadline(ctx)
	defer cancel()
	ops := []any{}
	if marker != "" {
		ops = append(ops, &zk.CreateRequest{Path: marker, Data: markerData, Acl: zk.WorldACL(zk.PermAll)},
			&zk.SetDataRequest{Path: parent, Data: parentData, Version: -1})
	}
	for range n {
		ops = append(ops, &zk.CreateRequest{Path: parent + "/" + fenceChild, Acl: zk.WorldACL(zk.PermAll), Flags: zk.FlagSequence})
	}
	for i := range n {
		// ZooKeeper's sequential suffix: the parent's sequence, %010d.
		ops = append(ops, &zk.DeleteRequest{Path: fmt.Sprintf("%s/%s%010d", parent, fenceChild, int64(from)+int64(i)), Version: 0})
	}
	if len(ops) == 0 {
		return nil
	}
	res, err := multi(ctx, t.sess.conn, ops...)
	if err != nil && slices.ContainsFunc(res, func(r zk.MultiResponse) bool { return errors.Is(r.Error, zk.ErrNoNode) }) {
		err = fmt.Errorf("%w: the sequence of %s is no longer %d: %w", ErrVersion, parent, from, err)
	}
	if err != nil {
		return t.s.fail("fence "+parent, err)
	}
	return nil
}

// createCount is the count of children ever created, from the child version
// ZooKeeper reports and the children still there (Get says why).
func createCount(cversion, children int32) int32 {
	return int32((uint32(cversion) + uint32(children)) / 2)
}

// fenceChild prefixes the children BumpChildren creates and deletes.
const fenceChild = "firn-fence-"

// Zxids reads the zxids of the transactions that created path and last
// changed its data; found false when absent.
func (t *Tree) Zxids(ctx context.Context, path string) (created, modified int64, found bool, err error) {
	ctx, cancel := t.s.withDeadline(ctx)
	defer cancel()
	if err := syncPath(ctx, t.sess.conn, t.s.prefix); err != nil {
		return 0, 0, false, t.s.fail("read "+path, err)
	}
	_, st, err := get(ctx, t.sess.conn, path)
	if err != nil {
		return 0, 0, false, t.s.fail("read "+path, err)
	}
	if st == nil {
		return 0, 0, false, nil
	}
	return st.Czxid, st.Mzxid, true, nil
}
