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
	"sync"
	"sync/atomic"
	"time"

	"github.com/schollz/progressbar/v3"
)

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
