package backend

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/firn-id/firn/nodeid"
	"github.com/firn-id/firn/segment"
	"github.com/firn-id/firn/sqlstore"
	"github.com/firn-id/firn/store"
)

// SegmentsOff is why the registry's store serves no segments, or "" when
// it does: a store that holds no segment counters (its row says so)
// leaves segment mode off without a database of their own
// (segments.store or segments.stores).
func (o Options) SegmentsOff() string {
	if k, ok := o.Kind(); ok && !k.Segments && o.Segments.Store == "" && len(o.Segments.Stores) == 0 {
		return fmt.Sprintf("segments are off: %s", o.noSegments())
	}
	own := o.Segments.Store != "" || len(o.Segments.Stores) > 0
	switch k, ok := o.Kind(); {
	case o.Site.IsZero():
	case !own && (!ok || !k.Database):
		return fmt.Sprintf("segments are off: %s keeps segment counters that record no residue class, as a site's must so that no two sites issue one ID: "+
			"keep the site's segments in a database, --segment-store postgres or mysql with --segment-dsn and --segments set (or tinyid)", o.Describe())
	case !residueFormat(o.Segments.Format):
		return fmt.Sprintf("segments are off: %s", siteFormat(o.Segments.Format))
	}
	return ""
}

// checkSiteSegments refuses a site's own segment database or set whose
// rows record no residue class: segments named for the site that it
// could not serve.
func (o Options) checkSiteSegments() error {
	if !o.Site.IsZero() && (o.Segments.Store != "" || len(o.Segments.Stores) > 0) && !residueFormat(o.Segments.Format) {
		return configf("segments.format", "%s", siteFormat(o.Segments.Format))
	}
	return nil
}

// residueFormat reports whether format's rows record their residue
// class, as a set of stores and sites need.
func residueFormat(format string) bool { return format == "tinyid" || format == "set" }

// siteFormat says why a site serves no segments of format.
func siteFormat(format string) string {
	return fmt.Sprintf("a site's segment rows must record their residue class, so that no two sites issue one ID: --segments set (firn's own table) or tinyid, not %q", format)
}

// checkNoSite refuses segments served without a site setting from a
// registry whose namespace records a site (nodeid.CheckNoSite): a tag
// created there would issue every site's classes.
func (o Options) checkNoSite(ctx context.Context, nodes nodeid.Store) error {
	if !residueFormat(o.Segments.Format) {
		return nil // rows no site serves: a site's are of a residue format
	}
	err := o.readSite(ctx, func(ctx context.Context) error { return nodeid.CheckNoSite(ctx, nodes) })
	if errors.Is(err, sqlstore.ErrDenied) {
		// An account for segments alone, which may not read the node
		// tables (firn schema --mode tinyid or set), has no site to read.
		return nil
	}
	return err
}

// readSite runs read, a read of the registry's site record, within twice
// the dial timeout. A failure that is no refusal (nodeid.ErrSite, a
// layout mismatch, a privilege the account lacks) is an outage, which a
// server waits out.
func (o Options) readSite(ctx context.Context, read func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, 2*o.Registry.DialTimeout)
	defer cancel()
	err := read(ctx)
	if err == nil || errors.Is(err, nodeid.ErrSite) || errors.Is(err, nodeid.ErrLayoutMismatch) || errors.Is(err, sqlstore.ErrDenied) {
		return err
	}
	return &UnreachableError{Store: o.Registry.Store, Endpoint: o.Describe(), Timeout: 2 * o.Registry.DialTimeout, Err: err}
}

// siteSegments returns the site's segment stores, list, as one store
// issuing the site's residue classes from the site record in nodes
// (segment.NewSiteMulti), or why the site serves none: its value was
// another site's before (nodeid.SiteRecord.NoSegments).
func (o Options) siteSegments(ctx context.Context, nodes nodeid.Store, list []segment.Store) (segment.Store, string, error) {
	var rec nodeid.SiteRecord
	if err := o.readSite(ctx, func(ctx context.Context) (err error) {
		rec, err = nodeid.CheckSite(ctx, nodes, o.Space, o.Site)
		return err
	}); err != nil {
		return nil, "", err
	}
	if rec.NoSegments {
		return nil, fmt.Sprintf("segments are off: %s's value was another site's before, and its segment classes may hold that site's IDs: for segments, claim a value no site held (a site keeps its value: under a new site name, on a registry namespace of its own)", o.Site), nil
	}
	r := segment.Residues{Values: int64(o.Site.Values), Stores: max(rec.Stores, 1), Value: int64(o.Site.First / o.Site.Count), Floor: rec.Segments}
	m, err := segment.NewSiteMulti(r, list...)
	if err != nil {
		return nil, "", configf("segments.stores", "%s", err)
	}
	return m, "", nil
}

// noSegments says why the registry's store serves no segments, and
// where they go instead.
func (o Options) noSegments() string {
	return fmt.Sprintf("--store %s holds no segment counters: keep them in a database of their own, "+
		"segments.store %s with segments.dsn (--segment-store, --segment-dsn), or segments.stores", o.Registry.Store, store.Names(store.IsDatabase))
}

// database is the settings of one database holding segments alone: the
// registry's segment table settings, with section naming where it is
// configured.
func (o Options) database(kind, dsn, section string) store.Settings {
	s := o.Settings()
	return store.Settings{Store: kind, DSN: dsn, Section: section, Flags: s.Flags, DialTimeout: s.DialTimeout, Segments: s.Segments, Log: s.Log}
}

// checkDatabase refuses, without I/O, what openDatabase would refuse
// before it dials: a store that is no database, and the row's own rules.
func (o Options) checkDatabase(s store.Settings) error {
	k, ok := store.Lookup(s.Store)
	if !ok || !k.Database {
		return configf(s.Field("store"), "%q: want %s", s.Store, store.Names(store.IsDatabase))
	}
	return k.Check(s)
}

// checkOwnSegments refuses, without I/O, what ownSegments would refuse
// before it dials.
func (o Options) checkOwnSegments() error {
	sg := o.Segments
	k, ok := store.Lookup(sg.Store)
	switch {
	case !ok || !k.Database:
		return configf("segments.store", "--segment-store %q: want %s", sg.Store, store.Names(store.IsDatabase))
	case sg.DSN == "":
		return configf("segments.dsn", "--segment-store %s needs --segment-dsn", sg.Store)
	}
	return k.Check(o.database(sg.Store, sg.DSN, "segments"))
}

// ownSegments opens the segment table in the database of its own named
// by Segments.Store and Segments.DSN.
func (o Options) ownSegments(ctx context.Context, t *tokens) (segment.Store, func() error, error) {
	if err := o.checkOwnSegments(); err != nil {
		return nil, nil, err
	}
	return o.openDatabase(ctx, o.database(o.Segments.Store, o.Segments.DSN, "segments"), t)
}

// openDatabase opens the segment table of the chosen format in one
// database.
func (o Options) openDatabase(ctx context.Context, s store.Settings, t *tokens) (segment.Store, func() error, error) {
	if err := o.checkDatabase(s); err != nil {
		return nil, nil, err
	}
	k, _ := store.Lookup(s.Store)
	s.Segments.Tokens = t.ask()
	c, err := k.Open(ctx, s)
	if err != nil {
		return nil, nil, err
	}
	segs, err := c.Segments()
	if err != nil {
		return nil, nil, errors.Join(err, c.Close())
	}
	t.take(c)
	return segs, c.Close, nil
}

// checkSet refuses, without I/O, what openSet would refuse before it
// dials.
func (o Options) checkSet() error {
	if f := o.Segments.Format; f != "tinyid" && f != "set" {
		return configf("segments.format", "--segments %q with segments.stores: want tinyid or set, whose rows record their residue class", f)
	}
	for i, st := range o.Segments.Stores {
		if err := o.checkDatabase(o.database(st.Store, st.DSN, fmt.Sprintf("segments.stores[%d]", i))); err != nil {
			return fmt.Errorf("segments.stores[%d]: %w", i, err)
		}
	}
	return nil
}

// openSet opens the set of segment stores of the configuration
// (segments.stores), store i issuing remainder i.
func (o Options) openSet(ctx context.Context, t *tokens) ([]segment.Store, func() error, error) {
	if err := o.checkSet(); err != nil {
		return nil, nil, err
	}
	var stores []segment.Store
	var closers []func() error
	closeAll := func() error {
		var errs []error
		for _, c := range closers {
			errs = append(errs, c())
		}
		return errors.Join(errs...)
	}
	for i, st := range o.Segments.Stores {
		s, closer, err := o.openDatabase(ctx, o.database(st.Store, st.DSN, fmt.Sprintf("segments.stores[%d]", i)), t)
		if err != nil {
			return nil, nil, errors.Join(fmt.Errorf("segments.stores[%d]: %w", i, err), closeAll())
		}
		stores = append(stores, s)
		closers = append(closers, closer)
	}
	return stores, closeAll, nil
}

// OpenDB opens and pings a database of kind (a store the table reads as
// a database, reached by dsn): a malformed DSN is bad input, a database
// that does not answer within the dial timeout an outage.
func (o Options) OpenDB(ctx context.Context, kind, dsn string) (*sql.DB, error) {
	s := o.database(kind, dsn, "")
	k, ok := store.Lookup(kind)
	if !ok || k.OpenDB == nil {
		return nil, configf(s.Field("store"), "%q: want %s", kind, store.Names(store.IsDatabase))
	}
	return k.OpenDB(ctx, s)
}
