package node

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/firn-id/firn/nodeid"
)

// TestWaitReasons: a holder waits, not ready, for every reason a node may
// come free or usable in time — a full pool, a held node, a store that
// does not answer, every free node ahead of the clock — and gives up on
// anything else.
func TestWaitReasons(t *testing.T) {
	h := &Holder{}
	ahead := &nodeid.AheadError{Nodes: []*nodeid.BehindHWMError{{Node: 3, HWM: time.Now().Add(time.Hour), Now: time.Now()}}, Held: 1, Pool: 2}
	tests := []struct {
		name string
		err  error
		wait bool
	}{
		{"pool full", fmt.Errorf("claim node: %w", &nodeid.PoolFullError{Held: 2, Pool: 2}), true},
		{"node held", fmt.Errorf("claim node: %w", &nodeid.ConflictError{Node: 1}), true},
		{"store silent", context.DeadlineExceeded, true},
		{"every free node ahead", fmt.Errorf("claim node: %w", ahead), true},
		{"layout mismatch", nodeid.ErrLayoutMismatch, false},
	}
	for _, tc := range tests {
		why, wait := h.reason(tc.err)
		if wait != tc.wait || !strings.HasSuffix(why, "retrying") && tc.wait {
			t.Errorf("%s: reason = %q, %v; want wait %v", tc.name, why, wait, tc.wait)
		}
	}
}
