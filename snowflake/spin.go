package snowflake

import "runtime"

// spin yields the processor while a caller waits less than a couple of
// milliseconds for the next tick: a timer would oversleep whole ticks.
func spin() { runtime.Gosched() }
