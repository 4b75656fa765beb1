package bench

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/firn-id/firn/client"
)

// worker is one caller's share of the figures.
type worker struct {
	hist     *hdrhistogram.Histogram
	ids      []int64
	requests int64
	errors   int64
	firstErr error
	cut      error // the first call cut off by the run's end that named a server's failure
	failing  int   // failures in a row, for retryDelay
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
		// Cut off by the end of the run: not a request answered. The
		// client SDK's error still says why no ID came, if a server failed.
		var fail *client.Error
		if w.cut == nil && errors.As(err, &fail) {
			w.cut = fail
		}
		return buf
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
