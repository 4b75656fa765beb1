package segment

import (
	"context"
	"errors"
	"time"
)

// lookupCall is one question to the store about a tag, whose answer every
// caller asking meanwhile shares.
type lookupCall struct {
	done chan struct{}
	info TagInfo
	err  error
}

// lookup asks the store for tag's row: once at a time per tag, and not at
// all within UnknownFor of an answer that the store has no such tag.
func (a *Allocator) lookup(ctx context.Context, tag string) (TagInfo, error) {
	for {
		a.unknownMu.Lock()
		if at, ok := a.unknown[tag]; ok && time.Since(at) < UnknownFor {
			a.unknownMu.Unlock()
			return TagInfo{}, ErrUnknownTag
		}
		c := a.lookups[tag]
		if c == nil {
			c = &lookupCall{done: make(chan struct{})}
			a.lookups[tag] = c
			a.unknownMu.Unlock()
			a.ask(ctx, tag, c)
			return c.info, c.err
		}
		a.unknownMu.Unlock()
		select {
		case <-c.done:
		case <-ctx.Done():
			return TagInfo{}, ctx.Err()
		}
		// Another caller's deadline is not this one's: ask again.
		if !errors.Is(c.err, context.Canceled) && !errors.Is(c.err, context.DeadlineExceeded) {
			return c.info, c.err
		}
	}
}

// ask runs c, a lookup of tag, and remembers an unknown tag. The callers
// waiting on c are released however the store returns.
func (a *Allocator) ask(ctx context.Context, tag string, c *lookupCall) {
	c.err = context.Canceled // what they see if the store panics
	defer func() {
		a.unknownMu.Lock()
		delete(a.lookups, tag)
		if errors.Is(c.err, ErrUnknownTag) {
			if len(a.unknown) >= MaxUnknownTags {
				clear(a.unknown)
			}
			a.unknown[tag] = time.Now()
		}
		a.unknownMu.Unlock()
		close(c.done)
	}()
	c.info, c.err = a.store.Tag(ctx, tag)
}
