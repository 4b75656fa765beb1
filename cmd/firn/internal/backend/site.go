package backend

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/firn-id/firn/cmd/firn/internal/config"
	"github.com/firn-id/firn/nodeid"
	"github.com/firn-id/firn/site"
	"github.com/firn-id/firn/store"
)

// siteKinds names the stores that can be a site's registry or a ledger.
func siteKinds() string { return store.Names(func(k store.Kind) bool { return k.Sites }) }

// SiteRegistry opens the registry's node store as site s's registry,
// refusing a store kind that keeps no namespace record firn can replace;
// with segments, and segments on under the site's rules (SegmentsOff),
// the site's segment stores too, in the configuration's order, which a
// claim takes into the site's residue classes.
func (o Options) SiteRegistry(ctx context.Context, s nodeid.Site, segments bool) (site.Registry, func() error, error) {
	o.Site = s
	if k, ok := o.Kind(); ok && !k.Sites {
		return site.Registry{}, nil, configf("registry.store", "%s cannot be a site's registry: it keeps no site record; use --store %s", o.Describe(), siteKinds())
	}
	if err := o.checkSiteSegments(); err != nil {
		return site.Registry{}, nil, err
	}
	c, err := store.Open(ctx, o.Settings())
	if err != nil {
		return site.Registry{}, nil, err
	}
	rec, ok := c.Nodes.(nodeid.Recorder)
	if !ok { // the store table says otherwise
		return site.Registry{}, nil, errors.Join(fmt.Errorf("%s keeps no site record", o.Describe()), c.Close())
	}
	reg := site.Registry{Store: rec, Where: o.Describe()}
	if !segments || o.SegmentsOff() != "" {
		return reg, c.Close, nil
	}
	var t tokens
	list, closeSegs, err := o.segmentStores(ctx, c, &t)
	if err != nil {
		return site.Registry{}, nil, errors.Join(err, c.Close())
	}
	reg.Segments = list
	return reg, closeAll(c.Close, closeSegs), nil
}

// ledgerKinds names the stores that can hold a ledger.
func ledgerKinds() string { return store.Names(func(k store.Kind) bool { return k.Ledgers }) }

// OpenLedger opens the ledger g names, for layout and sites of count
// nodes each, creating it when create is set; the function it returns
// closes every connection it made.
func OpenLedger(ctx context.Context, g config.Ledger, layout nodeid.LayoutID, spec site.Spec, create bool) (*site.Ledger, func() error, error) {
	s := g.Settings()
	switch k, ok := store.Lookup(s.Store); {
	case s.Store == "":
		return nil, nil, configf(s.Field("store"), "name the ledger's store with %s: %s (firn site keeps its claims there)", s.Flag("store"), ledgerKinds())
	case !ok || !k.Ledgers:
		return nil, nil, configf(s.Field("store"), "%s %q: want a store that can hold a ledger, one that keeps what it confirmed and a record firn can replace: %s",
			s.Flag("store"), s.Store, ledgerKinds())
	}
	if err := store.Check(s); err != nil {
		return nil, nil, err
	}
	var (
		mu     sync.Mutex
		closes []func() error
		opened = map[string]nodeid.Recorder{}
	)
	open := func(ns string) (nodeid.Recorder, error) {
		mu.Lock()
		rec, ok := opened[ns]
		mu.Unlock()
		if ok {
			return rec, nil
		}
		ls := s
		ls.Namespace = ns
		c, err := store.Open(ctx, ls)
		if err != nil {
			return nil, fmt.Errorf("ledger: %w", err)
		}
		mu.Lock()
		defer mu.Unlock()
		closes = append(closes, c.Close)
		rec, ok = c.Nodes.(nodeid.Recorder)
		if !ok {
			return nil, fmt.Errorf("ledger: %s keeps no record", store.Describe(ls))
		}
		opened[ns] = rec
		return rec, nil
	}
	closeAll := func() error {
		mu.Lock()
		defer mu.Unlock()
		var errs []error
		for _, c := range closes {
			errs = append(errs, c())
		}
		return errors.Join(errs...)
	}
	l, err := site.OpenLedger(ctx, open, s.Namespace, layout, spec, create)
	if err != nil {
		return nil, nil, errors.Join(err, closeAll())
	}
	return l, closeAll, nil
}

// WatchSite re-reads s's claim from the ledger g names (read access is
// enough) until ctx ends, off the path that issues IDs, and calls revoke
// when it names another site or registry, or was released
// (site.Ledger.Watch), for a process of site s on the registry's node
// store nodes; it returns at once for no site. A process that holds no
// node has its site record re-read in the registry too (watchRecord).
// Without a ledger setting it says so once; a ledger that cannot be
// opened is tried again every site.DefaultWatchEvery.
func (o Options) WatchSite(ctx context.Context, g config.Ledger, layout nodeid.LayoutID, s nodeid.Site, stores int64, nodes nodeid.Store, stop *SiteStop, log *slog.Logger) {
	rec, ok := nodes.(nodeid.Recorder)
	if !ok || s.IsZero() {
		return
	}
	if stop.holder == nil {
		go o.watchRecord(ctx, nodes, s, stop)
	}
	revoke := stop.Revoke
	reg := site.Registry{Store: rec, Where: o.Describe()}
	if g.Store == "" {
		log.Warn("no ledger setting: the site's claim is not re-read while serving (give the ledger's read access)", "site", s.Name)
		return
	}
	for wait := time.Duration(0); ; wait = site.DefaultWatchEvery {
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		l, closeLedger, err := OpenLedger(ctx, g, layout, site.Spec{Count: s.Count, Stores: stores}, false)
		if err != nil {
			log.Warn("the ledger was not opened; serving on", "site", s.Name, "err", err)
			continue
		}
		defer func() { _ = closeLedger() }()
		l.Watch(ctx, reg, s, 0, revoke, log)
		return
	}
}
