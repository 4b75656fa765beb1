package nodeid

import (
	"context"
	"fmt"
	"time"
)

// Retire ends a lease for good before a node is acquired again, typically
// one that was lost. A lost lease is never revived: its limit was frozen
// the moment it was declared lost, and the next acquisition takes a new
// claim with a new owner token, so no delayed extension of the old life
// can pass the new one's fence. What stays is the old claim, which the
// store may still hold (etcd restores every lease to a full TTL when it
// elects a new leader): Retire closes the lease, releasing the claim by its
// own token within a third of the TTL, and if the release fails, waits one
// TTL (the claim's, as the store granted it) for the claim to expire.
//
// It returns nil once the claim is released, the release's error once the
// wait is over (the caller may claim again either way), or ctx's error if
// ctx ends first.
func (l *Lease) Retire(ctx context.Context) error {
	rctx, cancel := context.WithTimeout(ctx, l.cfg.TTL/3)
	err := l.Close(rctx)
	cancel()
	if err == nil {
		return nil
	}
	ttl := l.claim.TTL
	if ttl <= 0 {
		ttl = l.cfg.TTL
	}
	wait := time.NewTimer(ttl)
	defer wait.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-wait.C:
		return fmt.Errorf("release node %d: waited %s for its claim to expire: %w", l.claim.Node, ttl, err)
	}
}
