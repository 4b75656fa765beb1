package main

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/schollz/progressbar/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	"github.com/firn-id/firn/client"
	"github.com/firn-id/firn/firnpb"
)

var benchUsage = `Usage: firn bench [--protocol P] [--mode M] [--tag T] [--batch N]
                  [--workers N | --rate R] [--duration D] [--count N]
                  [--tls] [--ca FILE | --insecure] [--json]

Loads a firn server (or anything speaking Leaf's or Tinyid's HTTP routes)
and reports throughput, a latency histogram, errors, and whether every ID
received was unique. Closed loop by default (--workers callers, each
sending its next request when the last one is answered); open loop with
--rate, where worker i of W sends requests i, i+W, i+2W… of a fixed-rate
schedule whatever the answers do: a request due while its worker still
waits on an answer counts its latency from when it was due (no coordinated
omission); the timer's own lateness, up to a millisecond, is not counted.
A worker whose request failed waits before its next one, 1 ms doubling to
100 ms while failures continue (in open loop, until the later of that and
its next due time), so a server that is down is not flooded.
Over plain HTTP each worker holds one raw keep-alive connection, cheap
enough that the generator leaves the CPU to the server. A progress bar with
the current rate is drawn on standard error when it is a terminal.

  --target ADDR      the server: host:port of its gRPC listener (default
                     127.0.0.1:9090), or a base URL for HTTP, Leaf and
                     Tinyid (default http://127.0.0.1:8080; https:// for
                     TLS); several, comma-separated, for --protocol client
  --protocol P       grpc (default, unary calls), stream (gRPC server
                     streams, one per worker; a request is one message),
                     http (/v1), client (the Go SDK over gRPC, buffering),
                     leaf (/api/…/get/{key}) or tinyid
                     (/tinyid/id/nextIdSimple)
  --mode M           snowflake or segment (default: snowflake; segment
                     with --tag or --protocol tinyid)
  --tag T            the tag of segment mode (Leaf's key, Tinyid's bizType)
  --batch N          IDs per request, 1 to 100000 (default 1); leaf: 1 only
  --workers N        concurrent callers, 1 to 10000, each with its own
                     connection over HTTP (default 8; with --rate, 64)
  --rate R           requests per second, open loop, 0.001 to 10000000
                     (default: closed loop)
  --duration D       how long to run, more than 0 (default 10s)
  --count N          stop after N requests, 1 or more (default: no limit)
  --token T          bearer token (Tinyid: its token parameter)
  --tls              gRPC over TLS (the system's roots); over HTTP, TLS
                     comes with an https:// target
  --ca FILE          trust the PEM certificates in FILE instead of the
                     system's roots (implies --tls for gRPC)
  --insecure         do not verify the server's certificate (implies --tls
                     for gRPC); a warning is printed, and the report says so
  --json             print the result as JSON
  --no-check         skip the uniqueness check (keeps no IDs in memory)

Exit status: 0 when at least one ID arrived, no request failed and every
ID was unique (or --no-check); 1 when an ID was received twice, any
request failed (the count and the first error are printed) or no ID
arrived — the report's verdict line and --json's "failures" say which;
2 for bad input.
`

// benchConfig is one run's settings.
type benchConfig struct {
	targets  []string
	protocol string
	mode     string
	tag      string
	batch    int
	workers  int
	rate     float64
	duration time.Duration
	count    int64
	token    string
	tls      bool
	ca       string      // --ca: a PEM file of roots to trust
	insecure bool        // --insecure: no certificate verification
	tlsConf  *tls.Config // for gRPC with tls, and https:// targets
	check    bool
	progress io.Writer // nil: no progress bar
}

func runBench(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	target := fs.String("target", "", "")
	var cfg benchConfig
	fs.StringVar(&cfg.protocol, "protocol", "grpc", "")
	fs.StringVar(&cfg.mode, "mode", "snowflake", "")
	fs.StringVar(&cfg.tag, "tag", "", "")
	fs.IntVar(&cfg.batch, "batch", 1, "")
	fs.IntVar(&cfg.workers, "workers", 0, "")
	fs.Float64Var(&cfg.rate, "rate", 0, "")
	fs.DurationVar(&cfg.duration, "duration", 10*time.Second, "")
	fs.Int64Var(&cfg.count, "count", 0, "")
	fs.StringVar(&cfg.token, "token", "", "")
	fs.BoolVar(&cfg.tls, "tls", false, "")
	fs.StringVar(&cfg.ca, "ca", "", "")
	fs.BoolVar(&cfg.insecure, "insecure", false, "")
	asJSON := fs.Bool("json", false, "")
	noCheck := fs.Bool("no-check", false, "")
	rest, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usagef("unexpected argument %q; usage: firn bench [flags]", rest[0])
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	cfg.check = !*noCheck
	if err := cfg.validate(*target, set); err != nil {
		return err
	}
	if cfg.insecure {
		fmt.Fprintln(logOutput, "firn bench: WARNING: --insecure: the server's certificate is NOT verified; anyone on the path can answer in its name")
	}
	if fi, err := os.Stderr.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 && !*asJSON {
		cfg.progress = os.Stderr
	}
	res, err := bench(context.Background(), cfg)
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(res); err != nil {
			return err
		}
	} else {
		res.print(stdout)
	}
	return res.err()
}

// validate checks cfg and fills its defaults; set holds the flags given
// on the command line, so that an explicit 0 is refused rather than taken
// for "the default".
func (c *benchConfig) validate(target string, set map[string]bool) error {
	if err := c.validateTarget(target); err != nil {
		return err
	}
	if err := c.validateMode(set); err != nil {
		return err
	}
	if err := c.validateNumbers(set); err != nil {
		return err
	}
	return c.validateTLS()
}

func (c *benchConfig) validateTarget(target string) error {
	switch {
	case c.grpc():
		if target == "" {
			target = "127.0.0.1:9090"
		}
	case c.web():
		if target == "" {
			target = "http://127.0.0.1:8080"
		}
	default:
		return usagef("--protocol %q: want grpc, stream, http, client, leaf or tinyid", c.protocol)
	}
	c.targets = strings.Split(target, ",")
	if len(c.targets) > 1 && c.protocol != "client" {
		return usagef("--target names %d servers: only --protocol client spreads over several", len(c.targets))
	}
	for _, t := range c.targets {
		web := strings.HasPrefix(t, "http://") || strings.HasPrefix(t, "https://")
		if web != c.web() {
			want := "a gRPC host:port such as 127.0.0.1:9090"
			if !web {
				want = "a base URL such as http://127.0.0.1:8080"
			}
			return usagef("--target %q: --protocol %s wants %s", t, c.protocol, want)
		}
	}
	return nil
}

// grpc reports whether the protocol speaks gRPC to a host:port.
func (c *benchConfig) grpc() bool {
	return c.protocol == "grpc" || c.protocol == "stream" || c.protocol == "client"
}

// web reports whether the protocol speaks HTTP to a base URL.
func (c *benchConfig) web() bool {
	return c.protocol == "http" || c.protocol == "leaf" || c.protocol == "tinyid"
}

// validateMode checks --mode and --tag. Without --mode, a --tag or
// --protocol tinyid (whose routes serve only segments) means segment.
func (c *benchConfig) validateMode(set map[string]bool) error {
	if !set["mode"] && (c.tag != "" || c.protocol == "tinyid") {
		c.mode = "segment"
	}
	switch {
	case c.mode != "snowflake" && c.mode != "segment":
		return usagef("--mode %q: want snowflake or segment", c.mode)
	case c.protocol == "tinyid" && c.mode != "segment":
		return usagef("--mode %s: Tinyid's routes serve segment tags only (its bizType is --tag)", c.mode)
	case c.protocol == "tinyid" && c.tag == "":
		return usagef("--protocol tinyid needs --tag, Tinyid's bizType")
	case c.mode == "snowflake" && c.tag != "":
		return usagef("--tag %q: tags are for --mode segment", c.tag)
	case c.mode == "segment" && c.tag == "":
		return usagef("--mode segment needs --tag (the tag: Leaf's key, Tinyid's bizType)")
	}
	return nil
}

// validateNumbers checks the numeric flags against their ranges; a flag
// not given keeps its default, one given as 0 is refused.
func (c *benchConfig) validateNumbers(set map[string]bool) error {
	switch {
	case c.batch < 1 || c.batch > 100_000:
		return usagef("--batch %d: want 1 to 100000", c.batch)
	case c.protocol == "leaf" && c.batch != 1:
		return usagef("--batch %d: Leaf's routes return one ID a request", c.batch)
	case set["rate"] && !(c.rate >= 0.001 && c.rate <= 10_000_000):
		return usagef("--rate %g: want 0.001 to 10000000 requests per second (omit --rate for closed loop)", c.rate)
	case set["workers"] && (c.workers < 1 || c.workers > 10_000):
		return usagef("--workers %d: want 1 to 10000", c.workers)
	case c.duration <= 0:
		return usagef("--duration %s: want a positive duration", c.duration)
	case set["count"] && c.count < 1:
		return usagef("--count %d: want 1 or more (omit --count for no limit)", c.count)
	}
	if !set["workers"] {
		c.workers = 8
		if c.rate > 0 {
			c.workers = 64
		}
	}
	return nil
}

// caller sends one request and returns the IDs it got, appended to dst.
type caller func(ctx context.Context, dst []int64) ([]int64, error)

// newCaller returns the request of cfg and a function closing what it
// opened.
func newCaller(cfg benchConfig) (func() caller, func(), error) {
	one := func(c caller, close func(), err error) (func() caller, func(), error) {
		return func() caller { return c }, close, err
	}
	switch cfg.protocol {
	case "grpc":
		return one(grpcCaller(cfg))
	case "stream":
		return streamCaller(cfg)
	case "client":
		return one(clientCaller(cfg))
	default:
		return httpCaller(cfg), func() {}, nil
	}
}

// streamCaller gives each worker its own server stream (firnpb Stream);
// one request is one message received.
func streamCaller(cfg benchConfig) (func() caller, func(), error) {
	conn, c, auth, err := dialFirn(cfg)
	if err != nil {
		return nil, nil, err
	}
	return func() caller {
		var stream firnpb.Firn_StreamClient
		return func(ctx context.Context, dst []int64) ([]int64, error) {
			if stream == nil {
				s, err := c.Stream(auth(ctx), &firnpb.StreamRequest{Tag: cfg.tag, Batch: int32(cfg.batch)})
				if err != nil {
					return dst, err
				}
				stream = s
			}
			m, err := stream.Recv()
			if err != nil {
				stream = nil
				return dst, err
			}
			return append(dst, m.Ids...), nil
		}
	}, func() { _ = conn.Close() }, nil
}

// dialFirn dials the gRPC target and returns a function adding the token.
func dialFirn(cfg benchConfig) (*grpc.ClientConn, firnpb.FirnClient, func(context.Context) context.Context, error) {
	creds := insecure.NewCredentials()
	if cfg.tlsConf != nil {
		creds = credentials.NewTLS(cfg.tlsConf)
	}
	conn, err := grpc.Dial(cfg.targets[0], grpc.WithTransportCredentials(creds))
	if err != nil {
		return nil, nil, nil, err
	}
	auth := func(ctx context.Context) context.Context { return ctx }
	if cfg.token != "" {
		auth = func(ctx context.Context) context.Context {
			return metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+cfg.token)
		}
	}
	return conn, firnpb.NewFirnClient(conn), auth, nil
}

func grpcCaller(cfg benchConfig) (caller, func(), error) {
	conn, c, auth, err := dialFirn(cfg)
	if err != nil {
		return nil, nil, err
	}
	n := int32(cfg.batch)
	one := func(r *firnpb.NextResponse, err error) ([]int64, error) {
		if err != nil {
			return nil, err
		}
		return []int64{r.Id}, nil
	}
	many := func(r *firnpb.BatchResponse, err error) ([]int64, error) {
		if err != nil {
			return nil, err
		}
		return r.Ids, nil
	}
	var call func(ctx context.Context) ([]int64, error)
	switch {
	case cfg.mode == "snowflake" && n == 1:
		call = func(ctx context.Context) ([]int64, error) { return one(c.Next(auth(ctx), &firnpb.NextRequest{})) }
	case cfg.mode == "snowflake":
		call = func(ctx context.Context) ([]int64, error) {
			return many(c.Batch(auth(ctx), &firnpb.BatchRequest{Count: n}))
		}
	case n == 1:
		call = func(ctx context.Context) ([]int64, error) {
			return one(c.SegmentNext(auth(ctx), &firnpb.SegmentRequest{Tag: cfg.tag}))
		}
	default:
		call = func(ctx context.Context) ([]int64, error) {
			return many(c.SegmentBatch(auth(ctx), &firnpb.SegmentBatchRequest{Tag: cfg.tag, Count: n}))
		}
	}
	return func(ctx context.Context, dst []int64) ([]int64, error) {
		ids, err := call(ctx)
		return append(dst, ids...), err
	}, func() { _ = conn.Close() }, nil
}

func clientCaller(cfg benchConfig) (caller, func(), error) {
	cc := client.Config{Endpoints: cfg.targets, Token: cfg.token, TLS: cfg.tlsConf}
	c, err := client.New(cc)
	if err != nil {
		return nil, nil, err
	}
	nextN := c.NextN
	if cfg.mode == "segment" {
		nextN = c.Tag(cfg.tag).NextN
	}
	return func(ctx context.Context, dst []int64) ([]int64, error) {
		start := len(dst)
		dst = slices.Grow(dst, cfg.batch)[:start+cfg.batch]
		n, err := nextN(ctx, dst[start:])
		return dst[:start+n], err
	}, func() { _ = c.Close(context.Background()) }, nil
}

// benchWorker is one caller's share of the figures.
type benchWorker struct {
	hist     *hdrhistogram.Histogram
	ids      []int64
	requests int64
	errors   int64
	firstErr error
	failing  int // failures in a row, for retryDelay
}

// maxLatency is the histogram's ceiling: a longer latency is recorded as
// this, so a request is never left out of the count.
const maxLatency = time.Minute

func newBenchWorker() *benchWorker {
	return &benchWorker{hist: hdrhistogram.New(1, int64(maxLatency), 3)}
}

// do sends one request due at due and records it.
func (w *benchWorker) do(ctx context.Context, call caller, due time.Time, check bool, buf []int64, counted *atomic.Int64) []int64 {
	ids, err := call(ctx, buf[:0])
	if err != nil && ctx.Err() != nil {
		return buf // cut off by the end of the run: not a request answered
	}
	w.requests++
	failing := w.failing
	_ = w.hist.RecordValue(min(time.Since(due), maxLatency).Nanoseconds())
	w.failing = 0
	if err != nil {
		w.failing = failing + 1
		w.errors++
		if w.firstErr == nil {
			w.firstErr = err
		}
	}
	counted.Add(int64(len(ids)))
	if check {
		w.ids = append(w.ids, ids...)
	}
	return ids
}

// Backoff after failed requests: a worker waits minRetryDelay after its
// first failure in a row, twice as long after each further one, at most
// maxRetryDelay; a success resets it.
const (
	minRetryDelay = time.Millisecond
	maxRetryDelay = 100 * time.Millisecond
)

// retryDelay is how long a worker waits before its next request after
// failures failed requests in a row: 0, then 1 ms, 2 ms, 4 ms… up to
// 100 ms. A server that is down gets about ten requests a second from each
// worker, not as many as a loop can make.
func retryDelay(failures int) time.Duration {
	if failures <= 0 {
		return 0
	}
	if failures > 8 { // past the ceiling; and no shift overflows
		return maxRetryDelay
	}
	return min(minRetryDelay<<(failures-1), maxRetryDelay)
}

// sleep waits d, and reports false if ctx ended first.
func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// closedLoop sends the next request when the last is answered, or when
// the backoff after a failure has passed.
func (w *benchWorker) closedLoop(ctx context.Context, cfg benchConfig, call caller, take func() bool, ids *atomic.Int64) {
	buf := make([]int64, 0, cfg.batch)
	for take() {
		if !sleep(ctx, retryDelay(w.failing)) {
			return
		}
		buf = w.do(ctx, call, time.Now(), cfg.check, buf, ids)
	}
}

// openLoop sends the requests of a fixed-rate schedule, the first due at
// next and then one every every. One that is due while the worker still
// waits on the last answer, or on the backoff after a failure, counts from
// when it was due, so a slow server's queueing is measured (no coordinated
// omission); one the worker sleeps for counts from when it is sent, so the
// timer's own lateness (up to a millisecond) is not the server's. No
// request is sent before it is due, nor sooner after a failure than the
// backoff allows.
func (w *benchWorker) openLoop(ctx context.Context, cfg benchConfig, call caller, take func() bool, ids *atomic.Int64,
	next time.Time, every time.Duration) {
	buf := make([]int64, 0, cfg.batch)
	for take() {
		at := next
		if d, backoff := time.Until(next), retryDelay(w.failing); d > backoff {
			if !sleep(ctx, d) {
				return
			}
			at = time.Now()
		} else if !sleep(ctx, backoff) {
			return
		}
		buf = w.do(ctx, call, at, cfg.check, buf, ids)
		next = next.Add(every)
	}
}

// bench runs the load of cfg and returns its figures.
func bench(ctx context.Context, cfg benchConfig) (*benchResult, error) {
	newCall, closeCall, err := newCaller(cfg)
	if err != nil {
		return nil, err
	}
	defer closeCall()
	ctx, cancel := context.WithTimeout(ctx, cfg.duration)
	defer cancel()
	var requests, idsIn atomic.Int64
	// take reports whether another request may start, counting it.
	take := func() bool {
		if cfg.count > 0 && requests.Add(1) > cfg.count {
			return false // the requests in flight finish
		}
		return ctx.Err() == nil
	}
	stopProgress := progress(cfg, &idsIn, ctx.Done())
	workers := make([]*benchWorker, cfg.workers)
	var wg sync.WaitGroup
	start := time.Now()
	for i := range workers {
		w := newBenchWorker()
		workers[i] = w
		call := newCall()
		wg.Go(func() {
			if cfg.rate == 0 {
				w.closedLoop(ctx, cfg, call, take, &idsIn)
				return
			}
			// Worker i sends requests i, i+W, i+2W… of the schedule.
			every := time.Duration(float64(cfg.workers) / cfg.rate * float64(time.Second))
			first := start.Add(time.Duration(float64(i) / cfg.rate * float64(time.Second)))
			w.openLoop(ctx, cfg, call, take, &idsIn, first, every)
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	stopProgress()
	return summarize(cfg, workers, elapsed, idsIn.Load()), nil
}

// progress draws a bar of the run's time with the current rate, until the
// returned function is called.
func progress(cfg benchConfig, ids *atomic.Int64, done <-chan struct{}) func() {
	if cfg.progress == nil {
		return func() {}
	}
	bar := progressbar.NewOptions64(cfg.duration.Milliseconds(), progressbar.OptionSetWriter(cfg.progress),
		progressbar.OptionSetWidth(30), progressbar.OptionShowElapsedTimeOnFinish(), progressbar.OptionClearOnFinish())
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(250 * time.Millisecond)
		defer t.Stop()
		start, last, lastN := time.Now(), time.Now(), int64(0)
		for {
			select {
			case <-stop:
				_ = bar.Finish()
				return
			case <-done:
			case now := <-t.C:
				n := ids.Load()
				bar.Describe(fmt.Sprintf("%12.0f IDs/s", float64(n-lastN)/now.Sub(last).Seconds()))
				_ = bar.Set64(now.Sub(start).Milliseconds())
				last, lastN = now, n
			}
		}
	})
	return func() { close(stop); wg.Wait() }
}
