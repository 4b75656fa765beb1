package node

import (
	"testing"
	"time"
)

// TestBackoff: each wait lies in the upper half of its step; steps double
// from a quarter second up to the cap and stay there.
func TestBackoff(t *testing.T) {
	tests := []struct {
		name  string
		limit time.Duration
		steps []time.Duration
	}{
		{name: "capped at the lease TTL", limit: 2 * time.Second,
			steps: []time.Duration{250 * time.Millisecond, 500 * time.Millisecond, time.Second, 2 * time.Second, 2 * time.Second, 2 * time.Second}},
		{name: "a cap under the first step", limit: time.Millisecond,
			steps: []time.Duration{250 * time.Millisecond, 250 * time.Millisecond}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for range 100 { // the waits are random: many draws
				b := newBackoff(tt.limit)
				for i, step := range tt.steps {
					if d := b.next(); d < step/2 || d > step {
						t.Fatalf("wait %d = %s, want %s to %s", i, d, step/2, step)
					}
				}
			}
		})
	}
}
