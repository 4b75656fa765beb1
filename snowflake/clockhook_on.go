//go:build firn_clockhook

package snowflake

import (
	"sync/atomic"
	"time"
)

// offset is added to every wall-clock reading of every generator in a
// binary built with the firn_clockhook tag, for the fault harness's clock
// fault. Production builds have no such tag and no such setter.
var offset atomic.Int64

// SetClockOffsetForTest moves the wall clock every generator reads by d.
// It exists only in binaries built with the firn_clockhook tag.
func SetClockOffsetForTest(d time.Duration) { offset.Store(int64(d)) }

func hookOffset() int64 { return offset.Load() }
