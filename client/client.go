package client

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/firn-id/firn/segment"
	"github.com/firn-id/firn/snowflake"
)

// Config configures a Client. The zero value of every field but Endpoints
// means its default.
type Config struct {
	// Endpoints are the servers: host:port of their gRPC listeners, or with
	// HTTP set, base URLs (http://host:8080). At least one is required.
	Endpoints []string
	// HTTP makes the client talk the /v1 HTTP API instead of gRPC.
	HTTP bool
	// Token is the bearer token sent with every request; empty sends none.
	Token string
	// TLS, when set, makes gRPC use TLS with it, and configures https://
	// endpoints with HTTP.
	TLS *tls.Config
	// Layout is the servers' layout, for Decompose. Default: the firn
	// preset.
	Layout snowflake.Layout

	// Buffer is the least a buffer aims to hold, in IDs. Default 1,000.
	Buffer int
	// MaxBuffer is the most a buffer aims to hold. Default 1,000,000.
	MaxBuffer int
	// Ahead is how long a buffer should last at the observed rate: its
	// size is the rate times Ahead, between Buffer and MaxBuffer. Default
	// 250 ms, at most MaxAge/2.
	Ahead time.Duration
	// Refill is the fraction of the size below which a refill starts in
	// the background, in (0, 1). Default 0.5.
	Refill float64
	// MaxBatch is the most IDs one request asks for, at most the servers'
	// max_batch. Default 10,000.
	MaxBatch int
	// Parallel is the number of refill requests in flight per buffer.
	// Default 2.
	Parallel int
	// MaxAge is how long a fetched snowflake ID may wait in the buffer,
	// counted from when its request was sent; older ones are dropped.
	// Default 1 s.
	MaxAge time.Duration

	// Timeout bounds one request to one server. Default 2 s.
	Timeout time.Duration
	// Attempts bounds the servers tried for one refill, a failed server
	// counting once per try. Default the number of endpoints plus one,
	// at least 3.
	Attempts int
	// Backoff is the pause after every server failed once in a refill,
	// and after a refill failed, doubling up to MaxBackoff. Defaults 50 ms
	// and 1 s.
	Backoff, MaxBackoff time.Duration
	// HealthInterval is how often a server that failed is checked
	// (gRPC health, or /readyz) until it is ready again. Default 500 ms.
	HealthInterval time.Duration
}

// withDefaults fills in defaults and checks every field.
func (cfg Config) withDefaults() (Config, error) {
	if len(cfg.Endpoints) == 0 {
		return cfg, errors.New("client: Config.Endpoints is empty: name at least one firn server")
	}
	for _, e := range cfg.Endpoints {
		if err := checkEndpoint(e, cfg.HTTP); err != nil {
			return cfg, err
		}
	}
	if cfg.Layout.Name == "" && cfg.Layout.TimeBits == 0 {
		cfg.Layout, _ = snowflake.Preset("firn")
	}
	if err := cfg.Layout.Validate(); err != nil {
		return cfg, fmt.Errorf("client: Config.Layout: %w", err)
	}
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	defD := func(v *time.Duration, d time.Duration) {
		if *v == 0 {
			*v = d
		}
	}
	def(&cfg.Buffer, 1_000)
	def(&cfg.MaxBuffer, 1_000_000)
	def(&cfg.MaxBatch, 10_000)
	def(&cfg.Parallel, 2)
	def(&cfg.Attempts, max(3, len(cfg.Endpoints)+1))
	defD(&cfg.MaxAge, time.Second)
	defD(&cfg.Ahead, min(250*time.Millisecond, cfg.MaxAge/2))
	defD(&cfg.Timeout, 2*time.Second)
	defD(&cfg.Backoff, 50*time.Millisecond)
	defD(&cfg.MaxBackoff, time.Second)
	defD(&cfg.HealthInterval, 500*time.Millisecond)
	if cfg.Refill == 0 {
		cfg.Refill = 0.5
	}
	for _, c := range []struct {
		name string
		bad  bool
		want string
	}{
		{"Buffer", cfg.Buffer < 1, "at least 1"},
		{"MaxBuffer", cfg.MaxBuffer < cfg.Buffer, fmt.Sprintf("at least Buffer (%d)", cfg.Buffer)},
		{"MaxBatch", cfg.MaxBatch < 1 || cfg.MaxBatch > 1<<31-1, "from 1 to 2^31-1"},
		{"Parallel", cfg.Parallel < 1, "at least 1"},
		{"Attempts", cfg.Attempts < 1, "at least 1"},
		{"Refill", !(cfg.Refill > 0 && cfg.Refill < 1), "between 0 and 1, exclusive"},
		{"MaxAge", cfg.MaxAge < 0, "positive"},
		{"Ahead", cfg.Ahead < 0 || cfg.Ahead > cfg.MaxAge/2, fmt.Sprintf("positive, at most MaxAge/2 (%s)", cfg.MaxAge/2)},
		{"Timeout", cfg.Timeout < 0, "positive"},
		{"Backoff", cfg.Backoff < 0, "positive"},
		{"MaxBackoff", cfg.MaxBackoff < cfg.Backoff, "at least Backoff"},
		{"HealthInterval", cfg.HealthInterval < 0, "positive"},
	} {
		if c.bad {
			return cfg, fmt.Errorf("client: Config.%s: want %s", c.name, c.want)
		}
	}
	return cfg, nil
}

func checkEndpoint(e string, useHTTP bool) error {
	if useHTTP {
		u, err := url.Parse(e)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || strings.Trim(u.Path, "/") != "" {
			return fmt.Errorf("client: endpoint %q: want a base URL such as http://127.0.0.1:8080", e)
		}
		return nil
	}
	if _, _, err := net.SplitHostPort(e); err != nil || strings.Contains(e, "/") {
		return fmt.Errorf("client: endpoint %q: want host:port of a gRPC listener, such as 127.0.0.1:9090 (or set HTTP for URLs)", e)
	}
	return nil
}

// Client fetches IDs from firn servers and buffers them. It is safe for
// concurrent use.
type Client struct {
	cfg    Config
	pool   *pool
	ctx    context.Context // cancelled by Close: stops refills
	cancel context.CancelFunc
	wg     sync.WaitGroup // refills
	snow   *buffer

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
	p := &pool{timeout: cfg.Timeout, attempts: cfg.Attempts, backoff: cfg.Backoff, maxWait: cfg.MaxBackoff,
		every: cfg.HealthInterval, done: make(chan struct{})}
	var hc *http.Client
	if cfg.HTTP {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.MaxIdleConnsPerHost = 4 * cfg.Parallel
		tr.TLSClientConfig = cfg.TLS
		hc = &http.Client{Transport: tr}
	}
	for _, e := range cfg.Endpoints {
		var t transport = &grpcTransport{addr: e, token: cfg.Token, tls: cfg.TLS}
		if cfg.HTTP {
			t = &httpTransport{base: strings.TrimRight(e, "/"), token: cfg.Token, hc: hc}
		}
		p.eps = append(p.eps, &endpoint{name: e, t: t})
	}
	return newClient(cfg, p), nil
}

func newClient(cfg Config, p *pool) *Client {
	c := &Client{cfg: cfg, pool: p, tags: map[string]*Tag{}}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	c.snow = newBuffer(c, "")
	return c
}

// Next returns a snowflake ID, from the buffer unless it is empty.
func (c *Client) Next(ctx context.Context) (int64, error) { return c.snow.next(ctx) }

// NextN fills dst with snowflake IDs and returns how many it wrote: all of
// dst, or fewer with the error that stopped it.
func (c *Client) NextN(ctx context.Context, dst []int64) (int, error) { return c.snow.nextN(ctx, dst) }

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
		t = &Tag{name: name, b: newBuffer(c, name)}
		if err := segment.CheckTag(name, segment.Limits{Tag: segment.LongestTag}); err != nil {
			t.b.invalid = &Error{Kind: ErrInvalid, Code: "invalid", Message: err.Error()}
			t.b.closed = true
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
	// Failovers counts requests retried on another server.
	Failovers uint64
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
	// Failures counts requests to it that failed.
	Failures uint64
}

// Stats returns the client's current figures.
func (c *Client) Stats() Stats {
	s := Stats{Failovers: c.pool.failovers.Load(), Buffers: []BufferStats{c.snow.stats()}}
	for _, e := range c.pool.eps {
		s.Endpoints = append(s.Endpoints, EndpointStats{Endpoint: e.name, Healthy: !e.down.Load(), Failures: e.failures.Load()})
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

// Close stops refills, drops the buffered IDs and closes the connections,
// waiting for the refills in flight until ctx is done. Calls after Close
// return ErrClosed. Close is idempotent.
func (c *Client) Close(ctx context.Context) error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	bufs := []*buffer{c.snow}
	for _, t := range c.tags {
		bufs = append(bufs, t.b)
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
		// The refills still running were cancelled; closing the
		// connections ends them.
		return errors.Join(ctx.Err(), c.pool.close())
	}
	return c.pool.close()
}

// Tag is the handle of one segment tag.
type Tag struct {
	name string
	b    *buffer
}

// Name is the tag's name.
func (t *Tag) Name() string { return t.name }

// Next returns a segment ID of the tag.
func (t *Tag) Next(ctx context.Context) (int64, error) { return t.b.next(ctx) }

// NextN fills dst with segment IDs of the tag and returns how many it
// wrote: all of dst, or fewer with the error that stopped it.
func (t *Tag) NextN(ctx context.Context, dst []int64) (int, error) { return t.b.nextN(ctx, dst) }
