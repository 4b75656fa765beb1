package history

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"sync"
)

// The kinds of record.
const (
	// KindRequest is one request: who made it, to which process life, when
	// it was invoked and completed, and the IDs or the error kind it got.
	KindRequest = "req"
	// KindAcquire is a process life taking a node (from its log).
	KindAcquire = "acquire"
	// KindPhase starts a phase of the run (a fault, or its recovery) at At.
	KindPhase = "phase"
	// KindSegmentEnd is a segment tag's counter in its store, read after
	// the run (End): no range reserved holds an ID at or past it.
	KindSegmentEnd = "segment-end"
)

// Record is one line of a history.
type Record struct {
	Kind   string `json:"kind"`
	Caller string `json:"caller,omitempty"`
	// Proc names a process life: the process and how many times it was
	// started ("f1#2"). A restarted process is a new life.
	Proc string `json:"proc,omitempty"`
	// Invoke and Complete are Unix nanoseconds on the harness's clock.
	Invoke   int64   `json:"invoke,omitempty"`
	Complete int64   `json:"complete,omitempty"`
	IDs      []int64 `json:"ids,omitempty"`
	// Buffered marks IDs taken from the Go client's buffer: they were
	// fetched from some process before the call (Proc is empty), up to
	// the client's MaxAge earlier.
	Buffered bool `json:"buffered,omitempty"`
	// Tag names the segment tag of a request for segment IDs; empty for
	// snowflake IDs.
	Tag string `json:"tag,omitempty"`
	// Site names the site whose process answered a request for
	// snowflake IDs, in a run of several sites (Options.Sites).
	Site string `json:"site,omitempty"`
	// End is a segment tag's counter (KindSegmentEnd): the IDs equal to
	// Remainder modulo Delta (all of them when Delta is 0) are below it.
	End       int64 `json:"end,omitempty"`
	Delta     int64 `json:"delta,omitempty"`
	Remainder int64 `json:"remainder,omitempty"`
	// Err is the kind of a failed request: the server's error code
	// ("not_serving") or "transport" when no answer came.
	Err string `json:"err,omitempty"`
	// Node and At describe an acquisition; At alone starts a phase.
	Node  uint64 `json:"node,omitempty"`
	At    int64  `json:"at,omitempty"`
	Phase string `json:"phase,omitempty"`
}

// Writer appends records to a history; it is safe for concurrent use.
// A record is encoded into memory; the file is written by a drain that
// runs apart from the callers once 1 MiB is pending, so a caller never
// waits for the disk. A history of tens of millions of IDs is gigabytes,
// and a write held back by the kernel's dirty-page throttling would
// otherwise stall every caller at once and show as a pause of every
// process.
type Writer struct {
	w io.Writer

	mu       sync.Mutex
	pending  []byte
	err      error
	draining bool

	drain sync.Mutex // held while pending bytes are written, in order
}

// drainAt is how many pending bytes start a drain.
const drainAt = 1 << 20

// NewWriter returns a writer on w; Flush before closing w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Write appends r. The first error is kept and returned by every later
// call and by Flush.
func (w *Writer) Write(r Record) error {
	line, err := json.Marshal(r)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err == nil {
		w.err = err
	}
	if w.err != nil {
		return w.err
	}
	w.pending = append(append(w.pending, line...), '\n')
	if len(w.pending) >= drainAt && !w.draining {
		w.draining = true
		go func() { _ = w.flush() }() // its error is kept, for the next Write and Flush
	}
	return nil
}

// Flush writes what is pending, after any drain under way.
func (w *Writer) Flush() error { return w.flush() }

func (w *Writer) flush() error {
	w.drain.Lock()
	defer w.drain.Unlock()
	w.mu.Lock()
	buf := w.pending
	w.pending, w.draining = nil, false
	err := w.err
	w.mu.Unlock()
	if err != nil || len(buf) == 0 {
		return err
	}
	if _, err := w.w.Write(buf); err != nil {
		w.mu.Lock()
		if w.err == nil {
			w.err = err
		}
		w.mu.Unlock()
		return err
	}
	return nil
}

// Scan calls fn for every record of r in order.
func Scan(r io.Reader, fn func(Record) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<30)
	for line := 1; sc.Scan(); line++ {
		var rec Record
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			return fmt.Errorf("line %d: %w: %w", line, ErrBadRecord, err)
		}
		switch rec.Kind {
		case KindRequest, KindAcquire, KindPhase, KindSegmentEnd:
		default:
			return fmt.Errorf("line %d: %w: kind %q", line, ErrBadRecord, rec.Kind)
		}
		if err := fn(rec); err != nil {
			return err
		}
	}
	return sc.Err()
}
