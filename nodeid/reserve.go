package nodeid

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// Reserver is a Store that keeps a reservation in the namespace itself:
// nodes its Claim never hands out and a floor under every claim's HWM.
// ClaimRequest.Reserved is one process's configuration; a reservation in
// the store holds for every process and command on the namespace, so a
// node a previous system may still issue on cannot be taken by a firn
// that was started without the setting. A store with no such record does
// not implement it, and a caller that needs one refuses that store.
type Reserver interface {
	Store

	// Reserve merges r into the namespace's reservation (Reservation.Merge)
	// in one write and returns what is stored after it. It records
	// r.Layout on first use, as Claim does, and refuses another layout
	// (*LayoutMismatchError). A node of r.Nodes held by a live lease gives
	// a *ConflictError: its holder issues on it now. Nothing is written
	// when a check fails.
	Reserve(ctx context.Context, r Reservation) (Reservation, error)

	// Reservation returns the namespace's reservation; the zero value
	// when it has none.
	Reservation(ctx context.Context) (Reservation, error)

	// Unreserve lets node be claimed again, recording note (the
	// operator's confirmation) beside it; the floor still applies to it.
	// A node the reservation does not hold gives a *ReservedError
	// matching ErrNotReserved.
	Unreserve(ctx context.Context, node uint64, note string) (Reservation, error)
}

// Reservation is what a Reserver records for a namespace.
type Reservation struct {
	// Nodes are never handed out by Claim, sorted. A claim of one of them
	// by number gives a *ReservedError.
	Nodes []uint64
	// Floor is a lower bound, in Unix milliseconds, on the HWM every
	// Claim of every node returns: no ID issued after it has an earlier
	// tick. 0: none.
	Floor int64
	// Note says what the reservation is for, such as the previous
	// system's workers it stands for.
	Note string
	// Unreserved are the nodes taken out of Nodes by Unreserve, with the
	// operator's note; a later Reserve does not put them back.
	Unreserved []Unreserved
	// Pinned are reserved nodes Unreserve refuses, with why: the previous
	// system's IDs on them are not all below Floor (a worker whose clock
	// jumped, left out of the floor by the operator), so no claim may
	// ever serve them. A pinned node is in Nodes too.
	Pinned []Pinned
	// Layout is the namespace's layout, for Reserve to record or check;
	// Reservation leaves it empty.
	Layout LayoutID
}

// Unreserved is a node let out of a reservation.
type Unreserved struct {
	Node uint64
	Note string
}

// Pinned is a node Unreserve refuses to let out, with the record of why.
type Pinned struct {
	Node uint64
	Note string
}

// pinned reports whether node is pinned in r.
func (r Reservation) pinned(node uint64) (Pinned, bool) {
	i := slices.IndexFunc(r.Pinned, func(p Pinned) bool { return p.Node == node })
	if i < 0 {
		return Pinned{}, false
	}
	return r.Pinned[i], true
}

// Holds reports whether node is reserved.
func (r Reservation) Holds(node uint64) bool {
	_, found := slices.BinarySearch(r.Nodes, node)
	return found
}

// Let reports whether Unreserve let node out of r.
func (r Reservation) Let(node uint64) bool {
	return slices.ContainsFunc(r.Unreserved, func(u Unreserved) bool { return u.Node == node })
}

// Merge returns r with add's nodes, pins and floor: the nodes of both
// except those r let out (an operator's decision a re-run must not undo)
// unless add pins them (their IDs are not under the floor, so letting
// them out is no longer safe), the pins of both, the larger floor, and
// add's note when r has none. It never removes a reserved node nor a pin,
// nor lowers the floor.
func (r Reservation) Merge(add Reservation) Reservation {
	out := Reservation{Floor: max(r.Floor, add.Floor), Note: r.Note, Unreserved: slices.Clone(r.Unreserved), Pinned: slices.Clone(r.Pinned)}
	if out.Note == "" {
		out.Note = add.Note
	}
	for _, p := range add.Pinned {
		if _, ok := out.pinned(p.Node); !ok {
			out.Pinned = append(out.Pinned, p)
		}
	}
	out.Nodes = slices.Clone(r.Nodes)
	for _, n := range add.Nodes {
		if _, pin := out.pinned(n); pin || !r.Let(n) {
			out.Nodes = append(out.Nodes, n)
		}
	}
	for _, p := range out.Pinned {
		out.Nodes = append(out.Nodes, p.Node)
	}
	slices.Sort(out.Nodes)
	out.Nodes = slices.Compact(out.Nodes)
	return out
}

// Unreserve returns r with node let out and note recorded, or a
// *ReservedError matching ErrNotReserved when r does not hold node. A
// note is required: it is the operator's record of why the node is safe.
func (r Reservation) Unreserve(node uint64, note string) (Reservation, error) {
	if strings.TrimSpace(note) == "" {
		return r, fmt.Errorf("nodeid: unreserve node %d: no note given (say why the node is safe to serve)", node)
	}
	if !r.Holds(node) {
		return r, &ReservedError{Node: node, Not: true}
	}
	if p, ok := r.pinned(node); ok {
		return r, &ReservedError{Node: node, Note: p.Note, Pinned: true}
	}
	out := r.Merge(Reservation{})
	out.Nodes = slices.DeleteFunc(out.Nodes, func(n uint64) bool { return n == node })
	out.Unreserved = append(out.Unreserved, Unreserved{Node: node, Note: note})
	return out, nil
}

// Claimable checks a claim request against r: a node asked for by
// number that r holds gives a *ReservedError. For a claim of any node,
// it returns req.Reserved with r's nodes added.
func (r Reservation) Claimable(req ClaimRequest) ([]uint64, error) {
	if !req.AnyNode && r.Holds(req.Node) {
		return nil, &ReservedError{Node: req.Node, Note: r.Note}
	}
	out := slices.Clone(req.Reserved)
	for _, n := range r.Nodes {
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out, nil
}
