package bench

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// The failures a run can end with, as --json's "failures" names them; any
// of them makes the exit status 1.
const (
	FailDuplicates = "duplicate_ids"   // an ID was received more than once
	FailRequests   = "failed_requests" // at least one request failed
	FailNoIDs      = "no_ids"          // not one ID arrived
)

// Result is what a run measured, in the shape firn bench --json prints.
type Result struct {
	Protocol   string        `json:"protocol"`
	Mode       string        `json:"mode"`
	Tag        string        `json:"tag,omitempty"`
	Batch      int           `json:"batch"`
	Workers    int           `json:"workers"`
	Rate       float64       `json:"rate,omitempty"`
	Insecure   bool          `json:"insecure,omitempty"` // --insecure: the server's certificate was not verified
	Elapsed    time.Duration `json:"elapsed_ns"`
	Requests   int64         `json:"requests"`
	Errors     int64         `json:"errors"`
	FirstError string        `json:"first_error,omitempty"`
	// LastFailure is, when no ID arrived and no request failed, the server
	// failure a call cut off by the run's end had met (--protocol client,
	// whose SDK retries).
	LastFailure string   `json:"last_failure,omitempty"`
	IDs         int64    `json:"ids"`
	Checked     bool     `json:"unique_checked"`
	Duplicates  int64    `json:"duplicates"`
	RPS         float64  `json:"requests_per_second"`
	IDsPerSec   float64  `json:"ids_per_second"`
	Latency     Latency  `json:"latency_ns"`
	OK          bool     `json:"ok"`       // exit status 0
	Failures    []string `json:"failures"` // FailDuplicates, FailRequests, FailNoIDs; empty when OK

	hint string // advice about the first error, or ""
}

// Latency is the run's latency percentiles and maximum, in nanoseconds.
type Latency struct {
	P50  int64 `json:"p50"`
	P90  int64 `json:"p90"`
	P99  int64 `json:"p99"`
	P999 int64 `json:"p99_9"`
	Max  int64 `json:"max"`
}

// Print writes the report as text.
func (r *Result) Print(w io.Writer) {
	d := func(ns int64) time.Duration { return time.Duration(ns) }
	loop := fmt.Sprintf("closed loop, %s", plural(r.Workers, "worker"))
	if r.Rate > 0 {
		loop = fmt.Sprintf("open loop at %g requests/s", r.Rate)
	}
	fmt.Fprintf(w, "%s %s, batch %d, %s, %s\n", r.Protocol, r.Mode, r.Batch, loop, r.Elapsed.Round(time.Millisecond))
	if r.Insecure {
		fmt.Fprintln(w, "  TLS        server certificate NOT verified (--insecure)")
	}
	fmt.Fprintf(w, "  requests   %d (%.0f/s), errors %d\n", r.Requests, r.RPS, r.Errors)
	fmt.Fprintf(w, "  IDs        %d (%.0f/s)\n", r.IDs, r.IDsPerSec)
	fmt.Fprintf(w, "  latency    p50 %s  p90 %s  p99 %s  p99.9 %s  max %s\n",
		d(r.Latency.P50), d(r.Latency.P90), d(r.Latency.P99), d(r.Latency.P999), d(r.Latency.Max))
	switch {
	case !r.Checked:
		fmt.Fprintln(w, "  unique     not checked (--no-check)")
	case r.IDs == 0:
		fmt.Fprintln(w, "  unique     nothing to check: no ID arrived")
	case r.Duplicates == 0:
		fmt.Fprintf(w, "  unique     yes, all %d\n", r.IDs)
	default:
		fmt.Fprintf(w, "  unique     NO: %s\n", plural(r.Duplicates, "duplicate"))
	}
	if r.FirstError != "" {
		fmt.Fprintf(w, "  first error: %s\n", r.FirstError)
	}
	if r.LastFailure != "" {
		fmt.Fprintf(w, "  last failure: %s\n", r.LastFailure)
	}
	if r.OK {
		fmt.Fprintln(w, "  verdict    ok")
	} else {
		fmt.Fprintf(w, "  verdict    FAIL: %s\n", strings.Join(r.Failures, ", "))
	}
}

// WriteJSON writes the report as indented JSON.
func (r *Result) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// judge fills OK and Failures from the figures: a run passes only when at
// least one ID arrived, no request failed and no ID came twice. A few
// failed requests fail the run too: a load test that hides errors lies.
func (r *Result) judge() {
	r.Failures = []string{}
	if r.Duplicates > 0 {
		r.Failures = append(r.Failures, FailDuplicates)
	}
	if r.Errors > 0 {
		r.Failures = append(r.Failures, FailRequests)
	}
	if r.IDs == 0 {
		r.Failures = append(r.Failures, FailNoIDs)
	}
	r.OK = len(r.Failures) == 0
}

// Err is the run's failure, naming each reason, or nil when it passed.
func (r *Result) Err() error {
	var msgs []string
	if slices.Contains(r.Failures, FailDuplicates) {
		verb := "were"
		if r.Duplicates == 1 {
			verb = "was"
		}
		msgs = append(msgs, fmt.Sprintf("%s %s received more than once", plural(r.Duplicates, "ID"), verb))
	}
	if slices.Contains(r.Failures, FailRequests) {
		msg := fmt.Sprintf("%d of %s failed, the first with: %s", r.Errors, plural(r.Requests, "request"), r.FirstError)
		if r.hint != "" {
			msg += " (" + r.hint + ")"
		}
		msgs = append(msgs, msg)
	}
	if slices.Contains(r.Failures, FailNoIDs) {
		msg := "no ID arrived"
		if r.LastFailure != "" {
			msg += ", the last failure: " + r.LastFailure
			if r.hint != "" {
				msg += " (" + r.hint + ")"
			}
		}
		msgs = append(msgs, msg)
	}
	if len(msgs) == 0 {
		return nil
	}
	return errors.New("bench: " + strings.Join(msgs, "; "))
}

func summarize(cfg *settings, workers []*worker, elapsed time.Duration, ids int64) *Result {
	r := &Result{Protocol: cfg.protocol, Mode: cfg.mode, Tag: cfg.tag, Batch: cfg.batch, Workers: cfg.workers,
		Rate: cfg.rate, Insecure: cfg.insecure, Elapsed: elapsed, Checked: cfg.check, IDs: ids}
	hist := hdrhistogram.New(1, int64(time.Minute), 3)
	var all []int64
	for _, w := range workers {
		hist.Merge(w.hist)
		r.Requests += w.requests
		r.Errors += w.errors
		if w.firstErr != nil && r.FirstError == "" {
			r.FirstError, r.hint = w.firstErr.Error(), tlsHint(w.firstErr)
		}
		all = append(all, w.ids...)
	}
	if r.IDs == 0 && r.Errors == 0 {
		for _, w := range workers {
			if w.cut != nil {
				r.LastFailure, r.hint = w.cut.Error(), tlsHint(w.cut)
				break
			}
		}
	}
	if cfg.check {
		slices.Sort(all)
		for i := 1; i < len(all); i++ {
			if all[i] == all[i-1] {
				r.Duplicates++
			}
		}
	}
	r.RPS = float64(r.Requests) / elapsed.Seconds()
	r.IDsPerSec = float64(r.IDs) / elapsed.Seconds()
	r.Latency = Latency{P50: hist.ValueAtQuantile(50), P90: hist.ValueAtQuantile(90), P99: hist.ValueAtQuantile(99),
		P999: hist.ValueAtQuantile(99.9), Max: hist.Max()}
	r.judge()
	return r
}

// plural gives a count with its noun: "1 worker", "2 workers".
func plural[N ~int | ~int64](n N, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
