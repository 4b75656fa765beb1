package backend

import "github.com/firn-id/firn/store"

// ErrConfig is matched by the errors of settings that open no store —
// a store that does not exist, a DSN the driver cannot read, a database
// that answers but refuses the user — as against an outage
// (*UnreachableError): store.ErrConfig. The error's own message is the
// one to print.
var ErrConfig = store.ErrConfig

// configf is bad input of the setting at field (a *store.FieldError):
// its message says what to change.
func configf(field, format string, args ...any) error { return store.Fieldf(field, format, args...) }

// UnreachableError is a store that refused or did not answer within the
// dial timeout: an outage, which a server waits out
// (store.UnreachableError).
type UnreachableError = store.UnreachableError
