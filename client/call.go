package client

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"reflect"
	"strconv"

	"github.com/firn-id/firn/api"
)

// The calls of the HTTP API besides IDs: a server's info, decoding, and
// segment administration. They are not buffered, and need Config.HTTP.

// Info returns what a server says of its snowflake generator: layout,
// node, and the most IDs a batch may ask for (GET /v1/snowflake/info,
// scope snowflake).
func (c *Client) Info(ctx context.Context) (api.Info, error) {
	var out api.Info
	return out, c.call(ctx, http.MethodGet, "/v1/snowflake/info", nil, &out)
}

// Decode asks a server to take id apart with its layout (GET
// /v1/snowflake/decode/{id}); Decompose does it locally.
func (c *Client) Decode(ctx context.Context, id uint64) (api.Decoded, error) {
	var out api.Decoded
	return out, c.call(ctx, http.MethodGet, "/v1/snowflake/decode/"+strconv.FormatUint(id, 10), nil, &out)
}

// Reveal asks a server in opaque mode for the plain ID behind id, taken
// apart (GET /v1/snowflake/reveal/{id}, scope reveal).
func (c *Client) Reveal(ctx context.Context, id uint64) (api.Decoded, error) {
	var out api.Decoded
	return out, c.call(ctx, http.MethodGet, "/v1/snowflake/reveal/"+strconv.FormatUint(id, 10), nil, &out)
}

// Guess asks a server which presets an ID of unknown origin plausibly
// belongs to (GET /v1/snowflake/guess/{id}).
func (c *Client) Guess(ctx context.Context, id uint64) (api.Guess, error) {
	var out api.Guess
	return out, c.call(ctx, http.MethodGet, "/v1/snowflake/guess/"+strconv.FormatUint(id, 10), nil, &out)
}

// Tags lists the segment tags (GET /v1/segments, scope admin).
func (c *Client) Tags(ctx context.Context) ([]api.Tag, error) {
	var out api.Tags
	return out.Tags, c.call(ctx, http.MethodGet, "/v1/segments", nil, &out)
}

// CreateTag creates a segment tag whose first ID is first (POST
// /v1/segments, scope admin). A tag that exists is ErrTagExists.
func (c *Client) CreateTag(ctx context.Context, tag string, first, step int64, description string) (api.Tag, error) {
	var out api.Tag
	in := api.CreateTag{Tag: tag, First: &first, Step: step, Description: description}
	return out, c.call(ctx, http.MethodPost, "/v1/segments", in, &out)
}

// SetStep changes a tag's step (PATCH /v1/segments/{tag}, scope admin).
func (c *Client) SetStep(ctx context.Context, tag string, step int64) error {
	return c.call(ctx, http.MethodPatch, "/v1/segments/"+url.PathEscape(tag), api.SetStep{Step: step}, &api.TagStep{})
}

// Advance moves a tag's stored counter so that its next ID is at least to,
// never back, and returns the next ID (POST /v1/segments/{tag}/advance,
// scope admin).
func (c *Client) Advance(ctx context.Context, tag string, to int64) (int64, error) {
	var out api.Advanced
	err := c.call(ctx, http.MethodPost, "/v1/segments/"+url.PathEscape(tag)+"/advance", api.Advance{To: to}, &out)
	return out.Next, err
}

// Reveal asks a server for the plain ID behind an ID of an opaque tag
// (GET /v1/segments/{tag}/reveal/{id}, scope reveal).
func (t *Tag) Reveal(ctx context.Context, id uint64) (int64, error) {
	if t.b.invalid != nil {
		return 0, t.b.invalid
	}
	var out api.Revealed
	err := t.b.c.call(ctx, http.MethodGet, "/v1/segments/"+url.PathEscape(t.name)+"/reveal/"+strconv.FormatUint(id, 10), nil, &out)
	return out.ID, err
}

// call sends one request of the HTTP API, in encoded as its JSON body
// unless nil, and decodes the answer into out; each try has Config.Timeout.
// A read goes to the servers in the configured order until one answers; a
// write goes to the first only, since a write whose answer was lost may
// have been done, and done twice would not be what the caller asked.
func (c *Client) call(ctx context.Context, method, path string, in, out any) error {
	if c.isClosed() {
		return ErrClosed
	}
	var body []byte
	if in != nil {
		var err error
		if body, err = json.Marshal(in); err != nil {
			return &Error{Kind: ErrInvalid, Code: "request", Message: fmt.Sprintf("%s %s: %v", method, path, err)}
		}
	}
	var tried []*Error
	for _, e := range c.pool.eps {
		t, ok := e.t.(*httpTransport)
		if !ok {
			return &Error{Kind: ErrInvalid, Endpoint: e.name, Code: "http_only", Message: fmt.Sprintf("%s %s is in the HTTP API only: set Config.HTTP", method, path)}
		}
		rctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
		err := t.call(rctx, method, path, body, out)
		cancel()
		if err == nil {
			return nil
		}
		ae := asError(err, e.name)
		ae.Message = method + " " + path + ": " + ae.Message
		if method != http.MethodGet || !retryable(err) || ctx.Err() != nil {
			return ae
		}
		tried = append(tried, ae)
	}
	return unavailable(tried)
}

// call sends one request and decodes its JSON answer into out. An answer
// that is not one whole JSON value of out's shape is an error, out left
// as it was: null, a field missing or null, a number in another form
// than the server's (checkShape).
func (t *httpTransport) call(ctx context.Context, method, path string, body []byte, out any) error {
	rc, err := t.do(ctx, method, path, body)
	if err != nil {
		return err
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, maxAnswer+1))
	switch {
	case err != nil:
		return &Error{Kind: ErrUnavailable, Endpoint: t.base, Code: "transport", Message: err.Error()}
	case len(b) > maxAnswer:
		return &Error{Kind: ErrUnavailable, Endpoint: t.base, Code: "bad_answer", Message: fmt.Sprintf("the answer is larger than %d bytes", maxAnswer)}
	}
	err = checkShape(b, reflect.TypeOf(out))
	if err == nil {
		err = json.Unmarshal(b, out)
	}
	if err != nil {
		return &Error{Kind: ErrUnavailable, Endpoint: t.base, Code: "bad_answer", Message: fmt.Sprintf("the answer is not the JSON expected: %v", err)}
	}
	return nil
}

// maxAnswer bounds a JSON answer: a list of tags is the largest.
const maxAnswer = 64 << 20
