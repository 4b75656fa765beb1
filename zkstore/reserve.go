package zkstore

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/go-zookeeper/zk"

	"github.com/firn-id/firn/nodeid"
)

var _ nodeid.Reserver = (*Store)(nil)

func (s *Store) reservedPath() string { return s.prefix + "/" + reservedName }

// reservedValue is the reserved znode's JSON.
type reservedValue struct {
	Nodes      []uint64            `json:"nodes,omitempty"`
	Floor      int64               `json:"floor,omitempty"`
	Note       string              `json:"note,omitempty"`
	Unreserved []nodeid.Unreserved `json:"unreserved,omitempty"`
	Pinned     []nodeid.Pinned     `json:"pinned,omitempty"`
}

// readReservation reads the reserved znode: its reservation and version.
// Empty is none; a namespace made before the znode existed has none
// either, and version -1, which no Multi check passes.
func (s *Store) readReservation(ctx context.Context, conn *zk.Conn) (nodeid.Reservation, int32, error) {
	data, st, err := get(ctx, conn, s.reservedPath())
	if err != nil || st == nil || len(data) == 0 {
		v := int32(-1)
		if st != nil {
			v = st.Version
		}
		return nodeid.Reservation{}, v, err
	}
	var r reservedValue
	if err := json.Unmarshal(data, &r); err != nil {
		return nodeid.Reservation{}, 0, fmt.Errorf("%s holds %q: %w", s.reservedPath(), data, ErrCorrupt)
	}
	// Holds searches a sorted list: JSON written by anything but Reserve
	// (zkCli, another tool) may not be, and an unsorted list would let a
	// reserved node be claimed.
	// A pinned node is reserved whatever the list says.
	for _, p := range r.Pinned {
		r.Nodes = append(r.Nodes, p.Node)
	}
	slices.Sort(r.Nodes)
	r.Nodes = slices.Compact(r.Nodes)
	return nodeid.Reservation{Nodes: r.Nodes, Floor: r.Floor, Note: r.Note, Unreserved: r.Unreserved, Pinned: r.Pinned}, st.Version, nil
}

func reservationValue(r nodeid.Reservation) []byte {
	b, _ := json.Marshal(reservedValue{Nodes: r.Nodes, Floor: r.Floor, Note: r.Note, Unreserved: r.Unreserved, Pinned: r.Pinned})
	return b
}

// Reserve implements nodeid.Reserver, in a session of its own: one Multi
// sets the reserved znode at the version read and creates and deletes
// held/N of every node it adds, so it succeeds only while no claim holds
// one of them (as Advance does).
func (s *Store) Reserve(ctx context.Context, add nodeid.Reservation) (nodeid.Reservation, error) {
	if err := add.Layout.Check(); err != nil {
		return nodeid.Reservation{}, err
	}
	return s.rewrite(ctx, "reserve", add.Layout, func(r nodeid.Reservation) (nodeid.Reservation, error) { return r.Merge(add), nil })
}

// Unreserve implements nodeid.Reserver.
func (s *Store) Unreserve(ctx context.Context, node uint64, note string) (nodeid.Reservation, error) {
	return s.rewrite(ctx, fmt.Sprintf("unreserve node %d", node), nodeid.LayoutID{}, func(r nodeid.Reservation) (nodeid.Reservation, error) {
		return r.Unreserve(node, note)
	})
}

// Reservation implements nodeid.Reserver: a read after a Sync.
func (s *Store) Reservation(ctx context.Context) (nodeid.Reservation, error) {
	ctx, cancel := s.withDeadline(ctx)
	defer cancel()
	sess, err := s.open(ctx, s.cfg.SessionTimeout)
	if err != nil {
		return nodeid.Reservation{}, err
	}
	defer sess.close()
	if err := syncPath(ctx, sess.conn, s.prefix); err != nil {
		return nodeid.Reservation{}, s.fail("read the reservation", err)
	}
	r, _, err := s.readReservation(ctx, sess.conn)
	if err != nil {
		return nodeid.Reservation{}, s.fail("read the reservation", err)
	}
	return r, nil
}

// rewrite applies change to the namespace's reservedValue in one Multi at
// the version read, again while another writer moves it. With a layout it
// prepares the namespace as a claim does (recording the layout on first
// use); without, the namespace must exist.
func (s *Store) rewrite(ctx context.Context, op string, layout nodeid.LayoutID, change func(nodeid.Reservation) (nodeid.Reservation, error)) (nodeid.Reservation, error) {
	ctx, cancel := s.withDeadline(ctx)
	defer cancel()
	sess, err := s.open(ctx, s.cfg.SessionTimeout)
	if err != nil {
		return nodeid.Reservation{}, err
	}
	defer sess.close()
	conn := sess.conn
	if layout.Fingerprint != "" {
		if _, err := s.prepare(ctx, conn, layout); err != nil {
			return nodeid.Reservation{}, err
		}
	}
	for range maxRounds {
		ops, next, err := s.rewriteOps(ctx, conn, op, change)
		if err != nil {
			return nodeid.Reservation{}, err
		}
		if _, err := multi(ctx, conn, ops...); err == nil {
			return next, nil
		}
		// Refused, or its answer lost: the next read decides.
	}
	return nodeid.Reservation{}, s.fail(op, fmt.Errorf("the reservedValue changed under %d attempts", maxRounds))
}

// rewriteOps reads the reservedValue after a Sync and returns the Multi
// that writes change's result, and that result. A node it adds that a
// claim holds gives a *ConflictError.
func (s *Store) rewriteOps(ctx context.Context, conn *zk.Conn, op string, change func(nodeid.Reservation) (nodeid.Reservation, error)) ([]any, nodeid.Reservation, error) {
	if err := syncPath(ctx, conn, s.prefix); err != nil {
		return nil, nodeid.Reservation{}, s.fail(op, err)
	}
	cur, version, err := s.readReservation(ctx, conn)
	if err != nil {
		return nil, cur, s.fail(op, err)
	}
	if version < 0 {
		verb, _, _ := strings.Cut(op, " ") // "unreserve node 3": unreserve
		return nil, cur, &nodeid.UnknownNamespaceError{Namespace: s.prefix, Op: verb}
	}
	next, err := change(cur)
	if err != nil {
		return nil, cur, err
	}
	ops := []any{&zk.SetDataRequest{Path: s.reservedPath(), Data: reservationValue(next), Version: version}}
	for _, n := range next.Nodes {
		if cur.Holds(n) {
			continue
		}
		st, err := s.readNode(ctx, conn, n)
		if err != nil {
			return nil, cur, s.fail(op, err)
		}
		if st.held != nil {
			return nil, cur, &nodeid.ConflictError{Node: n}
		}
		ops = append(ops, &zk.CreateRequest{Path: s.heldPath(n), Acl: s.acl}, &zk.DeleteRequest{Path: s.heldPath(n), Version: 0})
	}
	return ops, next, nil
}
