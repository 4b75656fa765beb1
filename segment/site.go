package segment

import (
	"context"
	"errors"
	"fmt"
	"math"
)

// Residues are one site's residue classes when several sites serve one
// tag, each from stores of its own (docs/segments.md, "Several sites"):
// with V site values and S stores per site, the delta is V·S and store i
// of the site of value v issues remainder v·S + i. S is fixed when the
// sites' ledger is created, so adding a site never changes a delta, and
// no two sites share a class: the ledger gives each value one site.
type Residues struct {
	Values, Stores, Value int64
	// Floor is above every ID a store issued before it was a site's:
	// every tag the site creates, and every row it takes into its
	// classes (Adopt), starts at or above it.
	Floor int64
}

// Classes returns the delta and the first remainder of r's classes, or
// an error for a value, count or delta out of range.
func (r Residues) Classes() (delta, first int64, err error) {
	if r.Values < 1 || r.Stores < 1 || r.Value < 0 || r.Value >= r.Values || r.Values > math.MaxInt64/r.Stores ||
		r.Floor < 0 || r.Floor > MaxEnd {
		return 0, 0, fmt.Errorf("segment: residues of site value %d of %d, %d stores each, floor %d: out of range", r.Value, r.Values, r.Stores, r.Floor)
	}
	delta, first = r.Values*r.Stores, r.Value*r.Stores
	if err := CheckResidue(delta, first+r.Stores-1); err != nil {
		return 0, 0, fmt.Errorf("segment: %d site values of %d stores each: %w", r.Values, r.Stores, err)
	}
	return delta, first, nil
}

// NewSiteMulti returns a store over one site's stores, r.Stores of them
// (one or more): store i issues remainder first+i of delta (r.Classes).
// Every row is checked against it on every range, as NewMulti's are: a
// tag created before sites, whose rows record another delta, is refused
// until Adopt takes it into the site's classes.
func NewSiteMulti(r Residues, stores ...Store) (*Multi, error) {
	delta, first, err := r.Classes()
	if err != nil {
		return nil, err
	}
	if int64(len(stores)) != r.Stores {
		return nil, fmt.Errorf("segment: the sites' ledger fixes %d segment stores per site, %d are configured", r.Stores, len(stores))
	}
	return &Multi{stores: stores, delta: delta, first: first, floor: r.Floor, classes: map[string]map[int]int64{}, sets: map[string]string{}}, nil
}

// Row is one store's row of a tag.
type Row struct {
	Store int
	Info  TagInfo
}

// Rows lists every row of m's stores, store by store; every store must
// answer.
func (m *Multi) Rows(ctx context.Context) ([]Row, error) {
	var rows []Row
	for i, st := range m.stores {
		tags, err := st.Tags(ctx)
		if err != nil {
			return nil, fmt.Errorf("store %d: %w", i, err)
		}
		for _, t := range tags {
			rows = append(rows, Row{Store: i, Info: t})
		}
	}
	return rows, nil
}

// Value is the site value whose classes hold r, or -1 for a row of
// another delta than the sites' (one served before sites). A row in its
// own store's class has m's value.
func (m *Multi) Value(r Row) int64 {
	if r.Info.Delta != m.delta || CheckResidue(r.Info.Delta, r.Info.Remainder) != nil {
		return -1
	}
	return r.Info.Remainder / int64(len(m.stores))
}

// Mine reports whether r is in its store's class.
func (m *Multi) Mine(r Row) bool {
	return r.Info.Delta == m.delta && r.Info.Remainder == m.first+int64(r.Store)
}

// CompleteSets refuses rows that issued classes no row here accounts
// for: for each tag, rows of one delta d whose remainders are every one
// of 0..d−1 (one store's row of delta 1, or a whole set of stores). A
// tag's row of a set of d stores whose other rows are elsewhere issued
// IDs whose counter no store here holds.
func CompleteSets(rows []Row) error {
	type set struct {
		delta int64
		seen  map[int64]bool
	}
	sets := map[string]*set{}
	var order []string
	for _, r := range rows {
		t := r.Info
		if err := CheckResidue(t.Delta, t.Remainder); err != nil {
			return &ResidueError{Tag: t.Tag, Store: r.Store, Delta: t.Delta, Remainder: t.Remainder, Reason: "is outside every class: " + err.Error() + "; correct the row"}
		}
		s := sets[t.Tag]
		switch {
		case s == nil:
			s = &set{delta: t.Delta, seen: map[int64]bool{}}
			sets[t.Tag] = s
			order = append(order, t.Tag)
		case s.delta != t.Delta:
			return &ResidueError{Tag: t.Tag, Store: r.Store, Delta: t.Delta, Remainder: t.Remainder,
				Reason: fmt.Sprintf("has delta %d, another store's row delta %d: the rows make no one set", t.Delta, s.delta)}
		}
		s.seen[t.Remainder] = true
	}
	for _, tag := range order {
		s := sets[tag]
		for r := range s.delta {
			if !s.seen[r] {
				return &ResidueError{Tag: tag, Store: -1, Delta: s.delta, Remainder: r,
					Reason: fmt.Sprintf("is missing: the tag's rows are %d of a set of %d stores, and the others issued IDs whose counters no store here holds. "+
						"Make it one store's tag past the set's largest max_id first (docs/segments.md, \"Changing the number of stores\", to one store), or serve it from stores of its own", len(s.seen), s.delta)}
			}
		}
	}
	return nil
}

// Adopt takes rows (from Outside) into the site's classes: each row's
// next ID becomes the first of its store's class at or above both floor
// and its own next, in one compare-and-set write (Reclasser). A row that
// changed since it was read gives an error matching ErrReclassed: read
// the rows again, and raise the floor if they passed it.
func (m *Multi) Adopt(ctx context.Context, rows []Row, floor int64) error {
	var errs []error
	for _, r := range rows {
		rc, ok := m.stores[r.Store].(Reclasser)
		if !ok {
			return fmt.Errorf("segment: store %d (%T) cannot move a row into a site's classes: a site serves segments from Tinyid's table or firn's own", r.Store, m.stores[r.Store])
		}
		remainder := m.first + int64(r.Store)
		from := max(floor, r.Info.Next)
		next := from + ((remainder-from%m.delta)%m.delta+m.delta)%m.delta
		if next > MaxEnd {
			return &TagError{Tag: r.Info.Tag, Err: ErrExhausted}
		}
		if err := rc.Reclass(ctx, r.Info.Tag, r.Info, m.delta, remainder, next, classStep(r.Info, m.delta)); err != nil {
			if !errors.Is(err, ErrReclassed) {
				return fmt.Errorf("store %d: %w", r.Store, err)
			}
			errs = append(errs, fmt.Errorf("store %d: tag %q: %w", r.Store, r.Info.Tag, err))
		}
	}
	return errors.Join(errs...)
}

// classStep is the step that gives a row of info's IDs per range in
// classes of delta: a row that moves into a site's class keeps its IDs
// per range (a step below the delta would give ranges without an ID of
// the class).
func classStep(info TagInfo, delta int64) int64 {
	if info.Delta == delta {
		return max(info.Step, delta)
	}
	per := max(info.Step/max(info.Delta, 1), 1)
	return min(per*delta, StepLimit/delta*delta)
}
