package backend

import "github.com/firn-id/firn/store"

// Redact returns value with its password replaced by REDACTED: kind is
// a store's name for a DSN, or "endpoint" (store.Redact, which reads the
// value as the store's own row does).
func Redact(kind, value string) string { return store.Redact(kind, value) }
