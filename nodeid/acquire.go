package nodeid

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"
)

// wallMS reads the wall clock; a variable so tests can set it back.
var wallMS = func() int64 { return time.Now().UnixMilli() }

// Acquire claims a node ID, reserves its HWM ahead of the clock, and keeps
// both alive in the background until Close or until the lease is lost.
//
// Without Config.Node it takes the lowest free node whose stored HWM is
// within Config.MaxBehind of the clock: a free node further ahead is
// released again and passed over (Lease.Skipped names it), so one node
// left far ahead by a bad clock does not block the pool. If every free
// node is ahead, Acquire returns an *AheadError naming them. A requested
// node that is ahead gives a *BehindHWMError, unless Config.StartAhead.
func Acquire(ctx context.Context, store Store, cfg Config) (*Lease, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	req := ClaimRequest{Pool: 1 << uint(cfg.NodeBits), Reserved: cfg.Reserved, Layout: cfg.Layout, TTL: cfg.TTL}
	var floor int64
	var record LayoutID
	if !cfg.Site.IsZero() {
		id, f, err := checkSite(ctx, store, cfg.Layout, cfg.Site)
		if err != nil {
			return nil, err
		}
		floor, record = f, id
		req.Layout = SiteLayout(cfg.Layout, cfg.Site)
		req.First, req.Pool = cfg.Site.First, cfg.Site.First+cfg.Site.Count
	}
	if cfg.Node != nil {
		req.Node = *cfg.Node
	} else {
		req.AnyNode = true
	}
	var ahead []*BehindHWMError
	for {
		l, err := acquireOnce(ctx, store, cfg, req, siteClaim{record, floor})
		// Only a bare *BehindHWMError says the node was released: one
		// joined with a failed release is returned as it is.
		cb, behind := err.(*BehindHWMError)
		switch {
		case err == nil:
			l.skipped = ahead
			l.wg.Add(1)
			go l.run(l.confirmedAt)
			return l, nil
		case len(ahead) > 0 && errors.Is(err, ErrPoolFull):
			var pf *PoolFullError
			errors.As(err, &pf)
			return nil, &AheadError{Nodes: ahead, Held: pf.Held, Pool: req.Size(), InSite: !cfg.Site.IsZero()}
		case req.AnyNode && behind:
			// The node is released: set it aside and take the next.
			ahead = append(ahead, cb)
			req.Reserved = append(slices.Clip(req.Reserved), cb.Node)
		default:
			return nil, err
		}
	}
}

// siteClaim is the site record an acquisition checked, and its floor.
type siteClaim struct {
	record LayoutID
	floor  int64
}

// releaseClaim gives back a claim an acquisition cannot serve from,
// within cleanupRelease.
func releaseClaim(ctx context.Context, store Store, cfg Config, claim Claim) error {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), min(cfg.TTL/3, cleanupRelease))
	defer cancel()
	return store.Release(rctx, claim)
}

// cleanupRelease bounds the release of a claim an acquisition could not
// serve from.
const cleanupRelease = 2 * time.Second

// acquireOnce claims one node and makes its first extension; a node it
// cannot serve from is released before it returns.
func acquireOnce(ctx context.Context, store Store, cfg Config, req ClaimRequest, site siteClaim) (*Lease, error) {
	claim, err := store.Claim(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("claim node: %w", err)
	}
	if site.record.Fingerprint != "" {
		if err := sameRecord(ctx, store, site.record); err != nil {
			return nil, errors.Join(err, releaseClaim(ctx, store, cfg, claim))
		}
	}
	// A site's record carries the floor of the value's previous site:
	// every node starts past it.
	claim.HWM = max(claim.HWM, site.floor)
	l := &Lease{store: store, cfg: cfg, claim: claim, start: claim.HWM,
		done: make(chan struct{}), stop: make(chan struct{})}
	l.stopCtx, l.cancelStop = context.WithCancel(context.Background())
	if err := l.reserve(ctx); err != nil {
		// A fresh context (releaseClaim): the caller's may be what failed
		// (or a Close that waits for this). A store that answers releases
		// at once; one that does not is left after cleanupRelease, and
		// the claim expires by itself.
		if rerr := releaseClaim(ctx, store, cfg, claim); rerr != nil {
			return nil, errors.Join(err, rerr)
		}
		return nil, err
	}
	return l, nil
}
