package node

import "errors"

var (
	// ErrConfig is matched by the errors of a Config that New refuses.
	ErrConfig = errors.New("node: invalid configuration")

	// ErrClosed is Err's answer once Close was called, and Acquire's and
	// Watch's after it.
	ErrClosed = errors.New("node: holder closed")

	// ErrAcquired is returned by a second Acquire: one holder holds one
	// node at a time.
	ErrAcquired = errors.New("node: already acquired")

	// ErrNotHeld is returned by Watch before Acquire succeeded: there is
	// no lease to watch.
	ErrNotHeld = errors.New("node: no node held")

	// ErrWatching is returned by a second Watch.
	ErrWatching = errors.New("node: already watching")
)
