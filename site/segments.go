package site

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/firn-id/firn/nodeid"
	"github.com/firn-id/firn/segment"
)

// segmentAttempts bounds the rounds of segments: each round after the
// first follows a row that moved while it was taken into the site's
// classes (a process of the registry's past still reserving).
const segmentAttempts = 3

// segments takes the registry's segment rows into the site's residue
// classes, above the sites' segment floor, and records that floor in
// rec: every tag the site creates starts at or above it. Rows of another
// delta than the sites' are tags served before sites; their highest
// counter raises the ledger's floor first (raiseSegments), so that no
// site issues one of their IDs. Rows of a value the site held before a
// promotion (rec.Moved) are its own IDs: they move into the site's
// classes above their counters. A site on a value another site held
// (rec.NoSegments) takes no row: it serves no segments.
func (l *Ledger) segments(ctx context.Context, reg Registry, site nodeid.Site, rec *nodeid.SiteRecord) error {
	m, err := l.siteSegments(reg, site)
	if err != nil {
		return err
	}
	key := segmentsKey(site, reg)
	for attempt := 1; ; attempt++ {
		rows, err := rowsOf(ctx, m, site)
		if err != nil {
			return err
		}
		top, err := presite(m, site, rows, rec.Moved)
		if err != nil {
			return err
		}
		floor, err := l.raiseSegments(ctx, site, key, top)
		if err != nil {
			return err
		}
		switch {
		case rec.Pending:
			rec.Segments = max(floor, rec.Segments)
		case top > rec.Segments: // a live site's floor never moves
			return refuse("%s's segment stores hold rows outside the sites' classes up to %d, past the floor %d its claim recorded: stop what created them (a firn without the site setting) and move those tags to stores of their own", site, top, rec.Segments)
		}
		var adopt []segment.Row
		for _, r := range rows {
			if !m.Mine(r) || r.Info.Next < rec.Segments || r.Info.Step < r.Info.Delta {
				adopt = append(adopt, r)
			}
		}
		if len(adopt) > 0 && !rec.NoSegments { // else counted in the floor, served by no site
			err = m.Adopt(ctx, adopt, rec.Segments)
		}
		if err == nil {
			err = l.settleSegments(ctx, key, rec.Segments)
		}
		switch {
		case err == nil:
			return nil
		case !errors.Is(err, segment.ErrReclassed) && !errors.Is(err, errFloorMoved) || attempt == segmentAttempts:
			return fmt.Errorf("segments of %s: %w", site, err)
		}
	}
}

// errFloorMoved: the floor the claim settles is above the one its record
// holds (a round of its own raised it); it takes its rows above it first.
var errFloorMoved = errors.New("site: the sites' segment floor rose during the claim")

// segmentsKey names site's claim of its value on reg for the ledger's
// segment floor (SegmentsBy): the same across re-runs of the claim,
// another for any other site, value or registry.
func segmentsKey(site nodeid.Site, reg Registry) string {
	return fmt.Sprintf("%s/%d@%s", site.Name, site.First/max(site.Count, 1), reg.Where)
}

// rowsOf lists every row of m's stores; none when m is nil.
func rowsOf(ctx context.Context, m *segment.Multi, site nodeid.Site) ([]segment.Row, error) {
	if m == nil {
		return nil, nil
	}
	rows, err := m.Rows(ctx)
	if err != nil {
		return nil, fmt.Errorf("segments of %s: %w", site, err)
	}
	return rows, nil
}

// presite is the highest counter of rows served before sites (another
// delta than the sites'), refusing a row of another site value's classes
// but the site's own values before a promotion (moved): a segment store
// serves one site.
func presite(m *segment.Multi, site nodeid.Site, rows []segment.Row, moved map[uint64]bool) (int64, error) {
	var top int64
	for _, r := range rows {
		switch v := m.Value(r); {
		case v < 0:
			top = max(top, r.Info.Next)
		case !m.Mine(r) && !moved[uint64(v)]:
			return 0, fmt.Errorf("segments of %s: %w", site, &segment.ResidueError{Tag: r.Info.Tag, Store: r.Store, Delta: r.Info.Delta, Remainder: r.Info.Remainder,
				Reason: fmt.Sprintf("is in site value %d's classes: a segment store serves one site", v)})
		}
	}
	return top, nil
}

// siteSegments is reg's segment stores as one store of site's classes;
// nil when the site has none.
func (l *Ledger) siteSegments(reg Registry, site nodeid.Site) (*segment.Multi, error) {
	if len(reg.Segments) == 0 {
		return nil, nil
	}
	r := segment.Residues{Values: int64(site.Values), Stores: max(l.rec.Stores, 1), Value: int64(site.First / site.Count)}
	m, err := segment.NewSiteMulti(r, reg.Segments...)
	if err != nil {
		return nil, fmt.Errorf("segments of %s: %w", site, err)
	}
	return m, nil
}

// checkSegments refuses, before a claim writes anything, what segments
// would refuse once the claim is under way. On a value no site held,
// nothing of a site's is in the stores yet, so every row but those of
// the values the site held before a promotion (moved) was served before
// sites; on a value a site held (spent), which serves no segments, rows
// of the sites' delta are that site's, and the others were served before
// sites. Each tag's rows served before sites must make whole sets
// (segment.CompleteSets), since a row of a set whose other stores are
// elsewhere issued IDs no counter here bounds, and their counters must
// not pass the floor sites issue from (pastFrom).
func (l *Ledger) checkSegments(ctx context.Context, reg Registry, site nodeid.Site, moved map[uint64]bool, spent bool) error {
	m, err := l.siteSegments(reg, site)
	if err != nil {
		return err
	}
	rows, err := rowsOf(ctx, m, site)
	if err != nil {
		return err
	}
	var past []segment.Row
	var top int64
	for _, r := range rows {
		if v := m.Value(r); v >= 0 && (spent || !m.Mine(r) && moved[uint64(v)]) {
			continue
		}
		past, top = append(past, r), max(top, r.Info.Next)
	}
	if _, err := presite(m, site, rows, moved); err != nil {
		return err
	}
	if err := segment.CompleteSets(past); err != nil {
		return fmt.Errorf("segments of %s, served before sites: %w", site, err)
	}
	// The floor is fixed or raised now, before the claim's first write:
	// a claim that starts later reads it only once this one settled. A
	// claim that found no row served before sites has none that may move:
	// it settles at once.
	key := segmentsKey(site, reg)
	floor, err := l.raiseSegments(ctx, site, key, top)
	if err != nil || len(past) > 0 {
		return err
	}
	return l.settleSegments(ctx, key, floor)
}

// ledgerRecord reads the ledger's own record as it is now.
func (l *Ledger) ledgerRecord(ctx context.Context) (LedgerRecord, nodeid.LayoutID, nodeid.Recorder, error) {
	st, err := l.open(l.namespace("ledger"))
	if err != nil {
		return LedgerRecord{}, nodeid.LayoutID{}, nil, err
	}
	id, err := st.Record(ctx)
	if err != nil {
		return LedgerRecord{}, id, nil, fmt.Errorf("read ledger %s: %w", l.name, err)
	}
	var rec LedgerRecord
	if err := decode(id, ledgerPrefix, &rec); err != nil {
		return LedgerRecord{}, id, nil, fmt.Errorf("ledger %s: %w", l.name, err)
	}
	if rec.ID != l.rec.ID {
		return LedgerRecord{}, id, nil, refuse("ledger %s changed identity (%s, opened as %s): name the ledger the sites were claimed in", l.name, rec.ID, l.rec.ID)
	}
	return rec, id, st, nil
}

// pastFrom refuses rows served before sites whose counter, top, passed
// the floor every site's segment IDs start at or above, and any claim
// but the one that fixed the floor while that one has not settled it.
func (l *Ledger) pastFrom(rec LedgerRecord, site nodeid.Site, key string, top int64) error {
	switch {
	case rec.SegmentsFrom == nil, rec.SegmentsBy == key && !rec.SegmentsSettled:
		return nil
	case !rec.SegmentsSettled:
		return refuse("ledger %s's first claim (%s) has not finished taking its segment rows into its classes, and no claim reads the sites' segment floor before: run firn site claim for that site again to finish it, then this one", l.rec.ID, rec.SegmentsBy)
	case top > *rec.SegmentsFrom:
		return refuse("%s's segment stores issued IDs up to %d before sites, but sites claimed in ledger %s may issue segment IDs from %d already, and could repeat them: "+
			"serve these tags from segment stores of their own under this site (new tables, --segment-table, or databases), and keep these rows out of it (docs/segments.md, \"Several sites\")", site, top-1, l.rec.ID, *rec.SegmentsFrom)
	}
	return nil
}

// raiseSegments raises the ledger's segment floor to top, the highest
// counter of the rows site's claim found served before sites, and
// returns it. Those rows issued every residue class below top: a site
// whose IDs may start below top already (one that read the floor the
// first claim settled) could repeat them, so such a claim is refused
// (pastFrom). The first claim fixes the floor, and raises it until it
// settles it (settleSegments).
func (l *Ledger) raiseSegments(ctx context.Context, site nodeid.Site, key string, top int64) (int64, error) {
	return l.updateSegments(ctx, func(rec *LedgerRecord) error {
		if err := l.pastFrom(*rec, site, key, top); err != nil {
			return err
		}
		switch {
		case rec.SegmentsFrom == nil:
			from := max(rec.Segments, top)
			rec.SegmentsFrom, rec.SegmentsBy = &from, key
		case rec.SegmentsBy == key && !rec.SegmentsSettled && top > *rec.SegmentsFrom:
			from := top
			rec.SegmentsFrom = &from
		}
		rec.Segments = max(rec.Segments, top)
		return nil
	})
}

// settleSegments marks the floor settled once the claim that fixed it
// (key) took every row it found into its classes at or above floor:
// other claims read it from then on, and it rises no more. A floor
// raised past floor meanwhile is errFloorMoved: the claim takes its rows
// above it first. The zero key settles whatever claim holds it.
func (l *Ledger) settleSegments(ctx context.Context, key string, floor int64) error {
	_, err := l.updateSegments(ctx, func(rec *LedgerRecord) error {
		switch {
		case rec.SegmentsSettled || rec.SegmentsFrom == nil || key != "" && rec.SegmentsBy != key:
		case *rec.SegmentsFrom > floor:
			return errFloorMoved
		default:
			rec.SegmentsSettled = true
		}
		return nil
	})
	return err
}

// abandonSegments settles the floor a claim of site on reg fixed, when
// that claim can finish no more (another registry took its value):
// no site recorded a floor below it, and its stores are no site's.
func (l *Ledger) abandonSegments(ctx context.Context, site nodeid.Site, reg Registry) {
	rec, _, _, err := l.ledgerRecord(ctx)
	if err == nil && rec.SegmentsBy == segmentsKey(site, reg) && !rec.SegmentsSettled {
		_ = l.settleSegments(ctx, rec.SegmentsBy, math.MaxInt64)
	}
}

// updateSegments applies change to the ledger's record in a
// compare-and-set write, read again when another claim wrote it first,
// and returns the segment floor after.
func (l *Ledger) updateSegments(ctx context.Context, change func(*LedgerRecord) error) (int64, error) {
	for {
		rec, id, st, err := l.ledgerRecord(ctx)
		if err != nil {
			return 0, err
		}
		was := encode(ledgerPrefix, rec)
		if err := change(&rec); err != nil {
			return 0, err
		}
		if now := encode(ledgerPrefix, rec); now != was {
			err = st.Rerecord(ctx, id, now)
		}
		var changed *nodeid.RecordChangedError
		switch {
		case errors.As(err, &changed):
			continue // another claim wrote it meanwhile: read it again
		case err != nil:
			return 0, fmt.Errorf("write ledger %s: %w", l.name, err)
		}
		l.rec = rec
		return rec.Segments, nil
	}
}
