package nodeid

import "math/rand/v2"

// InOrderLosses is how many tries lost to other claimers a ClaimOrder
// takes in order; after each one more, RandomTries free nodes picked at
// random come before the next in order.
const (
	InOrderLosses = 4
	RandomTries   = 4
)

// ClaimOrder is the order in which a store's any-node claim tries the
// nodes of its pool: the lowest free node first, then the next in order,
// so that a few processes started together take nodes 0, 1, 2…; but once
// InOrderLosses tries were lost to other claimers — the node taken since
// the listing — RandomTries free nodes at random come before the next in
// order. Claimers that listed together (a fleet starting, a surge of new
// processes) would otherwise each lose one try per node taken before
// theirs: a write of the store's each, n² of them for n claimers. The
// store's own conditional write alone decides who takes a node, whatever
// the order.
type ClaimOrder struct {
	first  uint64
	pool   uint64
	free   func(uint64) bool
	next   uint64
	tried  map[uint64]bool
	random int
	losses int
}

// NewClaimOrder returns the order of the nodes of pool that free says
// are free as listed (not held, not reserved).
func NewClaimOrder(pool uint64, free func(uint64) bool) *ClaimOrder {
	return &ClaimOrder{pool: pool, free: free, tried: map[uint64]bool{}}
}

// From makes the order start at node first: a site's nodes are first to
// pool−1, and none below first is ever tried, nor scanned.
func (o *ClaimOrder) From(first uint64) *ClaimOrder {
	o.first, o.next = first, max(o.next, first)
	return o
}

// Next returns the next node to try, or false when every free node has
// been tried. It never returns a node twice.
func (o *ClaimOrder) Next() (uint64, bool) {
	for o.random > 0 && o.pool > o.first {
		o.random--
		if r := o.first + rand.Uint64N(o.pool-o.first); !o.tried[r] && o.free(r) {
			o.tried[r] = true
			return r, true
		}
	}
	for ; o.next < o.pool; o.next++ {
		if n := o.next; !o.tried[n] && o.free(n) {
			o.next++
			o.tried[n] = true
			return n, true
		}
	}
	return 0, false
}

// Lost records that the last node tried was taken by another claimer
// since the listing.
func (o *ClaimOrder) Lost() {
	if o.losses++; o.losses >= InOrderLosses {
		o.random = RandomTries
	}
}
