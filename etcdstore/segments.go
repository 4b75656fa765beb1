package etcdstore

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/firn-id/firn/segment"
)

// Segments returns the segment store under the same prefix: each tag's
// counter in the key segments/<tag>, moved by compare-and-swap on its
// revision.
func (s *Store) Segments() segment.Store { return (*segments)(s) }

type segments Store

// limits are firn's own bound: no column limits a tag here, and
// segment.LongestTag (1024 characters) keeps keys, URLs, logs and metric
// labels small.
var limits = segment.Limits{Tag: segment.LongestTag, Description: 1024}

// Limits implements segment.Limiter.
func (g *segments) Limits() segment.Limits { return limits }

type tagValue struct {
	Next        int64     `json:"next"`
	Step        int64     `json:"step"`
	Description string    `json:"description,omitempty"`
	Updated     time.Time `json:"updated"`
	// Opaque is the tag's permutation record (segment.Recorded), written
	// at creation and never changed; empty for plain IDs.
	Opaque string `json:"opaque,omitempty"`
}

func (g *segments) key(tag string) string { return g.prefix + "segments/" + tag }

// read returns a tag's value and revision.
func (g *segments) read(ctx context.Context, tag string) (tagValue, int64, error) {
	if err := segment.CheckTag(tag, limits); err != nil {
		return tagValue{}, 0, err
	}
	resp, err := g.cli.Get(ctx, g.key(tag))
	if err != nil {
		return tagValue{}, 0, fmt.Errorf("read tag %q: %w", tag, err)
	}
	if len(resp.Kvs) == 0 {
		return tagValue{}, 0, segment.ErrUnknownTag
	}
	var v tagValue
	if err := json.Unmarshal(resp.Kvs[0].Value, &v); err != nil {
		return v, 0, fmt.Errorf("read tag %q: corrupt value: %w", tag, err)
	}
	return v, resp.Kvs[0].ModRevision, nil
}

// update applies f to a tag's value and writes it if the key has not
// changed since it was read, retrying otherwise.
func (g *segments) update(ctx context.Context, tag string, f func(*tagValue) bool) (tagValue, error) {
	for {
		v, rev, err := g.read(ctx, tag)
		if err != nil {
			return v, err
		}
		if !f(&v) {
			return v, nil
		}
		v.Updated = time.Now().UTC()
		b, _ := json.Marshal(v)
		resp, err := g.cli.Txn(ctx).
			If(clientv3.Compare(clientv3.ModRevision(g.key(tag)), "=", rev)).
			Then(clientv3.OpPut(g.key(tag), string(b))).
			Commit()
		if err != nil {
			return v, fmt.Errorf("update tag %q: %w", tag, err)
		}
		if resp.Succeeded {
			return v, nil
		}
	}
}

func (g *segments) Reserve(ctx context.Context, tag string, step int64) (segment.Range, error) {
	if step < 1 {
		return segment.Range{}, fmt.Errorf("reserve %q: step %d under 1", tag, step)
	}
	var start int64
	var exhausted error
	v, err := g.update(ctx, tag, func(v *tagValue) bool {
		if exhausted = segment.CanReserve(v.Next, step); exhausted != nil {
			return false
		}
		start = v.Next
		v.Next += step
		return true
	})
	if err == nil {
		err = exhausted
	}
	if err != nil {
		return segment.Range{}, err
	}
	return segment.Range{Start: start, End: v.Next, Delta: 1, Step: v.Step, Opaque: v.Opaque}, nil
}

func (g *segments) Tag(ctx context.Context, tag string) (segment.TagInfo, error) {
	v, _, err := g.read(ctx, tag)
	return segment.TagInfo{Tag: tag, Next: v.Next, Step: v.Step, Delta: 1, Description: v.Description, Updated: v.Updated, Opaque: v.Opaque}, err
}

func (g *segments) Tags(ctx context.Context) ([]segment.TagInfo, error) {
	resp, err := g.cli.Get(ctx, g.prefix+"segments/", clientv3.WithPrefix(), clientv3.WithSort(clientv3.SortByKey, clientv3.SortAscend))
	if err != nil {
		return nil, fmt.Errorf("list tags: %w", err)
	}
	var out []segment.TagInfo
	for _, kv := range resp.Kvs {
		var v tagValue
		if err := json.Unmarshal(kv.Value, &v); err != nil {
			return nil, fmt.Errorf("list tags: %s: %w", kv.Key, err)
		}
		tag := strings.TrimPrefix(string(kv.Key), g.prefix+"segments/")
		out = append(out, segment.TagInfo{Tag: tag, Next: v.Next, Step: v.Step, Delta: 1, Description: v.Description, Updated: v.Updated, Opaque: v.Opaque})
	}
	return out, nil
}

func (g *segments) CreateTag(ctx context.Context, tag string, first, step int64, description string) error {
	return g.CreateTagOpaque(ctx, tag, first, step, 1, 0, description, "")
}

// CreateTagOpaque implements segment.OpaqueCreator, for one store (delta
// 1): etcd records no residue class.
func (g *segments) CreateTagOpaque(ctx context.Context, tag string, first, step, delta, remainder int64, description, permutation string) error {
	if err := segment.CheckCreate(tag, first, step, description, limits); err != nil {
		return err
	}
	if err := segment.CheckRecorded(permutation); err != nil {
		return err
	}
	if delta != 1 || remainder != 0 {
		return fmt.Errorf("etcdstore: delta %d, remainder %d: etcd serves a tag alone (delta 1)", delta, remainder)
	}
	b, _ := json.Marshal(tagValue{Next: first, Step: step, Description: description, Updated: time.Now().UTC(), Opaque: permutation})
	resp, err := g.cli.Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(g.key(tag)), "=", 0)).
		Then(clientv3.OpPut(g.key(tag), string(b))).
		Commit()
	if err != nil {
		return fmt.Errorf("create tag %q: %w", tag, err)
	}
	if !resp.Succeeded {
		return segment.ErrTagExists
	}
	return nil
}

func (g *segments) SetStep(ctx context.Context, tag string, step int64) error {
	if err := segment.CheckStep(step); err != nil {
		return err
	}
	_, err := g.update(ctx, tag, func(v *tagValue) bool { v.Step = step; return true })
	return err
}

func (g *segments) Advance(ctx context.Context, tag string, next int64) (int64, error) {
	v, err := g.update(ctx, tag, func(v *tagValue) bool {
		if next <= v.Next {
			return false
		}
		v.Next = next
		return true
	})
	return v.Next, err
}
