package zkstore

import (
	"context"
	"errors"
	"fmt"
	"strconv"

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
func (t *Tree) Close() error { t.sess.conn.Close(); return nil }

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
// milliseconds, the ensemble's clock) and child version; found false when
// absent.
func (t *Tree) Get(ctx context.Context, path string) (data []byte, version int32, mtime int64, cversion int32, found bool, err error) {
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
	return data, st.Version, st.Mtime, st.Cversion, true, nil
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

// BumpChildren raises parent's child version in one Multi that creates
// and deletes n children of it, and creates marker holding markerData in
// the same Multi when marker is not "". Each create of a child raises the
// child version by one (ZooKeeper 3.8 leaves it on a delete); nothing but
// the version changes under parent. An existing marker refuses the
// whole Multi (ErrNodeExists inside the error): nothing changed.
func (t *Tree) BumpChildren(ctx context.Context, parent string, n int, marker string, markerData []byte) error {
	ctx, cancel := t.s.withDeadline(ctx)
	defer cancel()
	ops := []any{}
	if marker != "" {
		ops = append(ops, &zk.CreateRequest{Path: marker, Data: markerData, Acl: zk.WorldACL(zk.PermAll)})
	}
	for i := range n {
		p := parent + "/firn-fence-" + strconv.Itoa(i)
		ops = append(ops, &zk.CreateRequest{Path: p, Acl: zk.WorldACL(zk.PermAll)}, &zk.DeleteRequest{Path: p, Version: 0})
	}
	if len(ops) == 0 {
		return nil
	}
	if _, err := multi(ctx, t.sess.conn, ops...); err != nil {
		return t.s.fail("fence "+parent, err)
	}
	return nil
}
