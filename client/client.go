package client

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/firn-id/firn/segment"
	"github.com/firn-id/firn/snowflake"
)

// Client fetches IDs from firn servers and buffers them. It is safe for
// concurrent use.
type Client struct {
	cfg    Config
	pool   *pool
	ctx    context.Context // cancelled by Close: stops refills
	cancel context.CancelFunc
	wg     sync.WaitGroup // refills
	snow   buffer

	mu     sync.Mutex
	tags   map[string]*Tag
	closed bool
}

// New returns a client of the servers in cfg. It does no I/O and starts no
// goroutines: the first call of each mode or tag does.
func New(cfg Config) (*Client, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	var hc *http.Client
	if cfg.HTTP {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.MaxIdleConnsPerHost = 4 * cfg.Parallel
		tr.TLSClientConfig = cfg.TLS
		hc = &http.Client{Transport: tr}
	}
	var ts []transport
	for _, e := range cfg.Endpoints {
		var t transport = &grpcTransport{addr: e, token: cfg.Token, tls: cfg.TLS}
		if cfg.HTTP {
			t = &httpTransport{base: strings.TrimRight(e, "/"), token: cfg.Token, hc: hc}
		}
		ts = append(ts, t)
	}
	return newClient(cfg, newPool(cfg, ts)), nil
}

func newClient(cfg Config, p *pool) *Client {
	c := &Client{cfg: cfg, pool: p, tags: map[string]*Tag{}}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	c.snow.init(c, "")
	return c
}

// Next returns a snowflake ID, from the buffer unless it is empty.
func (c *Client) Next(ctx context.Context) (int64, error) { return c.snow.next(ctx) }

// NextN fills dst with snowflake IDs and returns how many it wrote: all of
// dst, or fewer with the error that stopped it.
func (c *Client) NextN(ctx context.Context, dst []int64) (int, error) { return c.snow.nextN(ctx, dst) }

// NextText returns a snowflake ID as Config.Encoding writes it.
func (c *Client) NextText(ctx context.Context) (string, error) {
	id, err := c.Next(ctx)
	if err != nil {
		return "", err
	}
	return string(c.cfg.Encoding.Append(nil, uint64(id))), nil
}

// Tag returns the handle of a segment tag. It does no I/O; hold on to it
// for the fastest calls. The calls of a handle whose name no store can
// hold — empty, not UTF-8, or longer than segment.LongestTag — return
// ErrInvalid without asking a server (segment.CheckTag, the rule servers
// apply to a tag they serve).
func (c *Client) Tag(name string) *Tag {
	c.mu.Lock()
	defer c.mu.Unlock()
	t, ok := c.tags[name]
	if !ok {
		t = &Tag{name: name}
		t.b.init(c, name)
		if err := segment.CheckTag(name, segment.Limits{Tag: segment.LongestTag}); err != nil {
			// Not kept: a name no store can hold never has a buffer, and
			// names from callers' input do not grow Stats.
			t.b.invalid = &Error{Kind: ErrInvalid, Code: "invalid", Message: err.Error()}
			t.b.closed = true
			return t
		}
		if c.closed {
			t.b.close()
		}
		c.tags[name] = t
	}
	return t
}

// Decompose takes an ID of the configured layout apart, locally.
func (c *Client) Decompose(id uint64) (snowflake.Parts, error) { return c.cfg.Layout.Decompose(id) }

// Stats describes the client's servers and buffers.
type Stats struct {
	// Failovers counts requests retried on another server after one
	// failed.
	Failovers uint64
	// Hedges counts requests sent to a second server while the first had
	// not answered within its budget.
	Hedges uint64
	// Endpoints are the servers, in the configured order.
	Endpoints []EndpointStats
	// Buffers are the snowflake buffer, then one per tag used.
	Buffers []BufferStats
}

// EndpointStats describes one server.
type EndpointStats struct {
	Endpoint string
	// Healthy is false from a failed request until a health check passes.
	Healthy bool
	// Failures counts requests to it that failed, and snowflake answers
	// that came too late to serve (as old as Config.MaxAge).
	Failures uint64
	// Slow counts its requests that were hedged past their budget, and
	// its answers too late to serve.
	Slow uint64
	// Latency is its answers' smoothed time, halving every second it
	// goes without an answer; 0 until one is measured.
	Latency time.Duration
}

// Stats returns the client's current figures.
func (c *Client) Stats() Stats {
	s := Stats{Failovers: c.pool.failovers.Load(), Hedges: c.pool.hedges.Load(), Buffers: []BufferStats{c.snow.stats()}}
	now := time.Now().UnixNano()
	for _, e := range c.pool.eps {
		s.Endpoints = append(s.Endpoints, EndpointStats{Endpoint: e.name, Healthy: !e.down.Load(),
			Failures: e.failures.Load(), Slow: e.slow.Load(), Latency: time.Duration(e.smoothed(now))})
	}
	c.mu.Lock()
	tags := make([]*Tag, 0, len(c.tags))
	for _, t := range c.tags {
		tags = append(tags, t)
	}
	c.mu.Unlock()
	for _, t := range tags {
		s.Buffers = append(s.Buffers, t.b.stats())
	}
	return s
}

// isClosed reports whether Close was called.
func (c *Client) isClosed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closed
}

// Close stops refills, drops the buffered IDs and closes the connections.
// It cancels the refills in flight and waits for them until ctx is done,
// then for the refills' requests and the health checks under way, each
// bounded by Config.Timeout. Calls after Close return ErrClosed. Close does not end a
// call running on its caller's context — Fetch, NextUUIDs, NextULIDs and
// the HTTP API calls (Info, Decode, Tags…): its request in flight runs
// until answered, the call's context ends or Config.Timeout passes, and a
// gRPC connection it uses is closed once it lets go. Over gRPC its next
// request fails with ErrClosed; over HTTP it goes on to the end. Close is
// idempotent.
func (c *Client) Close(ctx context.Context) error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	bufs := []*buffer{&c.snow}
	for _, t := range c.tags {
		bufs = append(bufs, &t.b)
	}
	c.mu.Unlock()
	for _, b := range bufs {
		b.close()
	}
	c.cancel()
	done := make(chan struct{})
	go func() {
		c.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
		// The refills still running were cancelled, which ends their
		// requests; closing a gRPC connection would not, while one
		// uses it.
		return errors.Join(ctx.Err(), c.pool.close())
	}
	return c.pool.close()
}

// Tag is the handle of one segment tag.
type Tag struct {
	name string
	b    buffer
}

// Name is the tag's name.
func (t *Tag) Name() string { return t.name }

// Next returns a segment ID of the tag.
func (t *Tag) Next(ctx context.Context) (int64, error) { return t.b.next(ctx) }

// NextText returns an ID of the tag as Config.Encoding writes it.
func (t *Tag) NextText(ctx context.Context) (string, error) {
	id, err := t.Next(ctx)
	if err != nil {
		return "", err
	}
	return string(t.b.c.cfg.Encoding.Append(nil, uint64(id))), nil
}

// NextN fills dst with segment IDs of the tag and returns how many it
// wrote: all of dst, or fewer with the error that stopped it.
func (t *Tag) NextN(ctx context.Context, dst []int64) (int, error) { return t.b.nextN(ctx, dst) }
