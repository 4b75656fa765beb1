// Package store is the table of store kinds: each kind of store that can
// hold node IDs with their HWMs (and segment counters) is one row, a
// Kind, that owns its settings' rules, its dialing, its name and its
// schema. Rows register from the stores' own packages, as database/sql
// drivers do, so a program links only the stores it imports:
//
//	import _ "github.com/firn-id/firn/sqlstore/postgres"
//
//	conn, err := store.Open(ctx, store.Settings{Store: "postgres", DSN: dsn})
//
// Check refuses, without I/O, every setting Open would refuse before it
// dials, as a *FieldError naming the setting; a store that does not
// answer within the dial timeout is an *UnreachableError naming its
// address, never a password. This package imports only the standard
// library and the domain packages: it knows no kind by name.
package store
