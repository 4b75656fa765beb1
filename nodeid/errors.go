package nodeid

import (
	"errors"
	"fmt"
	"time"
)

var (
	// ErrLeaseLost is returned by Store.Renew, and reported by Lease.Err,
	// when the acquisition no longer holds its node: the lease expired or
	// another owner took the node. The generator stops at its HWM.
	ErrLeaseLost = errors.New("nodeid: lease lost")

	// ErrPoolFull is matched by a *PoolFullError.
	ErrPoolFull = errors.New("nodeid: no free node ID")

	// ErrNodeHeld is matched by a *ConflictError.
	ErrNodeHeld = errors.New("nodeid: node ID held by another owner")

	// ErrLayoutMismatch is matched by a *LayoutMismatchError.
	ErrLayoutMismatch = errors.New("nodeid: namespace holds another layout")

	// ErrAlreadyBound is returned by Lease.BindGenerator, and so by snowflake.New,
	// when the lease already drives a generator: two generators on one
	// lease would both pass its HWM check.
	ErrAlreadyBound = errors.New("nodeid: lease already bound to a generator")

	// ErrUnknownNamespace is matched by an *UnknownNamespaceError.
	ErrUnknownNamespace = errors.New("nodeid: namespace never used")

	// ErrNodeOutOfRange is matched by a *NodeRangeError.
	ErrNodeOutOfRange = errors.New("nodeid: node outside the namespace's layout")

	// ErrClosed is returned by a lease or store used after Close.
	ErrClosed = errors.New("nodeid: closed")

	// ErrNodeReserved is matched by a *ReservedError: a claim of a node
	// the namespace's reservation holds.
	ErrNodeReserved = errors.New("nodeid: node ID reserved in the registry")

	// ErrNotReserved is matched by a *ReservedError with Not set.
	ErrNotReserved = errors.New("nodeid: node ID not reserved")
)

// PoolFullError reports that every node ID of the pool is held or reserved.
type PoolFullError struct {
	Pool     uint64 // node values in the layout
	Held     int    // held by live leases
	Reserved int    // never handed out (Config.Reserved)
}

func (e *PoolFullError) Error() string {
	return fmt.Sprintf("nodeid: no free node ID: %d of %d held, %d reserved", e.Held, e.Pool, e.Reserved)
}

// Is makes errors.Is(err, ErrPoolFull) true.
func (e *PoolFullError) Is(target error) bool { return target == ErrPoolFull }

// ConflictError reports that a requested node ID is held by a live lease.
type ConflictError struct {
	Node uint64
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("nodeid: node %d is held by another owner", e.Node)
}

// Is makes errors.Is(err, ErrNodeHeld) true.
func (e *ConflictError) Is(target error) bool { return target == ErrNodeHeld }

// LayoutMismatchError reports a namespace whose stored layout differs from
// the one a node was configured with: two layouts in one ID space collide
// whatever the clocks do.
type LayoutMismatchError struct {
	Stored, Want string // layout descriptions
}

func (e *LayoutMismatchError) Error() string {
	if r, ok, err := ParseSiteRecord(LayoutID{Description: e.Stored}); ok && err == nil && r.Layout.Description == e.Want {
		return fmt.Sprintf("nodeid: the namespace belongs to %s, and this process has no site setting: give it that site's setting (site.name %s, site.fields %s), or use another namespace",
			r.Site, r.Site.Name, r.Site.Fields)
	} else if ok && err == nil {
		return fmt.Sprintf("nodeid: the namespace belongs to %s (layout %q), this process is configured with %q: %s, and that site's setting (site.name %s, site.fields %s); or use another namespace",
			r.Site, r.Layout.Description, e.Want, claimedLayout, r.Site.Name, r.Site.Fields)
	}
	return fmt.Sprintf("nodeid: namespace holds layout %q, this node is configured with %q: use the stored layout or another namespace", e.Stored, e.Want)
}

// Is makes errors.Is(err, ErrLayoutMismatch) true.
func (e *LayoutMismatchError) Is(target error) bool { return target == ErrLayoutMismatch }

// BehindHWMError reports a wall clock further behind the node's stored
// HWM than Config.MaxBehind allows at acquisition.
type BehindHWMError struct {
	Node uint64
	HWM  time.Time // the stored high-water mark
	Now  time.Time // the wall clock
	// InSite: the node is a site's (Config.Site), where starting ahead
	// is refused.
	InSite bool
}

func (e *BehindHWMError) Error() string {
	return fmt.Sprintf("nodeid: node %d: clock %s is %s behind its stored HWM %s; %s",
		e.Node, e.Now.UTC().Format(time.RFC3339Nano), e.HWM.Sub(e.Now), e.HWM.UTC().Format(time.RFC3339Nano), behindAdvice(e.InSite))
}

// behindAdvice is what to do about a clock behind a node's stored HWM:
// the one wording for BehindHWMError and AheadError. In a site starting
// ahead is refused (Config.Validate), so only the clock can move.
func behindAdvice(inSite bool) string {
	if inSite {
		return fmt.Sprintf("fix the clock if it is wrong, or wait for it to pass the HWM (a site cannot start ahead: a release that cannot reach it covers at most %s past the clock)", SiteMaxBehind)
	}
	return "fix the clock, or allow starting at the HWM (--start-ahead, or registry.start_ahead in the configuration)"
}

// UnknownNamespaceError reports an Advance, or an Unreserve, in a
// namespace that no claim ever recorded a layout in: a typo, most likely,
// and an advance there would leave the real namespace unprotected.
type UnknownNamespaceError struct {
	Namespace string   // as the store names it: a key prefix, a column value, a directory
	Known     []string // the namespaces the store holds, where it can list them
	Op        string   // what was refused there: "unreserve"; empty: "advance"
}

func (e *UnknownNamespaceError) Error() string {
	op := e.Op
	if op == "" {
		op = "advance"
	}
	msg := fmt.Sprintf("nodeid: namespace %q has never been used (no layout recorded), so there is nothing to %s", e.Namespace, op)
	switch {
	case e.Known == nil:
		return msg
	case len(e.Known) == 0:
		return msg + "; the store holds no namespace"
	}
	return msg + fmt.Sprintf("; the store holds %s", quoteList(e.Known))
}

// Is makes errors.Is(err, ErrUnknownNamespace) true.
func (e *UnknownNamespaceError) Is(target error) bool { return target == ErrUnknownNamespace }

func quoteList(names []string) string {
	const most = 10
	s := ""
	for i, n := range names {
		if i == most {
			return s + fmt.Sprintf(" and %d more", len(names)-most)
		}
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprintf("%q", n)
	}
	return s
}

// NodeRangeError reports a node that the namespace's layout cannot hold.
type NodeRangeError struct {
	Node, Pool uint64 // Pool: the number of node values, 0..Pool-1
	First      uint64 // a site's first node: its nodes are First..Pool-1
	Layout     string // the layout's description
}

func (e *NodeRangeError) Error() string {
	return fmt.Sprintf("nodeid: node %d is outside the namespace's layout %q: its nodes are %d..%d", e.Node, e.Layout, e.First, e.Pool-1)
}

// Is makes errors.Is(err, ErrNodeOutOfRange) true.
func (e *NodeRangeError) Is(target error) bool { return target == ErrNodeOutOfRange }

// AheadError reports that every free node of the pool has a stored HWM
// further ahead of the clock than Config.MaxBehind allows: a clock set
// back, or nodes advanced past it. Acquire passed each over; errors.As
// finds their *BehindHWMError.
type AheadError struct {
	Nodes []*BehindHWMError // the free nodes, in the order tried
	Held  int               // nodes held by live leases
	Pool  uint64            // node values in the layout
	// InSite: the nodes are a site's, where starting ahead is refused.
	InSite bool
}

func (e *AheadError) Error() string {
	const most = 10
	s := fmt.Sprintf("nodeid: no node to serve from: %d of %d held, and every free node's stored HWM is ahead of the clock:", e.Held, e.Pool)
	for i, n := range e.Nodes {
		if i == most {
			s += fmt.Sprintf(" and %d more", len(e.Nodes)-most)
			break
		}
		if i > 0 {
			s += ","
		}
		s += fmt.Sprintf(" node %d by %s", n.Node, n.HWM.Sub(n.Now))
	}
	return s + "; " + behindAdvice(e.InSite)
}

// Unwrap returns the nodes' *BehindHWMError.
func (e *AheadError) Unwrap() []error {
	errs := make([]error, len(e.Nodes))
	for i, n := range e.Nodes {
		errs[i] = n
	}
	return errs
}

// ReservedError reports a claim of a node the namespace's reservation
// holds (Reserver); with Not set, an Unreserve of a node it does not
// hold; with Pinned set, an Unreserve of a node it pins (Reservation.
// Pinned), Note then being the pin's.
type ReservedError struct {
	Node   uint64
	Note   string // the reservation's note
	Not    bool
	Pinned bool
}

func (e *ReservedError) Error() string {
	if e.Not {
		return fmt.Sprintf("nodeid: node %d is not reserved", e.Node)
	}
	if e.Pinned {
		return fmt.Sprintf("nodeid: node %d is reserved for good and cannot be let out: %s", e.Node, e.Note)
	}
	return fmt.Sprintf("nodeid: node %d is reserved in the registry (%s) until the operator lets it out, confirming it is safe", e.Node, e.Note)
}

// Is makes errors.Is(err, ErrNodeReserved) true, or with Not set
// errors.Is(err, ErrNotReserved).
func (e *ReservedError) Is(target error) bool {
	if e.Not {
		return target == ErrNotReserved
	}
	return target == ErrNodeReserved
}
