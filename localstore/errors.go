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
