package localstore

import (
	"errors"
	"fmt"

	"github.com/firn-id/firn/nodeid"
)

// ErrLocked is matched by a *LockedError.
var ErrLocked = errors.New("localstore: data directory locked by another process")

// LockedError reports a data directory held by another process.
type LockedError struct {
	Dir string
	PID string // the holder's process ID as it recorded it; may be empty
}

func (e *LockedError) Error() string {
	return fmt.Sprintf("localstore: data directory %s is locked by %s", e.Dir, holderName(e.PID))
}

// Is makes errors.Is(err, ErrLocked) true.
func (e *LockedError) Is(target error) bool { return target == ErrLocked }

// NodeHeldError reports a node whose lock in the node directory (one for
// every data directory of the user) another Store holds, in another
// process or in this one. It unwraps to a *nodeid.ConflictError, so
// errors.Is(err, nodeid.ErrNodeHeld) is true.
type NodeHeldError struct {
	Node uint64
	Lock string // the node's lock file
	PID  string // the holder's process ID as it recorded it; may be empty
	Dir  string // the holder's data directory as it recorded it; may be empty
}

func (e *NodeHeldError) Error() string {
	dir := ""
	if e.Dir != "" {
		dir = " with data directory " + e.Dir
	}
	return fmt.Sprintf("localstore: node %d is held by %s%s (lock %s, which frees itself when that process ends: never delete it): stop it, or take another node", e.Node, holderName(e.PID), dir, e.Lock)
}

// Unwrap returns the *nodeid.ConflictError every store gives for a held node.
func (e *NodeHeldError) Unwrap() error { return &nodeid.ConflictError{Node: e.Node} }

func holderName(pid string) string {
	if pid == "" {
		return "another process"
	}
	return "process " + pid
}

// SpaceMismatchError reports a layout refused by the user's node
// directory: another layout with the same ID bits (nodeid.LayoutID.Bits:
// epoch, tick, widths and order) is recorded there, with other node field
// names or splits, or another opaque key. Both issue IDs of one space, so
// the user's data directories keep one of them, as a namespace of a
// shared store does; another data directory does not help. It unwraps to
// a *nodeid.LayoutMismatchError, so errors.Is(err,
// nodeid.ErrLayoutMismatch) is true.
type SpaceMismatchError struct {
	Stored, Want string // layout descriptions
	Record       string // the file that records Stored
}

func (e *SpaceMismatchError) Error() string {
	return fmt.Sprintf("localstore: the user's node directory records layout %q for these ID bits (%s), and this claim has %q: "+
		"the same IDs read or permuted another way, which every data directory of the user refuses: use the recorded layout",
		e.Stored, e.Record, e.Want)
}

// Unwrap returns the *nodeid.LayoutMismatchError every store gives for
// another layout.
func (e *SpaceMismatchError) Unwrap() error {
	return &nodeid.LayoutMismatchError{Stored: e.Stored, Want: e.Want}
}

// UnrecordedBitsError reports a layout refused by the user's node
// directory because an older firn recorded another layout there (Stored)
// whose ID bits no record tells: that firn recorded a fingerprint and a
// description only, and it is no preset's. The two could be one ID space
// named or permuted two ways (other node field names or splits, another
// opaque key), so neither is served beside the other until a claim with
// the recorded layout records its ID bits (in space-*/layout); then a
// layout with other ID bits is served beside it, and one with the same
// bits is refused with a *SpaceMismatchError. It unwraps to a
// *nodeid.LayoutMismatchError, so errors.Is(err,
// nodeid.ErrLayoutMismatch) is true.
type UnrecordedBitsError struct {
	Stored, Want string // layout descriptions
	Record       string // the file that records Stored
}

func (e *UnrecordedBitsError) Error() string {
	return fmt.Sprintf("localstore: an older firn recorded layout %q in the user's node directory (%s) without its ID bits, and this claim has %q, "+
		"which could issue the same IDs: run firn once with the recorded layout, which records its ID bits; then a layout with other ID bits runs beside it",
		e.Stored, e.Record, e.Want)
}

// Unwrap returns the *nodeid.LayoutMismatchError every store gives for
// another layout.
func (e *UnrecordedBitsError) Unwrap() error {
	return &nodeid.LayoutMismatchError{Stored: e.Stored, Want: e.Want}
}
