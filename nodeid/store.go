package nodeid

import (
	"context"
	"fmt"
	"slices"
	"time"
)

// Store is one namespace of node IDs: who holds which node, until when,
// and each node's HWM. Implementations: package localstore (a data
// directory), etcdstore, sqlstore; nodeidtest.MemStore for tests. All
// times are Unix milliseconds; HWMs are exclusive bounds.
type Store interface {
	// Claim takes a node for a new acquisition: req.Node, or with
	// req.AnyNode the lowest free node of the pool outside req.Reserved.
	// It reads the node's stored HWM under the lock that takes the node,
	// so no write of a previous owner can land between the read and the
	// takeover, and it returns a token unique to this acquisition. It
	// records req.Layout for the namespace on first use and returns a
	// *LayoutMismatchError if another layout is recorded. A node held by
	// a live lease gives a *ConflictError; a full pool a *PoolFullError.
	Claim(ctx context.Context, req ClaimRequest) (Claim, error)

	// Renew keeps the claim alive for another TTL and raises the stored
	// HWM to at least hwm, in one write that succeeds only while c's token
	// holds the node and its lease has not expired by the store's clock.
	// It never lowers the HWM. It returns the stored HWM after the write,
	// or ErrLeaseLost.
	Renew(ctx context.Context, c Claim, hwm int64) (int64, error)

	// Release gives the node up if c still holds it. The HWM stays.
	Release(ctx context.Context, c Claim) error

	// Advance raises a node's HWM to at least req.HWM, for use after a restore, and
	// returns the stored HWM; it never lowers it. A namespace with no recorded layout
	// (never claimed: a typo, most likely) gives an *UnknownNamespaceError. When
	// req.Layout.Fingerprint is set it must match the recorded layout
	// (*LayoutMismatchError otherwise), and then req.CheckNode must pass
	// (*NodeRangeError). A node held by a live lease gives a *ConflictError: its
	// holder must stop first, since it keeps issuing below the new HWM. Nothing is
	// written when any check fails.
	Advance(ctx context.Context, req AdvanceRequest) (int64, error)
}

// AdvanceRequest says which node's HWM to raise, to what, and under which
// layout the value was computed.
type AdvanceRequest struct {
	// Node is the node whose HWM to raise; it need not have been claimed.
	Node uint64
	// HWM is the new HWM in Unix milliseconds, an exclusive bound; a
	// stored value at or past it is kept.
	HWM int64
	// Layout is the layout HWM was computed with (decoding an ID, say),
	// checked against the one the namespace recorded at its first Claim.
	// The zero value skips the check, and the node range's. Advance never
	// records a layout.
	Layout LayoutID
	// Pool is the number of node values of Layout (1 << node bits): a
	// node at or past it is refused. Zero skips the check.
	Pool uint64
	// First is the lowest node a site may advance (Site.First): a
	// node below it is refused.
	First uint64
}

// CheckNode returns a *NodeRangeError if the node is outside Pool. Stores
// call it once Layout matched the recorded layout, so the range is the
// namespace's.
func (r AdvanceRequest) CheckNode() error {
	if r.Pool > 0 && (r.Node >= r.Pool || r.Node < r.First) {
		return &NodeRangeError{Node: r.Node, Pool: r.Pool, First: r.First, Layout: r.Layout.Description}
	}
	return nil
}

// ClaimRequest says which node to claim and for how long.
type ClaimRequest struct {
	// Node is the node to claim, unless AnyNode is set.
	Node    uint64
	AnyNode bool
	// Pool is the number of node values: 1 << node bits. AnyNode
	// claims take a node from First to Pool−1 (a site's nodes).
	Pool  uint64
	First uint64
	// Reserved lists nodes never handed out to AnyNode claims.
	Reserved []uint64
	// Layout identifies the namespace's ID layout: a fingerprint, and a
	// description for error messages.
	Layout LayoutID
	// TTL is how long the claim lives without a Renew.
	TTL time.Duration
}

// LayoutID identifies a layout: its fingerprint decides, its description
// explains.
type LayoutID struct {
	Fingerprint string
	Description string
	// Bits identifies the IDs the layout composes, without what only
	// reads them (snowflake.Layout.BitsFingerprint: not the node fields'
	// names nor their split). Layouts with one Bits issue the same ID for
	// the same node, tick and sequence: a store that keeps the nodes of
	// several layouts apart (localstore) keeps them apart by Bits and
	// refuses a second Fingerprint for one Bits. Empty means Fingerprint:
	// a program that builds its own LayoutID and shares a local store's
	// node directory with firn's commands sets Bits to the layout's
	// BitsFingerprint, or a second opaque key over the same bits is not
	// refused beside them.
	Bits string
}

// Check refuses a layout ID that a store could not record and compare
// whole: a fingerprint or description longer than MaxFingerprint or
// MaxDescription (a column would cut it), or a fingerprint holding a
// control character. A store that keeps both in one value splits them at
// a newline, so two fingerprints equal up to one would pass as the same
// layout, and two layouts in one namespace collide.
func (id LayoutID) Check() error {
	if len(id.Fingerprint) > MaxFingerprint || len(id.Description) > MaxDescription {
		return fmt.Errorf("nodeid: layout fingerprint of %d bytes or description of %d: want at most %d and %d (what stores record)",
			len(id.Fingerprint), len(id.Description), MaxFingerprint, MaxDescription)
	}
	for _, r := range id.Fingerprint {
		if r < 0x20 || r == 0x7f {
			return fmt.Errorf("nodeid: layout fingerprint %q holds a control character", id.Fingerprint)
		}
	}
	return nil
}

// Claim is a node held by one acquisition.
type Claim struct {
	Node  uint64
	Token string // unique to this acquisition; fences every write
	HWM   int64  // the stored HWM when the node was taken
	// TTL is how long the claim lives without a Renew, as the store
	// granted it: at least the request's TTL.
	TTL time.Duration
	// Fence is the version of the namespace's record the claim was
	// taken under, for a store whose renewals compare it (etcd's layout
	// key's revision): a Rerecord ends the claim. Callers pass it back
	// unchanged.
	Fence int64
}

// Free reports whether an AnyNode claim may take node n: within First to
// Pool−1 and not reserved.
func (r ClaimRequest) Free(n uint64) bool {
	return n >= r.First && n < r.Pool && !slices.Contains(r.Reserved, n)
}

// Size is the number of nodes an AnyNode claim chooses among.
func (r ClaimRequest) Size() uint64 { return r.Pool - min(r.First, r.Pool) }
