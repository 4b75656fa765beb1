// Package bench is the engine of firn bench: it loads a firn server (or
// anything speaking Leaf's or Tinyid's HTTP routes) over gRPC, HTTP or the
// client, and measures throughput, latency, failed requests and whether
// every ID received was unique. Run takes a Config and returns a Result,
// which prints itself as text or JSON and says, through Err, whether the
// run passed.
package bench

import (
	"context"
	"fmt"
	"slices"
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

// caller sends one request and returns the IDs it got, appended to dst.
type caller func(ctx context.Context, dst []int64) ([]int64, error)

// newCaller returns the request of cfg and a function closing what it
// opened.
func newCaller(cfg *settings) (func() caller, func(), error) {
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
func streamCaller(cfg *settings) (func() caller, func(), error) {
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
func dialFirn(cfg *settings) (*grpc.ClientConn, firnpb.FirnClient, func(context.Context) context.Context, error) {
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

func grpcCaller(cfg *settings) (caller, func(), error) {
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

func clientCaller(cfg *settings) (caller, func(), error) {
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

// worker is one caller's share of the figures.
type worker struct {
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

func newWorker() *worker {
	return &worker{hist: hdrhistogram.New(1, int64(maxLatency), 3)}
}

// do sends one request due at due and records it.
func (w *worker) do(ctx context.Context, call caller, due time.Time, check bool, buf []int64, counted *atomic.Int64) []int64 {
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
func (w *worker) closedLoop(ctx context.Context, cfg *settings, call caller, take func() bool, ids *atomic.Int64) {
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
func (w *worker) openLoop(ctx context.Context, cfg *settings, call caller, take func() bool, ids *atomic.Int64,
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

// Run loads the server of cfg for its duration or count and returns the
// figures. A refused cfg matches ErrConfig; a run whose requests failed is
// not an error here but a Result whose Err says so.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	s, err := cfg.settings()
	if err != nil {
		return nil, err
	}
	return run(ctx, s)
}

func run(ctx context.Context, cfg *settings) (*Result, error) {
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
	workers := make([]*worker, cfg.workers)
	var wg sync.WaitGroup
	start := time.Now()
	for i := range workers {
		w := newWorker()
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
func progress(cfg *settings, ids *atomic.Int64, done <-chan struct{}) func() {
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
