package site

import (
	"context"
	"fmt"
	"slices"

	"github.com/firn-id/firn/nodeid"
	"github.com/firn-id/firn/segment"
)

// Registry is a site's registry: the namespace its processes claim nodes
// in, and where it is, for messages (never a secret).
type Registry struct {
	Store nodeid.Recorder
	Where string
	// Segments are the site's segment stores, in the order of the
	// configuration (nil: the site serves no segments), which a claim
	// takes into the site's residue classes (segments.go).
	Segments []segment.Store
}

// Result says what Claim found and did.
type Result struct {
	Record nodeid.SiteRecord
	// Already: the value was the site's on this registry; nothing
	// changed.
	Already bool
	// History lists the floors recorded in the ledger for the values
	// the registry's nodes held before it was a site's.
	History map[uint64]int64
}

// value is the site value of s: the index of its node range.
func (l *Ledger) value(s nodeid.Site) (uint64, error) {
	if s.Count == 0 || s.Count != l.rec.Count || s.First%s.Count != 0 {
		return 0, refuse("%s leases %d nodes from %d; ledger %s's sites lease %d each", s, s.Count, s.First, l.name, l.rec.Count)
	}
	return s.First / s.Count, nil
}

// ClaimSite claims site's value for site in the ledger and records the
// site in its registry, in three writes a re-run finishes wherever an
// earlier run stopped: a pending site record in the registry (which ends
// every lease there, and refuses every claim until the third write) with
// a registry ID new to this claim; the ledger's claim naming that ID
// (refused, naming the holder, when another site holds the value); the
// registry's record made live. A registry whose namespace holds history
// (nodes used before it was a site's) has the highest HWM of each other
// value's nodes recorded in the ledger as that value's floor; a value
// another site holds now is refused, since its nodes were used twice
// already. A registry is the site's only if its record names the
// ledger's registry ID and the store's identity is the one recorded: a
// copy restored elsewhere, or another namespace of the same server, is
// refused.
func (l *Ledger) ClaimSite(ctx context.Context, reg Registry, site nodeid.Site, layout nodeid.LayoutID) (Result, error) {
	v, err := l.value(site)
	if err != nil {
		return Result{}, err
	}
	native, err := reg.Store.Identity(ctx)
	if err != nil {
		return Result{}, fmt.Errorf("registry %s: %w", reg.Where, err)
	}
	old, err := reg.Store.Record(ctx)
	if err != nil {
		return Result{}, fmt.Errorf("registry %s: %w", reg.Where, err)
	}
	oldRec, oldIsSite, err := nodeid.ParseSiteRecord(old)
	if err != nil {
		return Result{}, fmt.Errorf("registry %s: %w", reg.Where, err)
	}
	switch {
	case old.Fingerprint == "":
	case oldIsSite && oldRec.Ledger != l.rec.ID:
		return Result{}, refuse("registry %s is claimed in another ledger (%s, not %s): a registry's site is claimed in one ledger; name that one", reg.Where, oldRec.Ledger, l.rec.ID)
	case oldIsSite && oldRec.Site.Name != site.Name:
		return Result{}, refuse("registry %s belongs to %s: a registry serves one site", reg.Where, oldRec.Site)
	case oldIsSite && oldRec.Site != site:
		return Result{}, refuse("registry %s records %s, not %s: a site keeps its value; release it and claim the other value on a registry of its own", reg.Where, oldRec.Site, site)
	case oldIsSite && oldRec.Layout.Fingerprint != layout.Fingerprint, !oldIsSite && old.Fingerprint != layout.Fingerprint:
		return Result{}, &nodeid.LayoutMismatchError{Stored: old.Description, Want: layout.Description}
	}
	c, cid, cst, err := l.Claim(ctx, v)
	if err != nil {
		return Result{}, err
	}
	ours := oldIsSite && c.Site == site.Name && !c.Released && c.Registry == oldRec.Registry
	switch {
	case ours && (oldRec.Native != native || c.Native != native):
		// The ledger's identity too: a pending record restored into
		// another server carries the registry ID, and the copy's claim
		// may have named it in the ledger first.
		return Result{}, refuse("registry %s is not the one %s claimed (identity %q, claimed on %q, recorded here %q): one is a copy of the other, and firn cannot tell whether the other still serves; release the value from the one claimed (or see docs/operations.md, \"Several sites\")", reg.Where, site, native, c.Native, oldRec.Native)
	case ours && oldRec.Released:
		return Result{}, refuse("a release of %s is under way on registry %s: run firn site release again to finish it", site, reg.Where)
	case ours:
		return l.finish(ctx, reg, site, old, oldRec, oldRec.Moved)
	case oldIsSite && oldRec.Pending && !oldRec.Released && c.Site == site.Name && c.Standby && !c.Released && c.Registry == "":
		return l.finishStandby(ctx, reg, site, c, cid, cst, old, oldRec, native)
	case c.Site != "" && c.Site != site.Name && !c.Released:
		return Result{}, refuse("value %d (%s) is held by site %q, on registry %s: choose another value, or release it there first (firn site release)", v, site.Fields, c.Site, c.Where)
	case c.Site == site.Name && !c.Released:
		return Result{}, refuse("value %d is site %q's on another registry (%s, identity %q); this one is %s (identity %q): a site has one registry; release the value there first (docs/operations.md, \"Several sites\")", v, site.Name, c.Where, c.Native, reg.Where, native)
	}
	// Free, or released: the site takes it with the floor above every
	// HWM of the site before, under a registry ID of its own.
	id := randomID("r-")
	var moved map[uint64]bool
	if oldIsSite && oldRec.Pending {
		// A claim or promotion cut short before the ledger's write; a
		// promotion's old values stay the site's until released, and their
		// release records the floor of the registry this one copies.
		id, moved = oldRec.Registry, oldRec.Moved
	}
	var own map[uint64]bool
	if oldIsSite {
		own = oldRec.Moved
	}
	if err := l.nameFree(ctx, site, v, id, own); err != nil {
		return Result{}, err
	}
	if old.Fingerprint != "" && !oldIsSite {
		// Refuse history that collides before anything is written; the
		// check is made again once the old leases have ended.
		if _, err := l.history(ctx, reg, site, nil); err != nil {
			return Result{}, err
		}
	}
	pending := nodeid.SiteRecord{Site: site, Layout: layout, Registry: id, Native: native, Ledger: l.rec.ID, Floor: c.Floor, Pending: true, Moved: moved, Stores: max(l.rec.Stores, 1),
		NoSegments: c.spent()}
	pid, err := fits(pending)
	if err != nil {
		return Result{}, err
	}
	if err := l.checkSegments(ctx, reg, site, moved, c.spent()); err != nil {
		return Result{}, err
	}
	return l.take(ctx, reg, site, old, pid, pending, c, cid, cst)
}

// take makes the writes of a claim of c's value by site on reg, under the
// pending record rec (its layout ID pid), once every check passed: the
// pending record in place of old, the ledger's claim in place of c (as
// read, cid) naming rec's registry ID, then the live record (finish).
// A ledger write that another registry's claim beat ends this claim: it
// settles the segment floor it may have fixed (abandonSegments).
func (l *Ledger) take(ctx context.Context, reg Registry, site nodeid.Site, old, pid nodeid.LayoutID, rec nodeid.SiteRecord, c Claim, cid nodeid.LayoutID, cst nodeid.Recorder) (Result, error) {
	if old != pid {
		if err := reg.Store.Rerecord(ctx, old, pid); err != nil {
			return Result{}, fmt.Errorf("registry %s: %w", reg.Where, err)
		}
	}
	// What the site's own nodes issued before the claim (a registry with
	// history, whose processes may have started ahead): a release that
	// cannot reach the site must cover it too.
	issued, err := l.ownHWM(ctx, reg, site)
	if err != nil {
		return Result{}, err
	}
	nc := Claim{Value: c.Value, Site: site.Name, Registry: rec.Registry, Native: rec.Native, Where: reg.Where, Floor: c.Floor, Issued: issued, Spent: c.spent()}
	if err := l.write(ctx, cst, cid, nc); err != nil {
		if now, _, _, rerr := l.Claim(ctx, c.Value); rerr == nil && now.Registry != rec.Registry && (now.Site != "" || now.Standby) {
			l.abandonSegments(ctx, site, reg) // another took the value: this claim can finish no more
		}
		return Result{}, err
	}
	return l.finish(ctx, reg, site, pid, rec, rec.Moved)
}

// finishStandby finishes a promotion (or claim) of site's standby that
// was cut short between the registry's pending record, rec as read as
// old, and the ledger's write: the ledger still records the value as the
// site's standby, on no registry. No registry served it since it became
// one (a record is made live only after the ledger names its registry
// ID, and the ledger names none again until the value is released), so
// the registry takes it under the pending record's registry ID, in the
// writes Promote makes: the pending record again, on the ledger's floor
// now (a release and claims by others may have raised it since the
// record was written), then the ledger's claim, compared against the
// standby as read, then the live record.
func (l *Ledger) finishStandby(ctx context.Context, reg Registry, site nodeid.Site, c Claim, cid nodeid.LayoutID, cst nodeid.Recorder, old nodeid.LayoutID, rec nodeid.SiteRecord, native string) (Result, error) {
	if rec.Native != native {
		// A copy of the registry that wrote the pending record, restored
		// elsewhere: the two would finish under one registry ID.
		return Result{}, refuse("registry %s is a copy of the one a promotion of %s started on (identity %q, the pending record's %q): run it again against that one", reg.Where, site, native, rec.Native)
	}
	rec.Floor = max(rec.Floor, c.Floor)
	rec.Stores = max(l.rec.Stores, 1)
	pid, err := fits(rec)
	if err != nil {
		return Result{}, err
	}
	return l.take(ctx, reg, site, old, pid, rec, c, cid, cst)
}

// nameFree refuses a claim of value v by site when the ledger records a
// site of the same name on another value, for another registry: a name
// is one site — the ledger finds a site's standby, its promotion and its
// release by it — so a second site under it is a typo or a copy of a
// configuration. The site's own standby value, a released value, and
// the values this registry served before a promotion (own) are no
// other site. It reads one claim per site value of the layout
// (site.Values; none for a Site built without its layout): at a claim
// only, never on the path that issues IDs.
func (l *Ledger) nameFree(ctx context.Context, site nodeid.Site, v uint64, registry string, own map[uint64]bool) error {
	for w := range site.Values {
		if w == v || own[w] {
			continue
		}
		c, _, _, err := l.Claim(ctx, w)
		if err != nil {
			return err
		}
		if c.Site == site.Name && !c.Released && !c.Standby && c.Registry != registry {
			return refuse("site name %q is taken: value %d holds it, on registry %s (%s); a site name names one site: name this one otherwise, or release value %d first (firn site release)",
				site.Name, w, c.Where, c.Registry, w)
		}
	}
	return nil
}

// fits returns the record's layout ID, refusing a record whose released
// form a store could not hold: a site claimed must be releasable.
func fits(rec nodeid.SiteRecord) (nodeid.LayoutID, error) {
	rel := rec
	rel.Pending, rel.Released = false, true
	if _, err := rel.LayoutID(); err != nil {
		return nodeid.LayoutID{}, err
	}
	return rec.LayoutID()
}

// ownHWM is the highest HWM of site's own nodes in the registry.
func (l *Ledger) ownHWM(ctx context.Context, reg Registry, site nodeid.Site) (int64, error) {
	hwms, err := reg.Store.HWMs(ctx)
	if err != nil {
		return 0, fmt.Errorf("registry %s: %w", reg.Where, err)
	}
	var top int64
	for n, h := range hwms {
		if site.Holds(n) {
			top = max(top, h)
		}
	}
	return top, nil
}

// finish records the registry's history as floors and makes its site
// record live.
func (l *Ledger) finish(ctx context.Context, reg Registry, site nodeid.Site, old nodeid.LayoutID, rec nodeid.SiteRecord, own map[uint64]bool) (Result, error) {
	// The pending record ended every lease of the registry's past and
	// lets no node outside the site be claimed: the HWMs read now are
	// final. Record them, every time (a claim cut short finishes on
	// its next run).
	history, err := l.history(ctx, reg, site, own)
	if err != nil {
		return Result{}, err
	}
	if err := l.recordHistory(ctx, site, history); err != nil {
		return Result{}, err
	}
	if err := l.segments(ctx, reg, site, &rec); err != nil {
		return Result{}, err
	}
	if !rec.Pending {
		return Result{Record: rec, Already: len(history) == 0, History: history}, nil
	}
	rec.Pending = false
	id, err := rec.LayoutID()
	if err != nil {
		return Result{}, err
	}
	if err := reg.Store.Rerecord(ctx, old, id); err != nil {
		return Result{}, fmt.Errorf("registry %s: %w", reg.Where, err)
	}
	return Result{Record: rec, History: history}, nil
}

// history reads the highest HWM of each other site value's nodes in the
// registry, refusing a value another site holds. own are values the
// registry served as the site's before (a promotion's old value): their
// floor is recorded when they are released.
func (l *Ledger) history(ctx context.Context, reg Registry, site nodeid.Site, own map[uint64]bool) (map[uint64]int64, error) {
	hwms, err := reg.Store.HWMs(ctx)
	if err != nil {
		return nil, fmt.Errorf("registry %s: %w", reg.Where, err)
	}
	out := map[uint64]int64{}
	for n, h := range hwms {
		if h > 0 && !site.Holds(n) && !own[n/l.rec.Count] {
			out[n/l.rec.Count] = max(out[n/l.rec.Count], h)
		}
	}
	for _, w := range sortedKeys(out) {
		c, _, _, err := l.Claim(ctx, w)
		if err != nil {
			return nil, err
		}
		if c.Site != "" && !c.Released {
			return nil, refuse("registry %s issued on nodes of value %d before it was a site's, and site %q holds that value now (registry %s): their IDs may already collide; keep this registry out of sites, or stop and release %q first", reg.Where, w, c.Site, c.Where, c.Site)
		}
	}
	return out, nil
}

// recordHistory raises each value's floor in the ledger to the
// registry's highest HWM on it.
func (l *Ledger) recordHistory(ctx context.Context, site nodeid.Site, floors map[uint64]int64) error {
	for _, w := range sortedKeys(floors) {
		c, cid, cst, err := l.Claim(ctx, w)
		if err != nil {
			return err
		}
		if c.Floor >= floors[w] {
			continue
		}
		if c.Site != "" && !c.Released {
			return refuse("value %d: site %q claimed it meanwhile", w, c.Site)
		}
		c.Floor = floors[w]
		if err := l.write(ctx, cst, cid, c); err != nil {
			return err
		}
	}
	return nil
}

// ReleaseSite gives site's value up: it writes the released marker in the
// registry (which ends every lease there: no HWM rises after it), then
// reads the site's highest HWM and records it in the ledger as the
// value's floor. Live processes of the site stop at their next renewal.
// It returns the floor.
func (l *Ledger) ReleaseSite(ctx context.Context, reg Registry, site nodeid.Site, layout nodeid.LayoutID) (int64, error) {
	v, c, cid, cst, err := l.held(ctx, site)
	if err != nil || c.Released {
		return c.Floor, err
	}
	if c.Standby {
		return 0, refuse("value %d is site %q's standby, on no registry: firn site release --standby releases it", v, site.Name)
	}
	old, err := reg.Store.Record(ctx)
	if err != nil {
		return 0, fmt.Errorf("registry %s: %w", reg.Where, err)
	}
	rec, ok, err := nodeid.ParseSiteRecord(old)
	switch {
	case err != nil:
		return 0, fmt.Errorf("registry %s: %w", reg.Where, err)
	case !ok || rec.Site != site || rec.Registry != c.Registry:
		return 0, refuse("registry %s does not hold site %q's claim of value %d (the ledger names registry %s at %s)", reg.Where, site.Name, v, c.Registry, c.Where)
	}
	native, err := reg.Store.Identity(ctx)
	if err != nil {
		return 0, fmt.Errorf("registry %s: %w", reg.Where, err)
	}
	if native != rec.Native || native != c.Native {
		return 0, refuse("registry %s is a copy of the one %s claimed (identity %q, claimed on %q): a release must reach the registry the site's processes renew on", reg.Where, site, native, rec.Native)
	}
	if !rec.Released {
		rel := rec
		rel.Released = true
		id, err := rel.LayoutID()
		if err != nil {
			return 0, err
		}
		if err := reg.Store.Rerecord(ctx, old, id); err != nil {
			return 0, fmt.Errorf("registry %s: write the released marker: %w", reg.Where, err)
		}
	}
	// Only after the marker is confirmed: no claim or renewal raises an
	// HWM of the site any more.
	hwms, err := reg.Store.HWMs(ctx)
	if err != nil {
		return 0, fmt.Errorf("registry %s: %w", reg.Where, err)
	}
	floor := c.Floor
	for n, h := range hwms {
		if site.Holds(n) {
			floor = max(floor, h)
		}
	}
	c.Released, c.Floor = true, floor
	if err := l.write(ctx, cst, cid, c); err != nil {
		return 0, err
	}
	return floor, nil
}

// held reads the ledger's claim of site's value for a release, refusing
// a value the site does not hold; a released one is returned as it is.
func (l *Ledger) held(ctx context.Context, site nodeid.Site) (uint64, Claim, nodeid.LayoutID, nodeid.Recorder, error) {
	v, err := l.value(site)
	if err != nil {
		return 0, Claim{}, nodeid.LayoutID{}, nil, err
	}
	c, cid, cst, err := l.Claim(ctx, v)
	switch {
	case err != nil:
		return v, Claim{}, cid, cst, err
	case c.Site == "":
		return v, Claim{}, cid, cst, refuse("value %d is not site %q's in the ledger: no site holds it", v, site.Name)
	case c.Site != site.Name:
		return v, Claim{}, cid, cst, refuse("value %d is not site %q's in the ledger: site %q holds it", v, site.Name, c.Site)
	}
	return v, c, cid, cst, nil
}

func sortedKeys(m map[uint64]int64) []uint64 {
	keys := make([]uint64, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// ReleaseDestroyed gives site's value up without reaching its registry:
// the operator's promise that no process of the site runs, or ever will
// (--site-destroyed). A site cut off from the ledger keeps renewing
// against its own registry, so the promise is the operator's alone. The
// floor is nodeid.DestroyedFloor of the ledger store's own clock; a
// ledger store without one (etcd) is refused.
func (l *Ledger) ReleaseDestroyed(ctx context.Context, site nodeid.Site) (int64, error) {
	v, c, cid, cst, err := l.held(ctx, site)
	if err != nil || c.Released {
		return c.Floor, err
	}
	clock, ok := cst.(nodeid.Clock)
	if !ok && c.Standby {
		return 0, refuse("ledger %s's store has no clock of its own; value %d is site %q's standby, which no registry served: firn site release --standby releases it", l.name, v, site.Name)
	}
	if !ok {
		return 0, refuse("ledger %s's store has no clock of its own to bound what a destroyed site issued: release the site with its registry reachable, or keep the ledger in PostgreSQL or MySQL", l.name)
	}
	now, err := clock.Now(ctx)
	if err != nil {
		return 0, fmt.Errorf("ledger %s: %w", l.name, err)
	}
	c.Released, c.Standby, c.Floor = true, false, max(c.Floor, c.Issued, nodeid.DestroyedFloor(now))
	if err := l.write(ctx, cst, cid, c); err != nil {
		return 0, err
	}
	return c.Floor, nil
}

// Standby claims site's value in the ledger ahead of time, on no registry:
// the value the site moves to when its registry moves to a copy that
// cannot be told from the original (a promoted replica), with Promote.
func (l *Ledger) Standby(ctx context.Context, site nodeid.Site) error {
	v, err := l.value(site)
	if err != nil {
		return err
	}
	c, cid, cst, err := l.Claim(ctx, v)
	switch {
	case err != nil:
		return err
	case c.Site == site.Name && c.Standby && !c.Released:
		return nil
	case c.Site != "" && !c.Released:
		return refuse("value %d (%s) is held by site %q, on registry %s", v, site.Fields, c.Site, c.Where)
	}
	return l.write(ctx, cst, cid, Claim{Value: v, Site: site.Name, Standby: true, Floor: c.Floor, Spent: c.spent()})
}

// Promote moves the site whose record reg holds onto its standby value:
// the registry — a promoted replica, say, which carries the original's
// identity — takes a new registry ID under the standby value, in the
// writes ClaimSite makes, ending every lease taken under the old value.
// Processes started against it with the old value's setting are refused;
// the old value stays the site's in the ledger, since the original may
// still issue on it, until it is released (firn site release, with
// --site-destroyed when the original cannot be reached). A promotion cut
// short is finished by a re-run, here or with ClaimSite, on the same
// registry.
func (l *Ledger) Promote(ctx context.Context, reg Registry, standby nodeid.Site, layout nodeid.LayoutID) (Result, error) {
	v, err := l.value(standby)
	if err != nil {
		return Result{}, err
	}
	old, err := reg.Store.Record(ctx)
	if err != nil {
		return Result{}, fmt.Errorf("registry %s: %w", reg.Where, err)
	}
	oldRec, isSite, err := nodeid.ParseSiteRecord(old)
	switch {
	case err != nil:
		return Result{}, fmt.Errorf("registry %s: %w", reg.Where, err)
	case isSite && oldRec.Site == standby:
		return l.ClaimSite(ctx, reg, standby, layout) // a promotion cut short, or done
	case !isSite || oldRec.Site.Name != standby.Name || oldRec.Released:
		return Result{}, refuse("registry %s holds no live record of site %q to promote", reg.Where, standby.Name)
	case oldRec.Layout.Fingerprint != layout.Fingerprint:
		return Result{}, &nodeid.LayoutMismatchError{Stored: old.Description, Want: layout.Description}
	}
	c, cid, cst, err := l.Claim(ctx, v)
	if err != nil {
		return Result{}, err
	}
	if c.Site != standby.Name || !c.Standby || c.Released {
		return Result{}, refuse("value %d is not site %q's standby in the ledger (holder %q): firn site claim --standby claims it ahead of time", v, standby.Name, c.Site)
	}
	native, err := reg.Store.Identity(ctx)
	if err != nil {
		return Result{}, fmt.Errorf("registry %s: %w", reg.Where, err)
	}
	moved := map[uint64]bool{oldRec.Site.First / l.rec.Count: true}
	for w := range oldRec.Moved {
		moved[w] = true
	}
	pending := nodeid.SiteRecord{Site: standby, Layout: layout, Registry: randomID("r-"), Native: native, Ledger: l.rec.ID, Floor: c.Floor, Pending: true, Moved: moved, Stores: max(l.rec.Stores, 1),
		Segments: oldRec.Segments, NoSegments: c.spent()}
	pid, err := fits(pending)
	if err != nil {
		return Result{}, err
	}
	return l.take(ctx, reg, standby, old, pid, pending, c, cid, cst)
}

// ReleaseStandby gives up site's standby value (Standby) that no
// promotion took: the ledger records it the site's standby, on no
// registry. No registry served it since it became one — a site record is
// made live only after the ledger names its registry ID, and a value the
// ledger names a registry for is a standby again only after a release
// that covers what that registry issued — so its floor stays the one it
// was claimed with, and neither the registry a release reaches nor the
// ledger's clock is needed. A promotion cut short before its ledger write
// left a pending record, which serves nothing; a re-run of it after the
// release claims the value anew, above the floor. It returns the floor.
func (l *Ledger) ReleaseStandby(ctx context.Context, site nodeid.Site) (int64, error) {
	v, c, cid, cst, err := l.held(ctx, site)
	switch {
	case err != nil || c.Released:
		return c.Floor, err
	case !c.Standby || c.Registry != "":
		return 0, refuse("value %d is site %q's on registry %s (%s), not a standby: release it there (firn site release without --standby)", v, site.Name, c.Registry, c.Where)
	}
	// Compared against the standby as read: a promotion whose ledger
	// write lands first makes this write fail, and this one makes the
	// promotion's fail.
	rel := Claim{Value: v, Site: site.Name, Released: true, Floor: max(c.Floor, c.Issued)}
	if err := l.write(ctx, cst, cid, rel); err != nil {
		return 0, err
	}
	return rel.Floor, nil
}
