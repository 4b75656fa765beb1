//go:build firn_clockhook

package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/firn-id/firn/snowflake"
)

// clockHook offsets every generator's wall clock by FIRN_TEST_CLOCK_OFFSET
// (a Go duration) in a binary built with the firn_clockhook tag, and only
// when FIRN_TEST_CLOCK_HOOK=1 as well: the fault harness's clock fault. It
// says so on standard error first, so no log of such a process can be
// mistaken for a production one.
func clockHook(stderr io.Writer) {
	if os.Getenv("FIRN_TEST_CLOCK_HOOK") != "1" {
		return
	}
	d, err := time.ParseDuration(os.Getenv("FIRN_TEST_CLOCK_OFFSET"))
	if err != nil {
		fmt.Fprintf(stderr, "firn: FIRN_TEST_CLOCK_HOOK=1 but FIRN_TEST_CLOCK_OFFSET is not a duration: %v\n", err)
		os.Exit(2)
	}
	fmt.Fprintf(stderr, "firn: TEST BUILD: CLOCK HOOK ON: the wall clock is offset by %s; never run this binary in production\n", d)
	snowflake.SetClockOffsetForTest(d)
}
