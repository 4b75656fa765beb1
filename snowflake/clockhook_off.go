//go:build !firn_clockhook

package snowflake

// hookOffset is zero: only a binary built with the firn_clockhook tag can
// offset the wall clock (see clockhook_on.go).
func hookOffset() int64 { return 0 }
