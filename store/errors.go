package store

import (
	"errors"
	"fmt"
)

// ErrConfig is matched by the errors of settings that open no store —
// a kind that is not registered, a DSN the driver cannot read, a
// database that answers but refuses the user — as against an outage
// (*UnreachableError). The error's own message is the one to print.
var ErrConfig = errors.New("store: invalid configuration")

// FieldError is a setting that opens no store: Field is its path in
// firn's configuration (registry.dsn, segments.stores[1].dsn), Reason
// what is wrong and what to write instead, in the words of the command
// line (--dsn …). It matches ErrConfig.
type FieldError struct {
	Field  string
	Reason string
}

func (e *FieldError) Error() string { return e.Reason }

// Is reports that a FieldError is bad input.
func (e *FieldError) Is(target error) bool { return target == ErrConfig }

// Fieldf returns a *FieldError of field with a formatted reason.
func Fieldf(field, format string, args ...any) error {
	return &FieldError{Field: field, Reason: fmt.Sprintf(format, args...)}
}
