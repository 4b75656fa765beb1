package segmenttest

import (
	"context"
	"sort"
	"sync"
	"time"

	"github.com/firn-id/firn/segment"
)

// MemStore is an in-memory segment.Store for tests of code that uses a
// store. Delay makes every call take that long (a slow database); Fail
// makes every call return an error (an outage).
type MemStore struct {
	mu       sync.Mutex
	tags     map[string]*segment.TagInfo
	fail     error
	delay    time.Duration
	reserves int
	limits   segment.Limits
}

// NewMemStore returns an empty store with segment.DefaultLimits.
func NewMemStore() *MemStore {
	return &MemStore{tags: map[string]*segment.TagInfo{}, limits: segment.DefaultLimits}
}

// SetLimits changes the limits the store declares and applies.
func (s *MemStore) SetLimits(l segment.Limits) {
	s.mu.Lock()
	s.limits = l
	s.mu.Unlock()
}

// Limits implements segment.Limiter.
func (s *MemStore) Limits() segment.Limits {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.limits
}

// Fail makes every call return err until Fail(nil).
func (s *MemStore) Fail(err error) {
	s.mu.Lock()
	s.fail = err
	s.mu.Unlock()
}

// SetDelay makes every call wait d first, honouring its context.
func (s *MemStore) SetDelay(d time.Duration) {
	s.mu.Lock()
	s.delay = d
	s.mu.Unlock()
}

// Reserves returns the number of successful Reserve calls.
func (s *MemStore) Reserves() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reserves
}

// enter waits the delay, then returns the failure set, or the serving
// rule's verdict on tag.
func (s *MemStore) enter(ctx context.Context, tag string) error {
	s.mu.Lock()
	d, err, l := s.delay, s.fail, s.limits
	s.mu.Unlock()
	if err == nil && tag != "" {
		err = segment.CheckTag(tag, l)
	}
	if d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return err
}

// Reserve implements segment.Store.
func (s *MemStore) Reserve(ctx context.Context, tag string, step int64) (segment.Range, error) {
	if err := s.enter(ctx, tag); err != nil {
		return segment.Range{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.tags[tag]
	if t == nil {
		return segment.Range{}, segment.ErrUnknownTag
	}
	if err := segment.CanReserve(t.Next, step); err != nil {
		return segment.Range{}, err
	}
	r := segment.Range{Start: t.Next, End: t.Next + step, Delta: t.Delta, Step: t.Step, Opaque: t.Opaque}
	t.Next = r.End + (t.Remainder-r.End%t.Delta+t.Delta)%t.Delta
	s.reserves++
	return r, nil
}

// Tag implements segment.Store.
func (s *MemStore) Tag(ctx context.Context, tag string) (segment.TagInfo, error) {
	if err := s.enter(ctx, tag); err != nil {
		return segment.TagInfo{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if t := s.tags[tag]; t != nil {
		return *t, nil
	}
	return segment.TagInfo{}, segment.ErrUnknownTag
}

// Tags implements segment.Store.
func (s *MemStore) Tags(ctx context.Context) ([]segment.TagInfo, error) {
	if err := s.enter(ctx, ""); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []segment.TagInfo
	for _, t := range s.tags {
		out = append(out, *t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Tag < out[j].Tag })
	return out, nil
}

// CreateTag implements segment.Store.
func (s *MemStore) CreateTag(ctx context.Context, tag string, first, step int64, description string) error {
	if err := s.enter(ctx, tag); err != nil {
		return err
	}
	if err := segment.CheckCreate(tag, first, step, description, s.Limits()); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tags[tag] != nil {
		return segment.ErrTagExists
	}
	s.tags[tag] = &segment.TagInfo{Tag: tag, Next: first, Step: step, Delta: 1, Description: description, Updated: time.Now()}
	return nil
}

// CreateTagResidue adds a tag whose IDs are remainder modulo delta, from
// the first such ID at or after first.
func (s *MemStore) CreateTagResidue(ctx context.Context, tag string, first, step, delta, remainder int64, description string) error {
	if err := s.CreateTag(ctx, tag, first, step, description); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.tags[tag]
	t.Delta, t.Remainder = delta, remainder
	t.Next = first + (remainder-first%delta+delta)%delta
	return nil
}

// CreateTagOpaque implements segment.OpaqueCreator.
func (s *MemStore) CreateTagOpaque(ctx context.Context, tag string, first, step, delta, remainder int64, description, permutation string) error {
	if err := segment.CheckRecorded(permutation); err != nil {
		return err
	}
	if err := s.CreateTagResidue(ctx, tag, first, step, delta, remainder, description); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tags[tag].Opaque = permutation
	return nil
}

// EditOpaque changes a tag's permutation record in place, as an operator
// editing a row would.
func (s *MemStore) EditOpaque(tag, permutation string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tags[tag].Opaque = permutation
}

// EditResidue changes a tag's residue class in place, as an operator
// editing a row would.
func (s *MemStore) EditResidue(tag string, delta, remainder int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.tags[tag]
	t.Delta, t.Remainder = delta, remainder
	t.Next += (remainder - t.Next%delta + delta) % delta
}

// SetStep implements segment.Store.
func (s *MemStore) SetStep(ctx context.Context, tag string, step int64) error {
	if err := s.enter(ctx, tag); err != nil {
		return err
	}
	if err := segment.CheckStep(step); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.tags[tag]
	if t == nil {
		return segment.ErrUnknownTag
	}
	t.Step = step
	return nil
}

// Advance implements segment.Store.
func (s *MemStore) Advance(ctx context.Context, tag string, next int64) (int64, error) {
	if err := s.enter(ctx, tag); err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.tags[tag]
	if t == nil {
		return 0, segment.ErrUnknownTag
	}
	t.Next = max(t.Next, next)
	return t.Next, nil
}

// Reclass implements segment.Reclasser: the row moves to delta,
// remainder, next and step only while it holds from's delta, remainder and
// next ID, all under the store's mutex, so no Reserve falls between the
// check and the write.
func (s *MemStore) Reclass(ctx context.Context, tag string, from segment.TagInfo, delta, remainder, next, step int64) error {
	if err := s.enter(ctx, tag); err != nil {
		return err
	}
	if err := segment.CheckReclass(from, delta, remainder, next, step); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.tags[tag]
	switch {
	case t == nil:
		return segment.ErrUnknownTag
	case t.Delta != from.Delta || t.Remainder != from.Remainder || t.Next != from.Next:
		return segment.Errorf(segment.ErrReclassed, ": the row holds %d mod %d from %d, not %d mod %d from %d",
			t.Remainder, t.Delta, t.Next, from.Remainder, from.Delta, from.Next)
	}
	t.Delta, t.Remainder, t.Next, t.Step, t.Updated = delta, remainder, next, step, time.Now()
	return nil
}

// PutRow writes a tag's row as it is, past every check, as a row written
// by Leaf, Tinyid or an operator may be.
func (s *MemStore) PutRow(info segment.TagInfo) {
	s.mu.Lock()
	defer s.mu.Unlock()
	info.Delta = max(info.Delta, 1)
	s.tags[info.Tag] = &info
}
