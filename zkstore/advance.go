package zkstore

import (
	"context"
	"fmt"
	"strconv"

	"github.com/go-zookeeper/zk"

	"github.com/firn-id/firn/nodeid"
)

// Advance implements nodeid.Store, in a session of its own: one Multi
// creates and deletes held/N (so it succeeds only while no claim holds
// the node) and sets hwm/N at the version read, never lowering it.
func (s *Store) Advance(ctx context.Context, req nodeid.AdvanceRequest) (int64, error) {
	ctx, cancel := s.withDeadline(ctx)
	defer cancel()
	sess, err := s.open(ctx, s.cfg.SessionTimeout)
	if err != nil {
		return 0, err
	}
	defer sess.close()
	conn := sess.conn
	op := fmt.Sprintf("advance node %d", req.Node)
	if err := syncPath(ctx, conn, "/"); err != nil {
		return 0, s.fail(op, err)
	}
	layout, _, err := get(ctx, conn, s.layoutPath())
	if err != nil {
		return 0, s.fail(op, err)
	}
	if layout == nil {
		return 0, &nodeid.UnknownNamespaceError{Namespace: s.prefix}
	}
	if req.Layout.Fingerprint != "" {
		if err := compareLayout(layout, req.Layout); err != nil {
			return 0, err
		}
		if err := req.CheckNode(); err != nil {
			return 0, err
		}
	}
	acl := s.acl
	val := []byte(strconv.FormatInt(req.HWM, 10))
	for range maxRounds {
		if err := syncPath(ctx, conn, s.prefix); err != nil {
			return 0, s.fail(op, err)
		}
		st, err := s.readNode(ctx, conn, req.Node)
		if err != nil {
			return 0, s.fail(op, err)
		}
		if st.held != nil {
			return 0, &nodeid.ConflictError{Node: req.Node}
		}
		if st.hwm >= req.HWM {
			return st.hwm, nil
		}
		ops := []any{
			&zk.CreateRequest{Path: s.heldPath(req.Node), Acl: acl},
			&zk.DeleteRequest{Path: s.heldPath(req.Node), Version: 0},
		}
		if st.hwmStat == nil {
			ops = append(ops, &zk.CreateRequest{Path: s.hwmPath(req.Node), Data: val, Acl: acl})
		} else {
			ops = append(ops, &zk.SetDataRequest{Path: s.hwmPath(req.Node), Data: val, Version: st.hwmStat.Version})
		}
		if _, err := multi(ctx, conn, ops...); err == nil {
			return req.HWM, nil
		}
		// Refused, or its answer lost: the next read decides.
	}
	return 0, s.fail(op, fmt.Errorf("the node's znodes changed under %d attempts", maxRounds))
}
