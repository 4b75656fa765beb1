package site

import (
	"context"
	"errors"
	"fmt"

	"github.com/firn-id/firn/nodeid"
	"github.com/firn-id/firn/segment"
)

// segmentAttempts bounds the rounds of segments: each round after the
// first follows a row that moved while it was taken into the site's
// classes (a process of the registry's past still reserving).
const segmentAttempts = 3

// segments takes the registry's segment rows into the site's residue
// classes, above the sites' segment floor, and records that floor in
// rec: every tag the site creates starts at or above it. Rows outside
// every site's classes are tags served before sites; their highest
// counter raises the ledger's floor first (raiseSegments), so that no
// site issues one of their IDs. A site on a value another site held
// (rec.NoSegments) takes no row: it serves no segments.
func (l *Ledger) segments(ctx context.Context, reg Registry, site nodeid.Site, rec *nodeid.SiteRecord) error {
	m, err := l.siteSegments(reg, site)
	if err != nil {
		return err
	}
	for attempt := 1; ; attempt++ {
		rows, top, err := outside(ctx, m, site, rec.Moved)
		if err != nil {
			return err
		}
		floor, err := l.raiseSegments(ctx, site, top)
		if err != nil {
			return err
		}
		switch {
		case rec.Pending:
			rec.Segments = max(floor, rec.Segments)
		case top > rec.Segments: // a live site's floor never moves
			return refuse("%s's segment stores hold rows outside the sites' classes up to %d, past the floor %d its claim recorded: stop what created them (a firn without the site setting) and move those tags to stores of their own", site, top, rec.Segments)
		}
		floor = rec.Segments
		if len(rows) == 0 || rec.NoSegments {
			return nil
		}
		err = m.Adopt(ctx, rows, floor)
		if err == nil || !errors.Is(err, segment.ErrReclassed) || attempt == segmentAttempts {
			if err != nil {
				return fmt.Errorf("segments of %s: %w", site, err)
			}
			return nil
		}
	}
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

// outside is m's rows outside site's classes and their highest counter
// (segment.Multi.Outside); none when m is nil.
func outside(ctx context.Context, m *segment.Multi, site nodeid.Site, moved map[uint64]bool) ([]segment.Row, int64, error) {
	if m == nil {
		return nil, 0, nil
	}
	rows, top, err := m.Outside(ctx, func(w int64) bool { return moved[uint64(w)] })
	if err != nil {
		return nil, 0, fmt.Errorf("segments of %s: %w", site, err)
	}
	return rows, top, nil
}

// checkSegments refuses, before a claim writes anything, what segments
// would refuse once the claim is under way: a segment store holding
// another site's rows, or rows of tags served before sites past the
// floor sites issue from.
func (l *Ledger) checkSegments(ctx context.Context, reg Registry, site nodeid.Site, moved map[uint64]bool) error {
	m, err := l.siteSegments(reg, site)
	if err != nil {
		return err
	}
	_, top, err := outside(ctx, m, site, moved)
	if err != nil {
		return err
	}
	rec, _, _, err := l.ledgerRecord(ctx)
	if err != nil {
		return err
	}
	return l.pastFrom(rec, site, top)
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
// the floor every site's segment IDs start at or above.
func (l *Ledger) pastFrom(rec LedgerRecord, site nodeid.Site, top int64) error {
	if rec.SegmentsFrom != nil && top > *rec.SegmentsFrom {
		return refuse("%s's segment stores issued IDs up to %d before sites, but sites claimed in ledger %s issue segment IDs from %d: they may have issued some of those IDs already. "+
			"The site whose stores served segments before sites is claimed first; serve these tags from stores of their own under this site (docs/segments.md, \"Several sites\")", site, top-1, l.name, *rec.SegmentsFrom)
	}
	return nil
}

// raiseSegments raises the ledger's segment floor to top, the highest
// counter of the rows a claiming site served before sites, and returns
// it. Those rows issued every residue class below top: a site whose IDs
// may start below top already (one claimed earlier, at the floor the
// first claim recorded) could repeat them, so such a claim is refused.
func (l *Ledger) raiseSegments(ctx context.Context, site nodeid.Site, top int64) (int64, error) {
	for {
		rec, id, st, err := l.ledgerRecord(ctx)
		if err != nil {
			return 0, err
		}
		if err := l.pastFrom(rec, site, top); err != nil {
			return 0, err
		}
		if rec.SegmentsFrom != nil && top <= rec.Segments {
			l.rec = rec
			return rec.Segments, nil
		}
		rec.Segments = max(rec.Segments, top)
		if rec.SegmentsFrom == nil {
			from := rec.Segments
			rec.SegmentsFrom = &from
		}
		err = st.Rerecord(ctx, id, encode(ledgerPrefix, rec))
		var changed *nodeid.RecordChangedError
		switch {
		case errors.As(err, &changed):
			continue // another claim raised it meanwhile: read it again
		case err != nil:
			return 0, fmt.Errorf("write ledger %s: %w", l.name, err)
		}
		l.rec = rec
		return rec.Segments, nil
	}
}
