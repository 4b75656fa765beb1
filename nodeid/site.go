package nodeid

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Site confines a namespace to one site's nodes: the node values whose
// leading fields hold the site's fixed value. Several sites, each with a
// registry of its own, then lease disjoint nodes of one ID space without
// any call between them (docs/design.md §3, "Sites").
type Site struct {
	// Name names the site, such as "eu-west".
	Name string
	// Fields says which node fields the site fixes, for messages:
	// "datacenter=3".
	Fields string
	// First and Count are the site's nodes, First to First+Count−1. The
	// fixed fields lead the node part, so a site's nodes are contiguous.
	First, Count uint64
	// Values is the number of site values of the layout: its node
	// values over Count.
	Values uint64 `json:",omitempty"`
}

var siteName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$`)

// CheckSiteName refuses a site name that is not letters, digits, '.',
// '_' and '-', at most 63, starting with a letter or digit: the one rule
// for every entry point (configuration, package ids).
func CheckSiteName(name string) error {
	if !siteName.MatchString(name) {
		return &SiteNameError{Name: name}
	}
	return nil
}

// SiteNameError is a site name CheckSiteName refuses.
type SiteNameError struct{ Name string }

func (e *SiteNameError) Error() string { return "nodeid: " + e.Reason() }

// Reason is the message without the package's name, for a caller that
// names the setting itself.
func (e *SiteNameError) Reason() string {
	return fmt.Sprintf("site name %q: want letters, digits, '.', '_' and '-', at most 63, starting with a letter or digit", e.Name)
}

// IsZero reports whether s is no site.
func (s Site) IsZero() bool { return s.Name == "" }

// Holds reports whether node is one of the site's.
func (s Site) Holds(node uint64) bool { return node >= s.First && node-s.First < s.Count }

func (s Site) String() string { return fmt.Sprintf("site %q (%s)", s.Name, s.Fields) }

// SiteLayout is the layout ID a process of site s presents to its
// registry: its fingerprint binds the layout to the site's name and
// nodes, so a process without the site setting, or with another, is
// refused by the store's own layout check on every claim, reservation
// and advance.
func SiteLayout(l LayoutID, s Site) LayoutID {
	if s.IsZero() {
		return l
	}
	return LayoutID{
		Fingerprint: siteFingerprint("s1:", l.Fingerprint, s),
		Description: l.Description + "; " + s.String(),
		Bits:        l.Bits,
	}
}

func siteFingerprint(prefix, layout string, s Site) string {
	sum := sha256.Sum256([]byte(strings.Join([]string{layout, s.Name, strconv.FormatUint(s.First, 10), strconv.FormatUint(s.Count, 10)}, "\n")))
	return prefix + hex.EncodeToString(sum[:8])
}

// SiteRecord is what a site registry records as its namespace's layout,
// written by `firn site claim` and read by every process of the site
// before it claims a node.
type SiteRecord struct {
	Site Site `json:"site"`
	// Layout is the layout's own fingerprint and description (without
	// the site).
	Layout LayoutID `json:"layout"`
	// Registry is a random ID written at the registry's first claim,
	// and recorded in the ledger.
	Registry string `json:"registry"`
	// Native is the store's own identity when the site claimed it, one a
	// copy of the data does not carry ("" for a store with none).
	Native string `json:"native,omitempty"`
	// Ledger is the ID of the ledger the site's value is claimed in.
	Ledger string `json:"ledger"`
	// Floor is a lower bound, in Unix milliseconds, on the HWM of every
	// claim: the highest HWM of a site that held the value before.
	Floor int64 `json:"floor,omitempty"`
	// Released: the value was released; no claim or renewal succeeds.
	Released bool `json:"released,omitempty"`
	// Pending: `firn site claim` has not finished; no claim succeeds.
	Pending bool `json:"pending,omitempty"`
	// Stores is the number of segment stores of every site, as the
	// ledger fixes it: the site's segments issue residue classes of
	// delta Site.Values × Stores (segment.Residues).
	Stores int64 `json:"stores,omitempty"`
	// Moved lists the site's values this registry served before it was
	// promoted to this one (`firn site promote`): the ledger keeps them
	// the site's until they are released.
	Moved map[uint64]bool `json:"moved,omitempty"`
	// Segments is the site's segment floor: above every ID a segment
	// store issued before it was a site's, in any site. Every tag the
	// site creates, and every row it took into its classes, starts at or
	// above it (segment.Residues.Floor).
	Segments int64 `json:"segments,omitempty"`
	// NoSegments: another site held the value before, so its segment
	// classes may hold that site's IDs; the site serves no segments.
	NoSegments bool `json:"no_segments,omitempty"`
}

// recordPrefix opens the description of a site record.
const recordPrefix = "firn-site "

// LayoutID returns the layout ID the registry records for r: the
// fingerprint processes of the site present (SiteLayout), or for a
// released value one that no process presents, and r itself as the
// description.
func (r SiteRecord) LayoutID() (LayoutID, error) {
	b, err := json.Marshal(r)
	if err != nil {
		return LayoutID{}, err
	}
	id := LayoutID{Fingerprint: SiteLayout(r.Layout, r.Site).Fingerprint, Description: recordPrefix + string(b), Bits: r.Layout.Bits}
	switch {
	case r.Released:
		id.Fingerprint = siteFingerprint("r1:", r.Layout.Fingerprint, r.Site)
	case r.Pending:
		id.Fingerprint = siteFingerprint("p1:", r.Layout.Fingerprint, r.Site)
	}
	if err := id.Check(); err != nil {
		return LayoutID{}, fmt.Errorf("nodeid: site record of %d bytes: %w", len(id.Description), err)
	}
	return id, nil
}

// ParseSiteRecord reads a site record from a recorded layout ID; ok is
// false when the namespace records a plain layout.
func ParseSiteRecord(id LayoutID) (r SiteRecord, ok bool, err error) {
	s, ok := strings.CutPrefix(id.Description, recordPrefix)
	if !ok {
		return r, false, nil
	}
	if err := json.Unmarshal([]byte(s), &r); err != nil {
		return r, true, fmt.Errorf("nodeid: corrupt site record %q: %w", s, err)
	}
	return r, true, nil
}

// describe is the description of a recorded layout for messages: a site
// record's layout and site, else the description as it is.
func describe(desc string) string {
	r, ok, err := ParseSiteRecord(LayoutID{Description: desc})
	if !ok || err != nil {
		return desc
	}
	s := r.Layout.Description + "; " + r.Site.String()
	if r.Released {
		s += ", released"
	}
	return s
}

// Recorder is a Store whose namespace record — the layout it records at
// the first claim — can be read and replaced, as site registries and
// ledgers need. Replacing it ends every lease of the namespace in the same
// write: no renewal of a claim taken under the old record succeeds after
// it, whether the renewal was sent before or after.
type Recorder interface {
	Store

	// Record returns the namespace's record; the zero LayoutID when
	// the namespace has none.
	Record(ctx context.Context) (LayoutID, error)

	// Rerecord replaces the record old (the zero LayoutID: none) with
	// new, in one write that also ends every lease of the namespace. A
	// record other than old gives a *RecordChangedError and writes
	// nothing.
	Rerecord(ctx context.Context, old, new LayoutID) error

	// HWMs returns every node's stored HWM.
	HWMs(ctx context.Context) (map[uint64]int64, error)

	// Identity returns the store's own identity, one a copy of its data
	// restored elsewhere does not carry (PostgreSQL's system identifier,
	// MySQL's server UUID, etcd's cluster ID), or "" when it has none.
	Identity(ctx context.Context) (string, error)
}

// RecordChangedError reports a Rerecord whose old record is no longer
// the namespace's: another command changed it first.
type RecordChangedError struct {
	Stored LayoutID
}

func (e *RecordChangedError) Error() string {
	if e.Stored.Fingerprint == "" {
		return "nodeid: the namespace's record changed meanwhile: it has none now"
	}
	return fmt.Sprintf("nodeid: the namespace's record changed meanwhile: it is %s now", describe(e.Stored.Description))
}

// ErrSite is matched by every *SiteError.
var ErrSite = errors.New("nodeid: site refused")

// SiteError refuses a claim for a site: the namespace has no site
// record, another site's, a released one, or the registry is a copy of
// the one the site claimed.
type SiteError struct {
	Want   Site
	Reason string
}

func (e *SiteError) Error() string {
	if e.Want.IsZero() {
		return "nodeid: " + e.Reason
	}
	return fmt.Sprintf("nodeid: %s: %s", e.Want, e.Reason)
}

// Is makes errors.Is(err, ErrSite) true.
func (e *SiteError) Is(target error) bool { return target == ErrSite }

// checkSite reads the namespace's site record and refuses a claim for
// site under layout unless the record is the site's, finished, not
// released, and on the registry the site claimed. It returns the record,
// which the claim must still find after it (sameRecord), and its floor.
func checkSite(ctx context.Context, store Store, layout LayoutID, site Site) (LayoutID, int64, error) {
	rs, ok := store.(Recorder)
	if !ok {
		return LayoutID{}, 0, &SiteError{Want: site, Reason: fmt.Sprintf("a %T cannot be a site registry: it keeps no site record", store)}
	}
	id, err := rs.Record(ctx)
	if err != nil {
		return id, 0, fmt.Errorf("read site record: %w", err)
	}
	floor, err := siteFloor(ctx, rs, id, layout, site)
	return id, floor, err
}

// CheckSite reads store's site record and refuses it as a claim of a
// node for site under layout would be refused (no record, another
// site's, released, pending, or a copy of the registry the site
// claimed); it returns the record. A site's segment stores take their
// residue classes from it. The zero layout is not compared: a process
// that issues no snowflake IDs (firn tag) presents none.
func CheckSite(ctx context.Context, store Store, layout LayoutID, site Site) (SiteRecord, error) {
	id, _, err := checkSite(ctx, store, layout, site)
	if err != nil {
		return SiteRecord{}, err
	}
	rec, _, err := ParseSiteRecord(id)
	return rec, err
}

// CheckNoSite refuses a process without a site setting on a namespace
// that records a site, for a process that presents no layout to the
// registry first (one serving segments alone): its rows would not be
// the site's classes. A store that keeps no record has no site.
func CheckNoSite(ctx context.Context, store Store) error {
	rs, ok := store.(Recorder)
	if !ok {
		return nil
	}
	id, err := rs.Record(ctx)
	if err != nil {
		return fmt.Errorf("read site record: %w", err)
	}
	if _, isSite, err := ParseSiteRecord(id); err != nil || isSite {
		return errors.Join(err, &LayoutMismatchError{Stored: id.Description, Want: "no site setting"})
	}
	return nil
}

// CheckSiteClaim reads the namespace's site record and returns what a claim
// of cfg.Site would meet now: a *SiteError when the record is released,
// another site's or pending, or the registry is a copy, a
// *LayoutMismatchError, or nil. A process whose lease was lost asks it
// to tell a site that must stop for good from an outage. It checks
// nothing for no site.
func CheckSiteClaim(ctx context.Context, store Store, cfg Config) error {
	if cfg.Site.IsZero() {
		return nil
	}
	_, _, err := checkSite(ctx, store, cfg.Layout, cfg.Site)
	return err
}

// claimedLayout is the advice to a process of a site whose layout is not
// the one the site was claimed with.
const claimedLayout = "give it the layout the site was claimed with (the layout flags given to firn site claim — --node-bits, --node-names, --epoch and the rest — or the same layout section)"

// siteFloor checks the record id for checkSite.
func siteFloor(ctx context.Context, rs Recorder, id, layout LayoutID, site Site) (int64, error) {
	rec, isSite, err := ParseSiteRecord(id)
	switch {
	case err != nil:
		return 0, err
	case id.Fingerprint == "":
		return 0, &SiteError{Want: site, Reason: "the namespace has no site record: run `firn site claim` with this configuration first"}
	case !isSite:
		return 0, &SiteError{Want: site, Reason: fmt.Sprintf("the namespace records layout %q and no site: `firn site claim` records the site (it keeps the namespace's history as floors in the ledger)", id.Description)}
	case rec.Site != site && rec.Site.Name == site.Name && rec.Site.Fields == site.Fields:
		return 0, &SiteError{Want: site, Reason: fmt.Sprintf("the site was claimed as nodes %d to %d (layout %q); this process's layout makes it nodes %d to %d: %s",
			rec.Site.First, rec.Site.First+rec.Site.Count-1, rec.Layout.Description, site.First, site.First+site.Count-1, claimedLayout)}
	case rec.Site != site:
		return 0, &SiteError{Want: site, Reason: fmt.Sprintf("the namespace belongs to %s: use that site's setting, or another namespace", rec.Site)}
	case rec.Layout.Fingerprint != layout.Fingerprint && layout.Fingerprint != "":
		return 0, &LayoutMismatchError{Stored: id.Description, Want: layout.Description}
	case rec.Released:
		return 0, &SiteError{Want: site, Reason: "the site released its value: its nodes serve no more (another site may hold the value now)"}
	case rec.Pending:
		return 0, &SiteError{Want: site, Reason: "`firn site claim` has not finished on this registry: run it again"}
	}
	native, err := rs.Identity(ctx)
	if err != nil {
		return 0, fmt.Errorf("read the registry's identity: %w", err)
	}
	if native != rec.Native {
		return 0, &SiteError{Want: site, Reason: fmt.Sprintf("the registry is not the one the site claimed (its identity is %q, the claim's %q): a copy restored elsewhere serves only after `firn site claim --replace-registry` (docs/operations.md, \"Several sites\")", native, rec.Native)}
	}
	return rec.Floor, nil
}

// errRecordChanged: the namespace's record changed between the site
// check and the claim; the claim was released and is tried again.
var errRecordChanged = errors.New("nodeid: the site record changed during the claim; trying again")

// sameRecord refuses a claim taken after the site record checked as
// want was replaced: the floor read with it may be another record's. A
// record's registry ID is new at every claim of the value, so a record
// equal to want was not replaced in between.
func sameRecord(ctx context.Context, store Store, want LayoutID) error {
	id, err := store.(Recorder).Record(ctx)
	switch {
	case err != nil:
		return fmt.Errorf("read site record: %w", err)
	case id.Fingerprint != want.Fingerprint || id.Description != want.Description:
		return errRecordChanged
	}
	return nil
}

// SiteMaxBehind bounds Config.MaxBehind in a site, and an advance of a
// site's node past the clock: with StartAhead refused there, no process
// of a site issues further ahead of its clock than SiteMaxBehind and a
// window, which a release of a site that cannot be reached relies on
// (DestroyedFloor).
const SiteMaxBehind = 10 * time.Minute

// DestroyedMargin is the margin DestroyedFloor adds for the skew between
// the ledger's clock and the site's.
const DestroyedMargin = time.Minute

// DestroyedFloor is the floor recorded for a site released without
// reaching it (--site-destroyed), from the ledger store's clock now: past
// every ID a process of the site that stopped by now can have issued —
// the longest lease (MaxTTL), window (MaxWindow) and MaxBehind
// (SiteMaxBehind) a site allows, and DestroyedMargin. It holds only if
// no process of the site runs any more: a site cut off from the ledger
// keeps renewing against its own registry.
func DestroyedFloor(now time.Time) int64 {
	return now.Add(MaxTTL + MaxWindow + SiteMaxBehind + DestroyedMargin).UnixMilli()
}

// Clock is a store that reads its own clock, for DestroyedFloor.
type Clock interface {
	Now(ctx context.Context) (time.Time, error)
}

// CheckSiteAdvance refuses an advance of a site's node to an HWM further
// than SiteMaxBehind past now: a release of the site that cannot reach
// it would not cover it.
func CheckSiteAdvance(hwm int64, now time.Time) error {
	if limit := now.Add(SiteMaxBehind).UnixMilli(); hwm > limit {
		return fmt.Errorf("nodeid: an HWM %s ahead of the clock in a site: at most %s (nodeid.SiteMaxBehind), which a release of an unreachable site covers",
			time.Duration(hwm-now.UnixMilli())*time.Millisecond, SiteMaxBehind)
	}
	return nil
}
