package bench_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/firn-id/firn/cmd/firn/internal/bench"
)

// TestReportOfOneWorkerAndOneDuplicate: the report and the verdict agree
// in number with what they count.
func TestReportOfOneWorkerAndOneDuplicate(t *testing.T) {
	r := bench.Result{Protocol: "http", Mode: "snowflake", Batch: 1, Workers: 1, Requests: 1, Errors: 1, FirstError: "503",
		IDs: 5, Checked: true, Duplicates: 1, Failures: []string{bench.FailDuplicates, bench.FailRequests}}
	var b bytes.Buffer
	r.Print(&b)
	for _, want := range []string{"closed loop, 1 worker,", "NO: 1 duplicate\n"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, b.String())
		}
	}
	err := r.Err().Error()
	for _, want := range []string{"1 ID was received more than once", "1 of 1 request failed"} {
		if !strings.Contains(err, want) {
			t.Errorf("verdict %q lacks %q", err, want)
		}
	}
}
