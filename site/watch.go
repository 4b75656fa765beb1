package site

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/firn-id/firn/nodeid"
)

// DefaultWatchEvery is how often Watch re-reads the ledger.
const DefaultWatchEvery = 30 * time.Second

// Check compares the ledger's claim of site's value with the registry's
// site record: it returns a *nodeid.SiteError when the ledger records
// the value released, for another site, or for another registry (a copy
// of this one was claimed since, or this one was released with
// --site-destroyed) — the site's processes must stop — and any other
// error when the ledger or the registry did not answer, which changes
// nothing.
func (l *Ledger) Check(ctx context.Context, reg Registry, site nodeid.Site) error {
	v, err := l.value(site)
	if err != nil {
		return err
	}
	c, _, _, err := l.Claim(ctx, v)
	if err != nil {
		return err
	}
	id, err := reg.Store.Record(ctx)
	if err != nil {
		return fmt.Errorf("registry %s: %w", reg.Where, err)
	}
	rec, _, err := nodeid.ParseSiteRecord(id)
	if err != nil {
		return err
	}
	stop := func(format string, a ...any) error {
		return &nodeid.SiteError{Want: site, Reason: fmt.Sprintf(format, a...) + " in ledger " + l.rec.ID}
	}
	switch {
	case c.Site != site.Name:
		return stop("value %d is site %q's", v, c.Site)
	case c.Released:
		return stop("value %d was released", v)
	case c.Registry != rec.Registry:
		return stop("value %d is claimed for registry %s at %s, not this one (%s)", v, c.Registry, c.Where, rec.Registry)
	}
	return nil
}

// Watch re-reads the site's claim from the ledger every every (default
// DefaultWatchEvery) until ctx ends, off the path that issues IDs: when
// Check says the site must stop, it calls stop once and returns. A ledger
// that does not answer is logged, and changes nothing: a site serves
// while the ledger is unreachable.
func (l *Ledger) Watch(ctx context.Context, reg Registry, site nodeid.Site, every time.Duration, stop func(error), log *slog.Logger) {
	if every <= 0 {
		every = DefaultWatchEvery
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		cctx, cancel := context.WithTimeout(ctx, every)
		err := l.Check(cctx, reg, site)
		cancel()
		var se *nodeid.SiteError
		if errors.As(err, &se) {
			stop(err)
			return
		}
		if err != nil && ctx.Err() == nil {
			log.Warn("the site's claim in the ledger was not read; serving on", "site", site.Name, "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
