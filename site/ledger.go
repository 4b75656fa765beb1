package site

import (
	"cmp"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/firn-id/firn/nodeid"
)

// Opener opens one namespace of the ledger's store. A ledger is a
// namespace of its own ("<ledger>/ledger") and one per site value
// ("<ledger>/value/<v>"), each holding one record.
type Opener func(namespace string) (nodeid.Recorder, error)

// Ledger records which site holds each site value: permanent claims,
// written by Claim and Release and never read on the path that issues
// IDs.
type Ledger struct {
	open Opener
	name string
	rec  LedgerRecord
}

// LedgerRecord is the ledger's own record, written once when it is
// created: its identity, and the one layout and site width it serves.
type LedgerRecord struct {
	// ID is a random ID written once; every site record names it.
	ID string `json:"id"`
	// Layout is the layout's (and opaque key's) fingerprint: a claim
	// under another is refused.
	Layout string `json:"layout"`
	// Described is the layout's description, for messages.
	Described string `json:"described,omitempty"`
	// Count is the number of nodes of one site value: every site fixes
	// the same leading node fields.
	Count uint64 `json:"count"`
	// Stores is the number of segment stores of every site: a tag served
	// by several sites has delta values × Stores (segment.Residues).
	Stores int64 `json:"stores,omitempty"`
	// Segments is above every ID a segment store issued before it was a
	// site's, as the claims so far found them: every site's segment IDs
	// start at or above the floor its claim read here.
	Segments int64 `json:"segments,omitempty"`
	// SegmentsFrom is the floor the first claim read: no site's segment
	// IDs start below it, so a store whose IDs before sites reach it is
	// refused (they may be another site's IDs already).
	SegmentsFrom *int64 `json:"segments_from,omitempty"`
	// SegmentsBy names the claim that fixed SegmentsFrom (segmentsKey:
	// its site and value), which may raise it until it has taken every
	// row it found into its classes (SegmentsSettled): a process of its
	// site's past may still move a row meanwhile. No other claim reads
	// the floor before.
	SegmentsBy      string `json:"segments_by,omitempty"`
	SegmentsSettled bool   `json:"segments_settled,omitempty"`
}

// Spec is what a ledger is created for, and checked against after: the
// nodes of one site value, and the segment stores per site (1 for a
// site that serves segments from one database, or none).
type Spec struct {
	Count  uint64
	Stores int64
}

// Claim is the ledger's record of one site value.
type Claim struct {
	Value uint64 `json:"value"`
	// Site is the site holding the value; "" when none does (a value
	// another registry's history used before sites, or one released).
	Site string `json:"site,omitempty"`
	// Registry and Native identify the registry the site claimed
	// (nodeid.SiteRecord).
	Registry string `json:"registry,omitempty"`
	Native   string `json:"native,omitempty"`
	// Where is the registry's endpoint and namespace, for messages.
	Where string `json:"where,omitempty"`
	// Released: the site gave the value up; Floor is then above every
	// HWM it wrote.
	Released bool  `json:"released,omitempty"`
	Floor    int64 `json:"floor,omitempty"`
	// Issued is the highest HWM of the site's own nodes when it claimed
	// the value (a registry used before sites): a release that cannot
	// reach the site records a floor past it too.
	Issued int64 `json:"issued,omitempty"`
	// Standby: claimed ahead of time for the site's move to another
	// registry (Promote), on no registry yet; given up with
	// ReleaseStandby if no promotion takes it.
	Standby bool `json:"standby,omitempty"`
	// Spent: a site held the value before (it was released), so its
	// segment classes may hold that site's IDs: no later holder serves
	// segments on it (nodeid.SiteRecord.NoSegments).
	Spent bool `json:"spent,omitempty"`
}

// spent reports whether a site held the value before.
func (c Claim) spent() bool { return c.Spent || c.Released }

const (
	ledgerPrefix = "firn-ledger "
	claimPrefix  = "firn-value "
)

// ErrRefused is matched by every refusal of this package.
var ErrRefused = errors.New("site: refused")

// RefusedError is a claim or release the ledger or registry refuses.
type RefusedError struct{ Reason string }

func (e *RefusedError) Error() string { return "site: " + e.Reason }

// Is makes errors.Is(err, ErrRefused) true.
func (e *RefusedError) Is(target error) bool { return target == ErrRefused }

func refuse(format string, a ...any) error { return &RefusedError{Reason: fmt.Sprintf(format, a...)} }

// OpenLedger opens the ledger called name, creating it for layout and
// count on first use when create is set, and refuses another layout or
// site width.
func OpenLedger(ctx context.Context, open Opener, name string, layout nodeid.LayoutID, spec Spec, create bool) (*Ledger, error) {
	count := spec.Count
	if count == 0 {
		return nil, refuse("a site leases at least one node")
	}
	spec.Stores = max(spec.Stores, 1)
	l := &Ledger{open: open, name: name}
	st, err := open(l.namespace("ledger"))
	if err != nil {
		return nil, err
	}
	id, err := st.Record(ctx)
	if err != nil {
		return nil, fmt.Errorf("read ledger %s: %w", name, err)
	}
	if id.Fingerprint == "" && !create {
		return nil, refuse("ledger %s does not exist: check the ledger settings (a second ledger would give every value out again); the first firn site claim of all creates it with --create-ledger", name)
	}
	if id.Fingerprint == "" {
		rec := LedgerRecord{ID: randomID("l-"), Layout: layout.Fingerprint, Described: layout.Description, Count: count, Stores: spec.Stores}
		if err := st.Rerecord(ctx, nodeid.LayoutID{}, encode(ledgerPrefix, rec)); err != nil {
			return nil, fmt.Errorf("create ledger %s: %w", name, err)
		}
		if id, err = st.Record(ctx); err != nil {
			return nil, fmt.Errorf("read ledger %s: %w", name, err)
		}
	}
	if err := decode(id, ledgerPrefix, &l.rec); err != nil {
		return nil, fmt.Errorf("ledger %s: %w", name, err)
	}
	switch {
	case l.rec.Layout != layout.Fingerprint:
		theirs := cmp.Or(l.rec.Described, l.rec.Layout)
		if theirs == layout.Description { // the same widths, other node fields or opaque key
			theirs = fmt.Sprintf("%s with other node fields or another opaque key (fingerprint %s, this configuration's %s)", theirs, l.rec.Layout, layout.Fingerprint)
		}
		return nil, refuse("ledger %s serves layout %s, this configuration's is %s: one layout per ledger; give the layout flags (--node-bits, --node-names and the rest) and opaque key of the ledger's first claim", name, theirs, layout.Description)
	case l.rec.Count != count:
		return nil, refuse("ledger %s's sites lease %d nodes each, this configuration's %d: every site fixes the same leading node fields", name, l.rec.Count, count)
	case max(l.rec.Stores, 1) != spec.Stores:
		return nil, refuse("ledger %s's sites serve segments from %d stores each, this configuration from %d (segments.stores): the number is fixed when the ledger is created, so that no delta changes", name, max(l.rec.Stores, 1), spec.Stores)
	}
	return l, nil
}

// namespace is the ledger's namespace below its name: "<name>/<sub>",
// ending in a slash when the name does (an etcd key prefix).
func (l *Ledger) namespace(sub string) string {
	if strings.HasSuffix(l.name, "/") {
		return l.name + sub + "/"
	}
	return l.name + "/" + sub
}

// ID returns the ledger's identity.
func (l *Ledger) ID() string { return l.rec.ID }

// Claim returns the ledger's record of value (zero Claim: none) and the
// store it is in.
func (l *Ledger) Claim(ctx context.Context, value uint64) (Claim, nodeid.LayoutID, nodeid.Recorder, error) {
	st, err := l.open(l.namespace("value/" + strconv.FormatUint(value, 10)))
	if err != nil {
		return Claim{}, nodeid.LayoutID{}, nil, err
	}
	id, err := st.Record(ctx)
	if err != nil {
		return Claim{}, id, nil, fmt.Errorf("read the ledger's claim of value %d: %w", value, err)
	}
	c := Claim{Value: value}
	if id.Fingerprint != "" {
		if err := decode(id, claimPrefix, &c); err != nil {
			return Claim{}, id, nil, fmt.Errorf("ledger %s, value %d: %w", l.name, value, err)
		}
	}
	return c, id, st, nil
}

// write replaces the ledger's claim old (as read, with its record id)
// by c.
func (l *Ledger) write(ctx context.Context, st nodeid.Recorder, old nodeid.LayoutID, c Claim) error {
	if err := st.Rerecord(ctx, old, encode(claimPrefix, c)); err != nil {
		return fmt.Errorf("write the ledger's claim of value %d: %w", c.Value, err)
	}
	return nil
}

// encode makes a record of v: its JSON behind prefix, fingerprinted.
func encode(prefix string, v any) nodeid.LayoutID {
	b, _ := json.Marshal(v)
	sum := sha256.Sum256(b)
	return nodeid.LayoutID{Fingerprint: "rec1:" + hex.EncodeToString(sum[:8]), Description: prefix + string(b)}
}

func decode(id nodeid.LayoutID, prefix string, v any) error {
	s, ok := strings.CutPrefix(id.Description, prefix)
	if !ok {
		return refuse("the namespace holds %q, not a %srecord: name a namespace of its own for the ledger", id.Description, prefix)
	}
	if err := json.Unmarshal([]byte(s), v); err != nil {
		return fmt.Errorf("corrupt record %q: %w", s, err)
	}
	return nil
}

func randomID(prefix string) string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return prefix + hex.EncodeToString(b)
}
