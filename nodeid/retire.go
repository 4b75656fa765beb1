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
// elects a new leader): Retire stops the lease's renewals, cutting short
// one in flight, then releases the claim by its own token within a third
// of the TTL. If the release fails it tries again every tenth of the TTL
// for one TTL (the claim's, as the store granted it): a store without a
// leader answers nothing, and the one it elects restores the claim, which
// a later release then frees.
//
// It returns nil once the claim is released, the last release's error
// once the TTL is over (the claim has expired unless the store restored
// it since; the caller may claim again either way), or ctx's error if ctx
// ends first.
func (l *Lease) Retire(ctx context.Context) error {
	l.halt()
	release := func() error {
		rctx, cancel := context.WithTimeout(ctx, l.cfg.TTL/3)
		defer cancel()
		return l.store.Release(rctx, l.claim)
	}
	var err error
	l.closing.Do(func() { l.closed = release() })
	if err = l.closed; err == nil {
		return nil
	}
	ttl := l.claim.TTL
	if ttl <= 0 {
		ttl = l.cfg.TTL
	}
	deadline := time.NewTimer(ttl)
	defer deadline.Stop()
	retry := time.NewTicker(max(l.cfg.TTL/10, 10*time.Millisecond))
	defer retry.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-deadline.C:
			return fmt.Errorf("release node %d: waited %s for its claim to expire: %w", l.claim.Node, ttl, err)
		case <-retry.C:
			if err = release(); err == nil {
				return nil
			}
		}
	}
}
