package localstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/firn-id/firn/segment"
)

// segmentsFile holds every tag's counter, in the data directory.
const segmentsFile = "segments.json"

type tagRecord struct {
	Next        int64     `json:"next"`
	Step        int64     `json:"step"`
	Description string    `json:"description,omitempty"`
	Updated     time.Time `json:"updated"`
	// Opaque is the tag's permutation record (segment.Recorded), written
	// at creation and never changed; empty for plain IDs.
	Opaque string `json:"opaque,omitempty"`
}

// Segments returns the segment store of the data directory: every tag's
// counter in one file, replaced and fsynced before a range is handed out.
// It shares the directory's lock with the node store.
func (s *Store) Segments() segment.Store { return (*segments)(s) }

type segments Store

// limits are firn's own bound: no column limits a tag here, and
// segment.LongestTag (1024 characters) keeps keys, URLs, logs and metric
// labels small.
var limits = segment.Limits{Tag: segment.LongestTag, Description: 1024}

// Limits implements segment.Limiter.
func (g *segments) Limits() segment.Limits { return limits }

func (g *segments) path() string { return filepath.Join(g.dir, segmentsFile) }

func (g *segments) load() (map[string]*tagRecord, error) {
	tags := map[string]*tagRecord{}
	b, err := os.ReadFile(g.path())
	if errors.Is(err, os.ErrNotExist) {
		return tags, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read segments: %w", err)
	}
	if err := json.Unmarshal(b, &tags); err != nil {
		return nil, fmt.Errorf("read segments: %s is corrupt: %w", g.path(), err)
	}
	return tags, nil
}

func (g *segments) save(tags map[string]*tagRecord) error {
	b, err := json.MarshalIndent(tags, "", "  ")
	if err != nil {
		return err
	}
	if err := writeFile(g.path(), append(b, '\n')); err != nil {
		return fmt.Errorf("write segments: %w", err)
	}
	return nil
}

// change loads the tags, applies f to them and saves them durably if f
// says so, under the store's lock.
func (g *segments) change(f func(map[string]*tagRecord) (bool, error)) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return segment.ErrClosed
	}
	tags, err := g.load()
	if err != nil {
		return err
	}
	write, err := f(tags)
	if err != nil || !write {
		return err
	}
	return g.save(tags)
}

func (g *segments) Reserve(_ context.Context, tag string, step int64) (r segment.Range, err error) {
	if step < 1 {
		return r, fmt.Errorf("reserve %q: step %d under 1", tag, step)
	}
	if err := segment.CheckTag(tag, limits); err != nil {
		return r, err
	}
	err = g.change(func(tags map[string]*tagRecord) (bool, error) {
		t := tags[tag]
		if t == nil {
			return false, segment.ErrUnknownTag
		}
		if err := segment.CanReserve(t.Next, step); err != nil {
			return false, err
		}
		r = segment.Range{Start: t.Next, End: t.Next + step, Delta: 1, Step: t.Step, Opaque: t.Opaque}
		t.Next, t.Updated = r.End, time.Now().UTC()
		return true, nil
	})
	return r, err
}

func (g *segments) Tag(_ context.Context, tag string) (info segment.TagInfo, err error) {
	if err := segment.CheckTag(tag, limits); err != nil {
		return info, err
	}
	err = g.change(func(tags map[string]*tagRecord) (bool, error) {
		t := tags[tag]
		if t == nil {
			return false, segment.ErrUnknownTag
		}
		info = segment.TagInfo{Tag: tag, Next: t.Next, Step: t.Step, Delta: 1, Description: t.Description, Updated: t.Updated, Opaque: t.Opaque}
		return false, nil
	})
	return info, err
}

func (g *segments) Tags(_ context.Context) (out []segment.TagInfo, err error) {
	err = g.change(func(tags map[string]*tagRecord) (bool, error) {
		for name, t := range tags {
			out = append(out, segment.TagInfo{Tag: name, Next: t.Next, Step: t.Step, Delta: 1, Description: t.Description, Updated: t.Updated, Opaque: t.Opaque})
		}
		return false, nil
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Tag < out[j].Tag })
	return out, err
}

func (g *segments) CreateTag(ctx context.Context, tag string, first, step int64, description string) error {
	return g.CreateTagOpaque(ctx, tag, first, step, 1, 0, description, "")
}

// CreateTagOpaque implements segment.OpaqueCreator, for one store (delta 1).
func (g *segments) CreateTagOpaque(_ context.Context, tag string, first, step, delta, remainder int64, description, permutation string) error {
	if err := segment.CheckCreate(tag, first, step, description, limits); err != nil {
		return err
	}
	if err := errors.Join(oneStore(delta, remainder), segment.CheckRecorded(permutation)); err != nil {
		return err
	}
	return g.change(func(tags map[string]*tagRecord) (bool, error) {
		if tags[tag] != nil {
			return false, segment.ErrTagExists
		}
		tags[tag] = &tagRecord{Next: first, Step: step, Description: description, Updated: time.Now().UTC(), Opaque: permutation}
		return true, nil
	})
}

func (g *segments) SetStep(_ context.Context, tag string, step int64) error {
	if err := errors.Join(segment.CheckTag(tag, limits), segment.CheckStep(step)); err != nil {
		return err
	}
	return g.change(func(tags map[string]*tagRecord) (bool, error) {
		t := tags[tag]
		if t == nil {
			return false, segment.ErrUnknownTag
		}
		t.Step, t.Updated = step, time.Now().UTC()
		return true, nil
	})
}

func (g *segments) Advance(_ context.Context, tag string, next int64) (after int64, err error) {
	if err := segment.CheckTag(tag, limits); err != nil {
		return 0, err
	}
	err = g.change(func(tags map[string]*tagRecord) (bool, error) {
		t := tags[tag]
		if t == nil {
			return false, segment.ErrUnknownTag
		}
		raise := next > t.Next
		t.Next = max(t.Next, next)
		after = t.Next
		return raise, nil
	})
	return after, err
}

// oneStore refuses a residue class other than the whole: the data
// directory records none.
func oneStore(delta, remainder int64) error {
	if delta != 1 || remainder != 0 {
		return fmt.Errorf("localstore: delta %d, remainder %d: the data directory serves a tag alone (delta 1)", delta, remainder)
	}
	return nil
}
