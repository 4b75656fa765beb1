package node

import (
	"github.com/firn-id/firn/nodeid"
	"github.com/firn-id/firn/snowflake"
)

// LayoutID is the ID space a namespace records for plain IDs of layout
// l: its fingerprint, its description and the fingerprint of the bits it
// composes. Every process of a namespace — firn serve, firn next, a
// program embedding package ids — computes it here, so the same layout
// is one ID space to all of them.
func LayoutID(l snowflake.Layout) nodeid.LayoutID {
	return nodeid.LayoutID{Fingerprint: l.Fingerprint(), Description: l.String(), Bits: l.BitsFingerprint()}
}
