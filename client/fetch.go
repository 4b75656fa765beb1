package client

import "context"

// Fetch fills dst with snowflake IDs asked of the servers for this call,
// not taken from the buffer: in the order the servers issued them, in
// requests of at most Config.MaxBatch, each to one server (the best
// first; on failure the next). It returns how many it wrote: all of dst,
// or fewer with the error that stopped it. An answer cut short or not of
// IDs, or a batch with an ID twice or out of order (see the package
// doc), is an error, and none of its IDs is written. firn next --server
// draws with it.
func (c *Client) Fetch(ctx context.Context, dst []int64) (int, error) { return c.fetch(ctx, "", dst) }

// Fetch fills dst with IDs of the tag as Client.Fetch does snowflake IDs.
func (t *Tag) Fetch(ctx context.Context, dst []int64) (int, error) {
	if t.b.invalid != nil {
		return 0, t.b.invalid
	}
	return t.b.c.fetch(ctx, t.name, dst)
}

func (c *Client) fetch(ctx context.Context, tag string, dst []int64) (int, error) {
	if c.isClosed() {
		return 0, ErrClosed
	}
	done := 0
	for done < len(dst) {
		k := min(len(dst)-done, c.cfg.MaxBatch)
		ids, err := ask(ctx, c.pool, func(ctx context.Context, t transport) ([]int64, error) { return batchOf(ctx, t, tag, k) })
		if err != nil {
			return done, err
		}
		done += copy(dst[done:], ids)
	}
	return done, nil
}
