package localstore

import (
	"errors"
	"fmt"
)

// ErrLocked is matched by a *LockedError.
var ErrLocked = errors.New("localstore: data directory locked by another process")

// LockedError reports a data directory held by another process.
type LockedError struct {
	Dir string
	PID string // the holder's process ID as it recorded it; may be empty
}

func (e *LockedError) Error() string {
	holder := "another process"
	if e.PID != "" {
		holder = "process " + e.PID
	}
	return fmt.Sprintf("localstore: data directory %s is locked by %s: stop it, or give this one another directory", e.Dir, holder)
}

// Is makes errors.Is(err, ErrLocked) true.
func (e *LockedError) Is(target error) bool { return target == ErrLocked }
