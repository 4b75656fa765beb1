package ids

import (
	"errors"
	"fmt"
	"time"
)

var (
	// ErrConfig is wrapped by every error of bad options: a store not
	// registered, a missing namespace, a layout that cannot issue IDs,
	// the store's own refusal of its DSN or endpoints.
	ErrConfig = errors.New("ids: invalid configuration")

	// ErrClosed is returned by calls on a closed Source, and by calls
	// waiting for a node when Close comes.
	ErrClosed = errors.New("ids: source closed")

	// ErrNotReady is wrapped by *NotReadyError.
	ErrNotReady = errors.New("ids: no node held")
)

// NotReadyError is returned by a call that waited for a node that
// serves until its context ended (or Options.Wait passed), and by Ready
// while none serves. Reason says why, in words; errors.Is reaches
// ErrNotReady, the failure behind the reason (a *nodeid.PoolFullError,
// a store's unreachable error, a *nodeid.BehindHWMError…) and the
// context's error.
type NotReadyError struct {
	Reason string
	// Waited is how long the call waited; 0 from Ready.
	Waited time.Duration
	cause  error
	ctxErr error
}

func (e *NotReadyError) Error() string {
	if e.Waited == 0 {
		return fmt.Sprintf("ids: no node held: %s", e.Reason)
	}
	return fmt.Sprintf("ids: no node held after waiting %s: %s", e.Waited.Round(time.Millisecond), e.Reason)
}

func (e *NotReadyError) Unwrap() []error {
	errs := []error{ErrNotReady}
	for _, err := range []error{e.cause, e.ctxErr} {
		if err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

// FailedError is returned by every call of a source that can never
// serve as configured: the namespace records another layout
// (nodeid.ErrLayoutMismatch), say. Err says why.
type FailedError struct{ Err error }

func (e *FailedError) Error() string { return "ids: cannot serve: " + e.Err.Error() }

func (e *FailedError) Unwrap() error { return e.Err }
