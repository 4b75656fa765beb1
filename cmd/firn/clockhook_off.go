//go:build !firn_clockhook

package main

import "io"

// clockHook does nothing: a production build has no clock hook, whatever
// FIRN_TEST_CLOCK_HOOK says (see clockhook_on.go).
func clockHook(io.Writer) {}
