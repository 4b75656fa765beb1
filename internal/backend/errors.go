package backend

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/firn-id/firn/internal/secret"
)

// ErrConfig is matched by the errors of settings that open no store —
// a store that does not exist, a DSN the driver cannot read, a database
// that answers but refuses the user — as against an outage
// (*UnreachableError). The error's own message is the one to print.
var ErrConfig = errors.New("backend: invalid configuration")

// configError is bad input: its message says what to change.
type configError struct{ msg string }

func (e *configError) Error() string { return e.msg }

func (e *configError) Is(target error) bool { return target == ErrConfig }

func configf(format string, args ...any) error {
	return &configError{msg: fmt.Sprintf(format, args...)}
}

// UnreachableError is a store that refused or did not answer within the
// dial timeout: an outage, which a server waits out. Its message names
// the store's address (never a password) and the cause.
type UnreachableError struct {
	Store    string // postgres, mysql, etcd
	Endpoint string // host:port, or the etcd endpoints, redacted
	Timeout  time.Duration
	Err      error
}

func (e *UnreachableError) Error() string {
	if errors.Is(e.Err, context.DeadlineExceeded) {
		return fmt.Sprintf("%s %s: no answer within %s (--dial-timeout)", e.Store, e.Endpoint, e.Timeout)
	}
	return fmt.Sprintf("%s %s: unreachable: %s", e.Store, e.Endpoint, secret.Scrub(e.Err.Error()))
}

func (e *UnreachableError) Unwrap() error { return e.Err }
