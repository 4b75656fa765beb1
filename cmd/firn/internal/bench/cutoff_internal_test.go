package bench

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/firn-id/firn/client"
)

// TestCutOffCallsReportOnlyWhenNoIDArrived: a call cut off by the run's
// end, naming a server's failure, is reported (last_failure) only by a run
// where no ID arrived and no request failed; a passing run reports no
// error of it.
func TestCutOffCallsReportOnlyWhenNoIDArrived(t *testing.T) {
	w := newWorker()
	var counted atomic.Int64
	ok := func(ctx context.Context, dst []int64) ([]int64, error) { return append(dst, 1, 2, 3), nil }
	w.do(context.Background(), ok, time.Now(), true, make([]int64, 0, 3), &counted)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	cut := func(ctx context.Context, dst []int64) ([]int64, error) {
		return dst, fmt.Errorf("%w, the last failure: %w", ctx.Err(),
			&client.Error{Kind: client.ErrUnavailable, Endpoint: "b:1", Code: "transport", Message: "connection refused"})
	}
	w.do(ctx, cut, time.Now(), true, make([]int64, 0, 3), &counted)
	r := summarize(&settings{protocol: "client", mode: "snowflake", batch: 3, workers: 1, check: true}, []*worker{w}, time.Second, counted.Load())
	var out strings.Builder
	r.Print(&out)
	if !r.OK || r.FirstError != "" || r.LastFailure != "" || strings.Contains(out.String(), "first error") || strings.Contains(out.String(), "last failure") {
		t.Fatalf("a passing run (ok %v, %d errors) reports first_error %q, last_failure %q:\n%s", r.OK, r.Errors, r.FirstError, r.LastFailure, out.String())
	}
	w = newWorker()
	counted.Store(0)
	w.do(ctx, cut, time.Now(), true, make([]int64, 0, 3), &counted)
	r = summarize(&settings{protocol: "client", mode: "snowflake", batch: 3, workers: 1, check: true}, []*worker{w}, time.Second, counted.Load())
	if err := r.Err(); r.OK || r.Requests != 0 || r.FirstError != "" || !strings.Contains(r.LastFailure, "b:1") ||
		err == nil || !strings.Contains(err.Error(), "no ID arrived, the last failure: ") {
		t.Fatalf("a run whose only call was cut off: %+v, %v; want no request counted, the failure as last_failure and in the error", r, err)
	}
}
