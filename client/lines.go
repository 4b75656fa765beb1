package client

import (
	"context"
	"io"

	"github.com/google/uuid"
	"github.com/oklog/ulid/v2"

	"github.com/firn-id/firn/idtext"
	"github.com/firn-id/firn/wide"
)

// WriteLines writes n IDs to w, one a line, asking a server for at most
// batch a request: UUIDv7s for form "uuid", ULIDs for "ulid", and
// otherwise snowflake IDs written in enc — those of tag when it is not
// empty. The client refuses an answer cut short or not of IDs, so only
// whole answers reach w; an error of w is returned as it is.
func (c *Client) WriteLines(ctx context.Context, w io.Writer, form, tag string, n, batch int, enc idtext.Encoding) error {
	var out []byte
	for n > 0 {
		k := min(n, max(1, batch))
		var err error
		if out, err = c.appendLines(ctx, form, tag, k, enc, out[:0]); err != nil {
			return err
		}
		if _, err := w.Write(out); err != nil {
			return err
		}
		n -= k
	}
	return nil
}

// appendLines appends k IDs of form, each and a newline, to b.
func (c *Client) appendLines(ctx context.Context, form, tag string, k int, enc idtext.Encoding, b []byte) ([]byte, error) {
	switch form {
	case "uuid":
		ids := make([]uuid.UUID, k)
		if _, err := c.NextUUIDs(ctx, ids); err != nil {
			return b, err
		}
		return wide.AppendLines(b, ids), nil
	case "ulid":
		ids := make([]ulid.ULID, k)
		if _, err := c.NextULIDs(ctx, ids); err != nil {
			return b, err
		}
		return wide.AppendLines(b, ids), nil
	}
	fetch := c.Fetch
	if tag != "" {
		fetch = c.Tag(tag).Fetch
	}
	ids := make([]int64, k)
	if _, err := fetch(ctx, ids); err != nil {
		return b, err
	}
	return enc.AppendLines(b, ids), nil
}
