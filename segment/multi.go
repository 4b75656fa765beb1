package segment

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// ErrResidues is matched by a *ResidueError.
var ErrResidues = &kind{"stores do not form one complete, disjoint set of residue classes"}

// ResidueError reports a store whose residue class for a tag does not fit
// the set: another delta than the number of stores, or a remainder another
// store already has.
type ResidueError struct {
	Tag       string
	Store     int // index in the set; -1: a row no store of the set holds
	Delta     int64
	Remainder int64
	Reason    string
}

func (e *ResidueError) Error() string {
	if e.Store < 0 { // a row no store holds
		return fmt.Sprintf("segment: tag %q: the row of remainder %d modulo %d %s", e.Tag, e.Remainder, e.Delta, e.Reason)
	}
	return fmt.Sprintf("segment: tag %q: store %d (delta %d, remainder %d) %s", e.Tag, e.Store, e.Delta, e.Remainder, e.Reason)
}

// Is makes errors.Is(err, ErrResidues) true.
func (e *ResidueError) Is(target error) bool { return target == ErrResidues }

// ResidueCreator is a store that can create a tag issuing one residue
// class (Tinyid's table, firn's own).
type ResidueCreator interface {
	CreateTagResidue(ctx context.Context, tag string, first, step, delta, remainder int64, description string) error
}

// ErrReclassed is matched by the error of a Reclass whose row is no
// longer the one it read: another process reserved or changed it
// meanwhile; read it again and retry.
var ErrReclassed = &kind{"the tag's row changed since it was read"}

// Reclasser is a store that can move a tag's row into another residue
// class in place, as sites need when a tag that one site served before
// sites is served under the sites' classes (docs/segments.md, "Several
// sites"). Reclass sets the row's delta, remainder and next ID (next is
// of the class: next ≡ remainder mod delta, and at least from.Next), and
// its step (at least the delta: a range holds an ID of the class), in one
// write that succeeds only while the row still holds from's delta,
// remainder and next ID; otherwise it writes nothing and returns an
// error matching ErrReclassed (ErrUnknownTag for a row that is gone).
type Reclasser interface {
	Reclass(ctx context.Context, tag string, from TagInfo, delta, remainder, next, step int64) error
}

// CheckReclass returns ErrInvalid unless a Reclass of a row read as from
// may write delta, remainder, next and step: a residue class
// (CheckResidue), next of that class, in 0..MaxEnd, and at least
// from.Next, and a step in 1..StepLimit no smaller than delta. Stores call
// it before they write. The last rule is uniqueness: IDs below from.Next
// may have been issued under the old class, and some of them are of the
// new one; from next on, none has been. from must be a row as Tag reads
// it, its next ID in 0..MaxEnd and of its class: a store that keeps the
// last ID issued rather than the next (Tinyid's max_id) matches from.Next
// exactly only then.
func CheckReclass(from TagInfo, delta, remainder, next, step int64) error {
	if err := CheckResidue(from.Delta, from.Remainder); err != nil {
		return fmt.Errorf("the row read: %w: %w", err, ErrInvalid)
	}
	if err := checkID("the row's next ID", from.Next); err != nil {
		return err
	}
	if from.Next%from.Delta != from.Remainder {
		return fmt.Errorf("the row's next ID %d is not %d mod %d, the row's class: %w", from.Next, from.Remainder, from.Delta, ErrInvalid)
	}
	if err := CheckResidue(delta, remainder); err != nil {
		return fmt.Errorf("%w: %w", err, ErrInvalid)
	}
	if err := checkID("next ID", next); err != nil {
		return err
	}
	if next%delta != remainder {
		return fmt.Errorf("next ID %d is not %d mod %d, the class it starts: %w", next, remainder, delta, ErrInvalid)
	}
	if next < from.Next {
		return fmt.Errorf("next ID %d is below the row's next ID %d: IDs under it may have been issued: %w", next, from.Next, ErrInvalid)
	}
	if err := CheckStep(step); err != nil {
		return err
	}
	if step < delta {
		return fmt.Errorf("step %d is below the delta %d: a range would hold no ID of the class: %w", step, delta, ErrInvalid)
	}
	return nil
}

// Collider is a store whose table may take two different tags for one
// row (MySQL's case- and trailing-space-insensitive collations: "Order"
// is "order" there). Collides names the row a new tag would collide
// with; Multi asks every store before it writes to any, so that a tag is
// created on every store of a set or on none.
type Collider interface {
	Collides(ctx context.Context, tag string) (row string, ok bool, err error)
}

// Multi serves tags from several independent stores at once, each issuing
// its own residue class modulo the number of stores (Flickr's odd/even
// ticket servers, Tinyid's delta/remainder): losing a store loses no
// availability, and the union never repeats.
//
// Store i of the set issues remainder i, so the order of the stores is
// part of the set's definition, the same in every process. On every range,
// not only at start, Multi checks that the row is the one its position
// says (delta the number of stores, remainder its position, and the set's
// name and size where the row records them) and refuses it otherwise: no
// process serves a class another store might also serve, whether a store
// is down and unseen, two processes list the stores in different orders,
// or a row was edited by hand. IDs stay unique; they increase while ranges
// come from one store, and may step back on a failover.
type Multi struct {
	stores []Store
	// delta and first are the set's residue classes: store i issues
	// remainder first+i modulo delta (NewMulti: delta the number of
	// stores, first 0; NewSiteMulti: a site's classes).
	delta, first int64
	// floor: every tag created starts at or above it (Residues.Floor).
	floor int64

	mu      sync.Mutex
	classes map[string]map[int]int64 // tag -> store -> remainder, as seen
	sets    map[string]string        // tag -> the set name rows record
	primary int
}

// NewMulti returns a store over stores, at least two.
func NewMulti(stores ...Store) (*Multi, error) {
	if len(stores) < 2 {
		return nil, fmt.Errorf("segment: a set needs at least two stores, got %d", len(stores))
	}
	return &Multi{stores: stores, delta: int64(len(stores)), classes: map[string]map[int]int64{}, sets: map[string]string{}}, nil
}

// fits records store i's class for tag, or says why it does not fit.
func (m *Multi) fits(tag string, i int, delta, remainder int64) error {
	switch {
	case delta != m.delta && m.first == 0 && m.delta == int64(len(m.stores)):
		return &ResidueError{Tag: tag, Store: i, Delta: delta, Remainder: remainder,
			Reason: fmt.Sprintf("has delta %d, but the set has %d stores: classes would be missing or shared", delta, m.delta)}
	case delta != m.delta:
		return &ResidueError{Tag: tag, Store: i, Delta: delta, Remainder: remainder,
			Reason: fmt.Sprintf("has delta %d, but the sites' classes have delta %d: a row of a tag served before sites (or under another ledger) is served under sites only once firn site claim, given this site's segment settings, took it into the site's classes; keep other rows out of a site's stores", delta, m.delta)}
	case remainder < 0 || remainder >= delta:
		return &ResidueError{Tag: tag, Store: i, Delta: delta, Remainder: remainder, Reason: "has a remainder outside 0..delta-1"}
	case remainder != m.first+int64(i):
		return &ResidueError{Tag: tag, Store: i, Delta: delta, Remainder: remainder,
			Reason: fmt.Sprintf("has remainder %d, but its position in the set gives it %d: list the stores in the order their rows were created, the same in every process", remainder, m.first+int64(i))}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	seen := m.classes[tag]
	if seen == nil {
		seen = map[int]int64{}
		m.classes[tag] = seen
	}
	for j, r := range seen {
		if j != i && r == remainder {
			return &ResidueError{Tag: tag, Store: i, Delta: delta, Remainder: remainder,
				Reason: fmt.Sprintf("overlaps store %d, which has the same remainder", j)}
		}
	}
	seen[i] = remainder
	return nil
}

// fitsSet checks the set a row records, where it records one: its size is
// the number of stores, and its name that of the other rows.
func (m *Multi) fitsSet(tag string, i int, info TagInfo) error {
	if info.SetSize == 0 {
		return nil
	}
	if info.SetSize != m.delta { // the rows' delta: the number of stores, or of every site's
		return &ResidueError{Tag: tag, Store: i, Delta: info.Delta, Remainder: info.Remainder,
			Reason: fmt.Sprintf("belongs to set %q of %d classes, but the configured stores make %d", info.Set, info.SetSize, m.delta)}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if name, ok := m.sets[tag]; ok && name != info.Set {
		return &ResidueError{Tag: tag, Store: i, Delta: info.Delta, Remainder: info.Remainder,
			Reason: fmt.Sprintf("belongs to set %q, another store to set %q", info.Set, name)}
	}
	m.sets[tag] = info.Set
	return nil
}

// order returns the store indexes to try, the primary first: ranges come
// from one store while it answers.
func (m *Multi) order() []int {
	m.mu.Lock()
	p := m.primary
	m.mu.Unlock()
	out := make([]int, 0, len(m.stores))
	for k := range m.stores {
		out = append(out, (p+k)%len(m.stores))
	}
	return out
}

// Reserve implements Store: it reserves from the primary store, or the
// next that answers, and checks the range's residue class.
func (m *Multi) Reserve(ctx context.Context, tag string, step int64) (Range, error) {
	var errs []error
	order := m.order()
	for k, i := range order {
		sctx, cancel := share(ctx, len(order)-k)
		r, err := m.stores[i].Reserve(sctx, tag, step)
		cancel()
		if err == nil {
			err = m.fits(tag, i, r.Delta, ((r.Start%r.Delta)+r.Delta)%r.Delta)
		}
		if err == nil {
			err = m.fitsSet(tag, i, TagInfo{Delta: r.Delta, Remainder: r.Start % r.Delta, Set: r.Set, SetSize: r.SetSize})
		}
		if err == nil {
			m.mu.Lock()
			m.primary = i
			m.mu.Unlock()
			return r, nil
		}
		if errors.Is(err, ErrUnknownTag) {
			return Range{}, err
		}
		errs = append(errs, fmt.Errorf("store %d: %w", i, err))
	}
	return Range{}, errors.Join(errs...)
}

// Tag implements Store: it reads the tag from every store that answers,
// checks their classes, and returns the first.
func (m *Multi) Tag(ctx context.Context, tag string) (TagInfo, error) {
	var first *TagInfo
	var errs []error
	for i, s := range m.stores {
		sctx, cancel := share(ctx, len(m.stores)-i)
		info, err := s.Tag(sctx, tag)
		cancel()
		if err == nil {
			err = m.fits(tag, i, info.Delta, info.Remainder)
		}
		if err == nil {
			err = m.fitsSet(tag, i, info)
		}
		var re *ResidueError
		switch {
		case errors.As(err, &re), errors.Is(err, ErrUnknownTag):
			return TagInfo{}, err
		case err != nil:
			errs = append(errs, fmt.Errorf("store %d: %w", i, err))
		case first == nil:
			first = &info
		}
	}
	if first == nil {
		return TagInfo{}, errors.Join(errs...)
	}
	return *first, nil
}

// Tags implements Store: the tags of the first store that answers.
func (m *Multi) Tags(ctx context.Context) ([]TagInfo, error) {
	var errs []error
	for i, s := range m.stores {
		tags, err := s.Tags(ctx)
		if err == nil {
			return tags, nil
		}
		errs = append(errs, fmt.Errorf("store %d: %w", i, err))
	}
	return nil, errors.Join(errs...)
}

// CreateTag implements Store: store i gets remainder i of delta n. Every
// store must be a ResidueCreator and answer: nothing is created while one
// is down. A store that already has the tag must have it in its class (a
// retry after a creation cut short completes it); ErrTagExists only when
// every store had it. A store given the tag while others have it starts
// past the furthest counter among them, not at first: it may be a
// database that replaced one whose rows were lost (see docs/restore.md).
//
// The tag is checked first against the full rule and the smallest limits
// of the set (Limits): it is created where every store can hold it, or
// nowhere.
func (m *Multi) CreateTag(ctx context.Context, tag string, first, step int64, description string) error {
	return m.create(ctx, tag, first, step, description, "")
}

// CreateTagOpaque implements OpaqueCreator: CreateTag with the permutation
// record, on every store of the set, each an OpaqueCreator. delta and
// remainder must be 1 and 0: the set gives each store its class.
func (m *Multi) CreateTagOpaque(ctx context.Context, tag string, first, step, delta, remainder int64, description, permutation string) error {
	if delta != 1 || remainder != 0 {
		return fmt.Errorf("segment: a set of %d stores gives each its class: create with delta 1, not %d", len(m.stores), delta)
	}
	return m.create(ctx, tag, first, step, description, permutation)
}

func (m *Multi) create(ctx context.Context, tag string, first, step int64, description, permutation string) error {
	if err := errors.Join(CheckCreate(tag, first, step, description, m.Limits()), CheckRecorded(permutation)); err != nil {
		return err
	}
	if err := m.checkStep(step); err != nil {
		return err
	}
	n := m.delta
	missing := make([]bool, len(m.stores))
	anyMissing := false
	start := max(first, m.floor) // past every counter a store of the set already has
	for i, s := range m.stores {
		if _, ok := s.(ResidueCreator); !ok {
			return fmt.Errorf("segment: store %d (%T) records no residue class: several stores need Tinyid's table or firn's own", i, s)
		}
		if _, ok := s.(OpaqueCreator); permutation != "" && !ok {
			return &TagError{Tag: tag, Err: fmt.Errorf("store %d: %w (%T)", i, ErrOpaqueUnsupported, s)}
		}
		info, err := s.Tag(ctx, tag)
		switch {
		case errors.Is(err, ErrUnknownTag):
			if err := collision(ctx, s, tag); err != nil {
				return fmt.Errorf("store %d: %w (a tag is created on every store of the set or on none)", i, err)
			}
			missing[i], anyMissing = true, true
		case err != nil:
			return fmt.Errorf("store %d: %w (a tag is created on every store of the set or on none)", i, err)
		case info.Delta != n || info.Remainder != m.first+int64(i):
			return &ResidueError{Tag: tag, Store: i, Delta: info.Delta, Remainder: info.Remainder,
				Reason: fmt.Sprintf("has the tag already, outside the class its position gives it (delta %d, remainder %d)", n, m.first+int64(i))}
		case info.Opaque != permutation:
			return fmt.Errorf("store %d: %w", i, &PermutationError{Tag: tag, Recorded: info.Opaque, Want: permutation})
		default:
			start = max(start, info.Next)
		}
	}
	if !anyMissing {
		return &TagError{Tag: tag, Err: ErrTagExists}
	}
	for i, s := range m.stores {
		if !missing[i] {
			continue
		}
		var err error
		if permutation != "" {
			err = s.(OpaqueCreator).CreateTagOpaque(ctx, tag, start, step, n, m.first+int64(i), description, permutation)
		} else {
			err = s.(ResidueCreator).CreateTagResidue(ctx, tag, start, step, n, m.first+int64(i), description)
		}
		if err != nil {
			return fmt.Errorf("store %d: %w", i, err)
		}
	}
	return nil
}

// collision refuses a tag that s's table would take for another row.
func collision(ctx context.Context, s Store, tag string) error {
	c, ok := s.(Collider)
	if !ok {
		return nil
	}
	row, found, err := c.Collides(ctx, tag)
	switch {
	case err != nil:
		return err
	case found && row != tag:
		return fmt.Errorf("the table's collation takes %q for the tag %q: %w", tag, row, ErrTagExists)
	}
	return nil
}

// share gives the next of left stores its share of ctx's time: a store
// that does not answer (a black-holed connection) uses up its share, not
// the whole deadline, and the stores after it are still asked.
func share(ctx context.Context, left int) (context.Context, context.CancelFunc) {
	d, ok := ctx.Deadline()
	if !ok || left <= 1 {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, time.Until(d)/time.Duration(left))
}

// checkStep refuses a step below the number of stores: a range of each
// store holds one ID of its class per delta, so a shorter one is empty.
func (m *Multi) checkStep(step int64) error {
	if n := m.delta; step < n {
		return Errorf(ErrInvalid, ": step %d is below %d, the delta of the tag's residue classes (several stores or sites): give a step of %d or more, so that each range holds an ID of its store's class", step, n, n)
	}
	return nil
}

// SetStep implements Store on every store, once the step is in
// 1..StepLimit.
func (m *Multi) SetStep(ctx context.Context, tag string, step int64) error {
	if err := CheckStep(step); err != nil {
		return err
	}
	if err := m.checkStep(step); err != nil {
		return err
	}
	for i, s := range m.stores {
		if err := s.SetStep(ctx, tag, step); err != nil {
			return fmt.Errorf("store %d: %w", i, err)
		}
	}
	return nil
}

// Advance implements Store on every store and returns the least counter
// after.
func (m *Multi) Advance(ctx context.Context, tag string, next int64) (int64, error) {
	least := int64(-1)
	for i, s := range m.stores {
		after, err := s.Advance(ctx, tag, next)
		if err != nil {
			return 0, fmt.Errorf("store %d: %w", i, err)
		}
		if least < 0 || after < least {
			least = after
		}
	}
	return least, nil
}

// Limits implements Limiter: the smallest limits of the stores, so a tag
// is created only if every store can hold it.
func (m *Multi) Limits() Limits {
	l := LimitsOf(m.stores[0])
	for _, s := range m.stores[1:] {
		o := LimitsOf(s)
		l.Tag = min(l.Tag, o.Tag)
		l.BMP = l.BMP || o.BMP
		if l.Description == 0 || (o.Description > 0 && o.Description < l.Description) {
			l.Description = o.Description
		}
	}
	return l
}
