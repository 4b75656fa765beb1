package etcdstore

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"
	"time"

	"go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/mvccpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/firn-id/firn/nodeid"
)

// Store is a nodeid.Store on etcd. Under its prefix:
//
//	layout     the namespace's layout: fingerprint, newline, description
//	nodes/N    the token of the acquisition holding node N, on its etcd lease
//	hwm/N      node N's HWM in Unix milliseconds, on no lease: it outlives
//	           every claim
type Store struct {
	cli    *clientv3.Client
	prefix string
}

// New returns a store on cli under prefix (the namespace, such as
// "/firn/orders/"; a missing leading or trailing slash is added). It does
// no I/O; the caller closes cli.
func New(cli *clientv3.Client, prefix string) *Store {
	return &Store{cli: cli, prefix: normalize(prefix)}
}

// normalize gives a namespace one spelling: "orders", "/orders" and
// "/orders/" are one namespace, "/orders/", not three that would each
// hand out node 0.
func normalize(prefix string) string {
	p := path.Clean("/" + prefix)
	if p == "/" {
		return p
	}
	return p + "/"
}

func (s *Store) layoutKey() string       { return s.prefix + "layout" }
func (s *Store) nodesPrefix() string     { return s.prefix + "nodes/" }
func (s *Store) nodeKey(n uint64) string { return s.nodesPrefix() + strconv.FormatUint(n, 10) }
func (s *Store) hwmKey(n uint64) string  { return s.prefix + "hwm/" + strconv.FormatUint(n, 10) }
func token(id clientv3.LeaseID) string   { return strconv.FormatInt(int64(id), 16) }
func leaseOf(c nodeid.Claim) clientv3.LeaseID {
	id, _ := strconv.ParseInt(c.Token, 16, 64)
	return clientv3.LeaseID(id)
}

// Claim implements nodeid.Store. The claim's token is a new etcd lease of
// req.TTL (etcd rounds it up to its minimum, about 1.5 × its election
// timeout; the claim's TTL is the one granted). The node key is created on
// that lease and the HWM read in the same transaction, so no write of a
// previous owner can land between them.
func (s *Store) Claim(ctx context.Context, req nodeid.ClaimRequest) (nodeid.Claim, error) {
	ttl := int64((req.TTL + 999_999_999) / 1_000_000_000)
	var grant *clientv3.LeaseGrantResponse
	for try := 0; ; try++ {
		rev, err := s.checkLayout(ctx, req.Layout)
		if err != nil {
			return nodeid.Claim{}, err
		}
		if grant == nil {
			if grant, err = s.cli.Grant(ctx, max(ttl, 1)); err != nil {
				return nodeid.Claim{}, fmt.Errorf("grant lease: %w", err)
			}
		}
		c, err := s.take(ctx, req, grant.ID, rev)
		if errors.Is(err, errRecordMoved) && try < 3 {
			continue // the record changed since it was checked: check it again
		}
		if err != nil {
			// The lease holds nothing; revoke it rather than wait for its TTL.
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), max(req.TTL, time.Second))
			_, _ = s.cli.Revoke(rctx, grant.ID)
			cancel()
			return nodeid.Claim{}, err
		}
		// The claim lives as long as etcd granted, which may be longer than
		// asked: a holder that cannot release it waits that long.
		c.TTL = max(req.TTL, time.Duration(grant.TTL)*time.Second)
		return c, nil
	}
}

// errRecordMoved: the layout key changed between a claim's check of it
// and the transaction that takes a node.
var errRecordMoved = errors.New("etcdstore: the namespace's record changed during the claim")

// checkLayout records want on the namespace's first use, refuses another
// layout, and returns the layout key's revision: every claim and renewal
// compares it in its transaction, so a Rerecord ends them.
func (s *Store) checkLayout(ctx context.Context, want nodeid.LayoutID) (int64, error) {
	if err := want.Check(); err != nil {
		return 0, err
	}
	val := want.Fingerprint + "\n" + want.Description
	resp, err := s.cli.Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(s.layoutKey()), "=", 0)).
		Then(clientv3.OpPut(s.layoutKey(), val)).
		Else(clientv3.OpGet(s.layoutKey())).
		Commit()
	if err != nil {
		return 0, fmt.Errorf("check layout: %w", err)
	}
	if resp.Succeeded {
		return resp.Header.Revision, nil
	}
	kvs := resp.Responses[0].GetResponseRange().Kvs
	if len(kvs) == 0 {
		return 0, errors.New("check layout: layout key vanished")
	}
	return kvs[0].ModRevision, compareLayout(kvs[0].Value, want)
}

// compareLayout refuses want unless it is the layout the layout key's
// value records.
func compareLayout(val []byte, want nodeid.LayoutID) error {
	fp, desc, _ := strings.Cut(string(val), "\n")
	if fp != want.Fingerprint {
		return &nodeid.LayoutMismatchError{Stored: desc, Want: want.Description}
	}
	return nil
}

// take claims req.Node, or the lowest free node (in nodeid.ClaimOrder),
// on lease.
func (s *Store) take(ctx context.Context, req nodeid.ClaimRequest, lease clientv3.LeaseID, rev int64) (nodeid.Claim, error) {
	if !req.AnyNode {
		c, ok, err := s.tryNode(ctx, req.Node, lease, req, rev)
		if err == nil && !ok {
			err = &nodeid.ConflictError{Node: req.Node}
		}
		return c, err
	}
	held, err := s.heldNodes(ctx)
	if err != nil {
		return nodeid.Claim{}, err
	}
	order := nodeid.NewClaimOrder(req.Pool, func(n uint64) bool { return !held[n] && req.Free(n) }).From(req.First)
	for n, more := order.Next(); more; n, more = order.Next() {
		c, ok, err := s.tryNode(ctx, n, lease, req, rev)
		if err != nil || ok {
			return c, err
		}
		held[n] = true // taken since the listing
		order.Lost()
	}
	count := 0
	for n := range held {
		if req.Free(n) {
			count++
		}
	}
	return nodeid.Claim{}, &nodeid.PoolFullError{Pool: req.Size(), Held: count, Reserved: len(req.Reserved)}
}

// tryNode takes node n if its key is absent and the namespace's record is
// still at revision rev, reading its HWM in the same transaction.
func (s *Store) tryNode(ctx context.Context, n uint64, lease clientv3.LeaseID, req nodeid.ClaimRequest, rev int64) (nodeid.Claim, bool, error) {
	resp, err := s.cli.Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(s.nodeKey(n)), "=", 0), s.recordAt(rev)).
		Then(clientv3.OpPut(s.nodeKey(n), token(lease), clientv3.WithLease(lease)), clientv3.OpGet(s.hwmKey(n))).
		Else(clientv3.OpGet(s.layoutKey())).
		Commit()
	if err != nil {
		return nodeid.Claim{}, false, fmt.Errorf("claim node %d: %w", n, err)
	}
	if !resp.Succeeded {
		if s.moved(resp.Responses[0], rev) {
			return nodeid.Claim{}, false, errRecordMoved
		}
		return nodeid.Claim{}, false, nil
	}
	hwm, _, err := parseHWM(resp.Responses[1].GetResponseRange().Kvs, n)
	if err != nil {
		return nodeid.Claim{}, false, err
	}
	return nodeid.Claim{Node: n, Token: token(lease), HWM: hwm, TTL: req.TTL, Fence: rev}, true, nil
}

// recordAt compares the layout key's revision with rev: the record a
// claim was taken under is still the namespace's.
func (s *Store) recordAt(rev int64) clientv3.Cmp {
	return clientv3.Compare(clientv3.ModRevision(s.layoutKey()), "=", rev)
}

// moved reports whether a response to a Get of the layout key shows it at
// another revision than rev.
func (s *Store) moved(r *etcdserverpb.ResponseOp, rev int64) bool {
	kvs := r.GetResponseRange().Kvs
	return len(kvs) == 0 || kvs[0].ModRevision != rev
}

func (s *Store) heldNodes(ctx context.Context) (map[uint64]bool, error) {
	resp, err := s.cli.Get(ctx, s.nodesPrefix(), clientv3.WithPrefix(), clientv3.WithKeysOnly())
	if err != nil {
		return nil, fmt.Errorf("list nodes: %w", err)
	}
	held := map[uint64]bool{}
	for _, kv := range resp.Kvs {
		if n, err := strconv.ParseUint(strings.TrimPrefix(string(kv.Key), s.nodesPrefix()), 10, 64); err == nil {
			held[n] = true
		}
	}
	return held, nil
}

// parseHWM reads an HWM key's value and revision; absent means 0.
func parseHWM(kvs []*mvccpb.KeyValue, n uint64) (int64, int64, error) {
	if len(kvs) == 0 {
		return 0, 0, nil
	}
	hwm, err := strconv.ParseInt(string(kvs[0].Value), 10, 64)
	if err != nil {
		return 0, 0, fmt.Errorf("read HWM of node %d: corrupt value %q", n, kvs[0].Value)
	}
	return hwm, kvs[0].ModRevision, nil
}

// Renew implements nodeid.Store: a keep-alive of the claim's lease, then a
// transaction that writes the HWM only while the node key is on that lease
// and the HWM key is as read, so it is fenced and never lowers the value.
func (s *Store) Renew(ctx context.Context, c nodeid.Claim, hwm int64) (int64, error) {
	lease := leaseOf(c)
	if _, err := s.cli.KeepAliveOnce(ctx, lease); err != nil {
		if errors.Is(err, rpctypes.ErrLeaseNotFound) {
			return 0, nodeid.ErrLeaseLost
		}
		return 0, fmt.Errorf("keep node %d alive: %w", c.Node, err)
	}
	for {
		resp, err := s.cli.Get(ctx, s.hwmKey(c.Node))
		if err != nil {
			return 0, fmt.Errorf("read HWM of node %d: %w", c.Node, err)
		}
		stored, rev, err := parseHWM(resp.Kvs, c.Node)
		if err != nil {
			return 0, err
		}
		owned := clientv3.Compare(clientv3.LeaseValue(s.nodeKey(c.Node)), "=", lease)
		// The namespace's record is as the claim found it: a Rerecord
		// (a site's release) ends every lease in this same compare.
		record := s.recordAt(c.Fence)
		if stored >= hwm {
			// Nothing to raise; still confirm the node is ours.
			own, err := s.cli.Txn(ctx).If(owned, record).Commit()
			if err != nil {
				return 0, fmt.Errorf("renew node %d: %w", c.Node, err)
			}
			if !own.Succeeded {
				return 0, nodeid.ErrLeaseLost
			}
			return stored, nil
		}
		tx, err := s.cli.Txn(ctx).
			If(owned, record, clientv3.Compare(clientv3.ModRevision(s.hwmKey(c.Node)), "=", rev)).
			Then(clientv3.OpPut(s.hwmKey(c.Node), strconv.FormatInt(hwm, 10))).
			Else(clientv3.OpGet(s.nodeKey(c.Node)), clientv3.OpGet(s.layoutKey())).
			Commit()
		if err != nil {
			return 0, fmt.Errorf("renew node %d: %w", c.Node, err)
		}
		if tx.Succeeded {
			return hwm, nil
		}
		if kvs := tx.Responses[0].GetResponseRange().Kvs; len(kvs) == 0 || clientv3.LeaseID(kvs[0].Lease) != lease || s.moved(tx.Responses[1], c.Fence) {
			return 0, nodeid.ErrLeaseLost
		}
		// The HWM moved (an advance) since it was read: read it again.
	}
}

// Release implements nodeid.Store: it revokes the claim's lease if the
// node key is still on it, which deletes the key; the HWM stays.
func (s *Store) Release(ctx context.Context, c nodeid.Claim) error {
	resp, err := s.cli.Get(ctx, s.nodeKey(c.Node))
	if err != nil {
		return fmt.Errorf("release node %d: %w", c.Node, err)
	}
	if len(resp.Kvs) == 0 || clientv3.LeaseID(resp.Kvs[0].Lease) != leaseOf(c) {
		return nil
	}
	if _, err := s.cli.Revoke(ctx, leaseOf(c)); err != nil && !errors.Is(err, rpctypes.ErrLeaseNotFound) {
		return fmt.Errorf("release node %d: %w", c.Node, err)
	}
	return nil
}

// Advance implements nodeid.Store: a compare-and-swap on the HWM key that
// never lowers it, in a transaction that also requires the node key to be
// absent: a node is held while its key exists on a live lease.
func (s *Store) Advance(ctx context.Context, req nodeid.AdvanceRequest) (int64, error) {
	if err := s.matchLayout(ctx, req); err != nil {
		return 0, err
	}
	free := clientv3.Compare(clientv3.CreateRevision(s.nodeKey(req.Node)), "=", 0)
	for {
		// The HWM and the node key, read at one revision.
		resp, err := s.cli.Txn(ctx).
			Then(clientv3.OpGet(s.hwmKey(req.Node)), clientv3.OpGet(s.nodeKey(req.Node), clientv3.WithKeysOnly())).
			Commit()
		if err != nil {
			return 0, fmt.Errorf("advance node %d: %w", req.Node, err)
		}
		if len(resp.Responses[1].GetResponseRange().Kvs) > 0 {
			return 0, &nodeid.ConflictError{Node: req.Node}
		}
		stored, rev, err := parseHWM(resp.Responses[0].GetResponseRange().Kvs, req.Node)
		if err != nil || stored >= req.HWM {
			return stored, err
		}
		tx, err := s.cli.Txn(ctx).
			If(free, clientv3.Compare(clientv3.ModRevision(s.hwmKey(req.Node)), "=", rev)).
			Then(clientv3.OpPut(s.hwmKey(req.Node), strconv.FormatInt(req.HWM, 10))).
			Else(clientv3.OpGet(s.nodeKey(req.Node), clientv3.WithKeysOnly())).
			Commit()
		if err != nil {
			return 0, fmt.Errorf("advance node %d: %w", req.Node, err)
		}
		if tx.Succeeded {
			return req.HWM, nil
		}
		if len(tx.Responses[0].GetResponseRange().Kvs) > 0 {
			return 0, &nodeid.ConflictError{Node: req.Node}
		}
		// The node key is absent, so the HWM moved since it was read
		// (a racing advance): read it again.
	}
}

// matchLayout refuses a namespace with no recorded layout, a layout other
// than the recorded one, and a node outside it; it records none.
func (s *Store) matchLayout(ctx context.Context, req nodeid.AdvanceRequest) error {
	resp, err := s.cli.Get(ctx, s.layoutKey())
	if err != nil {
		return fmt.Errorf("read layout: %w", err)
	}
	if len(resp.Kvs) == 0 {
		known, err := s.namespaces(ctx)
		if err != nil {
			return err
		}
		return &nodeid.UnknownNamespaceError{Namespace: s.prefix, Known: known}
	}
	if req.Layout.Fingerprint == "" {
		return nil
	}
	if err := req.Layout.Check(); err != nil {
		return err
	}
	if err := compareLayout(resp.Kvs[0].Value, req.Layout); err != nil {
		return err
	}
	return req.CheckNode()
}

// namespaces lists the prefixes under which a layout is recorded.
func (s *Store) namespaces(ctx context.Context) ([]string, error) {
	resp, err := s.cli.Get(ctx, "/", clientv3.WithPrefix(), clientv3.WithKeysOnly())
	if err != nil {
		return nil, fmt.Errorf("list namespaces: %w", err)
	}
	known := []string{}
	for _, kv := range resp.Kvs {
		if p, ok := strings.CutSuffix(string(kv.Key), "/layout"); ok {
			known = append(known, p+"/")
		}
	}
	return known, nil
}
