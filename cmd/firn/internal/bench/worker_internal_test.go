package bench

import (
	"testing"
	"time"
)

// TestRetryDelay: 1 ms after the first failure, doubling, at most 100 ms;
// none without a failure.
func TestRetryDelay(t *testing.T) {
	tests := []struct {
		name     string
		failures int
		want     time.Duration
	}{
		{name: "none", failures: 0, want: 0},
		{name: "negative", failures: -1, want: 0},
		{name: "first", failures: 1, want: time.Millisecond},
		{name: "second", failures: 2, want: 2 * time.Millisecond},
		{name: "seventh", failures: 7, want: 64 * time.Millisecond},
		{name: "eighth, capped", failures: 8, want: 100 * time.Millisecond},
		{name: "ninth", failures: 9, want: 100 * time.Millisecond},
		{name: "past any shift", failures: 1 << 20, want: 100 * time.Millisecond},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := retryDelay(tc.failures); got != tc.want {
				t.Fatalf("retryDelay(%d) = %s, want %s", tc.failures, got, tc.want)
			}
		})
	}
}
