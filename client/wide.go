package client

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/oklog/ulid/v2"
)

// NextUUIDs fills dst with UUIDv7s (RFC 9562) that a server made from its
// generator's slots, under the same HWM and node as its snowflake IDs, and
// returns how many it wrote. They are not buffered: each call asks a
// server (the one of the best latency first; on failure the next), so a
// UUID is never older than its answer.
func (c *Client) NextUUIDs(ctx context.Context, dst []uuid.UUID) (int, error) {
	return nextWide(ctx, c, "uuid", dst, func(s string) (uuid.UUID, error) {
		u, err := uuid.Parse(s)
		if err == nil && u.Version() != 7 {
			err = fmt.Errorf("version %d, want 7", u.Version())
		}
		return u, err
	})
}

// NextULIDs fills dst with ULIDs as NextUUIDs does UUIDv7s.
func (c *Client) NextULIDs(ctx context.Context, dst []ulid.ULID) (int, error) {
	return nextWide(ctx, c, "ulid", dst, ulid.ParseStrict)
}

// nextWide asks the servers in turn for len(dst) IDs of form, in batches
// of at most Config.MaxBatch, each read by wideOf.
func nextWide[T comparable](ctx context.Context, c *Client, form string, dst []T, parse func(string) (T, error)) (int, error) {
	if c.isClosed() {
		return 0, ErrClosed
	}
	done := 0
	for done < len(dst) {
		k := min(len(dst)-done, c.cfg.MaxBatch)
		ids, err := ask(ctx, c.pool, func(ctx context.Context, t transport) ([]T, error) { return wideOf(ctx, t, form, k, parse) })
		if err != nil {
			return done, err
		}
		done += copy(dst[done:], ids)
	}
	return done, nil
}

// wideOf asks t for n IDs of form and refuses, none of its IDs returned,
// a batch with an ID that does not parse or with one ID twice, which
// would be handed to one caller twice. IDs are compared as the values
// they parse to, not as text: uuid.Parse takes upper case, braces,
// urn:uuid: and the form without dashes, and a ULID is read in either
// case, so U and its upper case are one ID.
func wideOf[T comparable](ctx context.Context, t transport, form string, n int, parse func(string) (T, error)) ([]T, error) {
	texts, err := t.wide(ctx, form, n)
	if err != nil {
		return nil, err
	}
	ids := make([]T, len(texts))
	seen := make(map[T]string, len(texts))
	for i, s := range texts {
		id, err := parse(s)
		if err != nil {
			return nil, &Error{Kind: ErrUnavailable, Code: "bad_answer", Message: fmt.Sprintf("%s %q: %v", form, s, err)}
		}
		if first, ok := seen[id]; ok {
			return nil, &Error{Kind: ErrUnavailable, Code: "bad_answer", Message: fmt.Sprintf(
				"%s %q is %q again: the batch holds one ID twice", form, s, first)}
		}
		seen[id] = s
		ids[i] = id
	}
	return ids, nil
}

// ask calls f on one server after another, the best first, until one
// answers or Config.Attempts have failed. Each try has Config.Timeout.
func ask[T any](ctx context.Context, p *pool, f func(context.Context, transport) (T, error)) (T, error) {
	var zero T
	var tried []*Error
	used := map[*endpoint]bool{}
	for range p.attempts {
		e := p.pick(func(e *endpoint) bool { return used[e] }, func(*endpoint) bool { return false }, false)
		if e == nil {
			break
		}
		used[e] = true
		rctx, cancel := context.WithTimeout(ctx, p.timeout)
		v, err := f(rctx, e.t)
		cancel()
		if err == nil {
			return v, nil
		}
		if !retryable(err) || ctx.Err() != nil {
			return zero, asError(err, e.name)
		}
		tried = append(tried, asError(err, e.name))
		e.failures.Add(1)
		p.markDown(e)
		p.failovers.Add(1)
	}
	if len(tried) == 0 {
		return zero, &Error{Kind: ErrUnavailable, Code: "no_server", Message: "no server to ask"}
	}
	return zero, unavailable(tried)
}
