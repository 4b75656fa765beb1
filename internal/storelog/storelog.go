// Package storelog records every operation on a nodeid.Store — Claim,
// Renew, Release, Advance — to an append-only log, for the fault
// harness's linearizability check (test/cluster/storecheck). Each
// operation is two lines: one written before the call, one after its
// return, each with one write to a file opened for appending, so a
// process killed with SIGKILL loses at most the return of the operation
// in flight, which the reader then reports as unknown. Times are the
// host's wall clock (time.Now), never a generator's clock, so the logs of
// every process on one host order against each other. Only the test
// build of firn records (cmd/firn/storelog_on.go).
package storelog

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/firn-id/firn/nodeid"
)

// The operations.
const (
	KindClaim   = "claim"
	KindRenew   = "renew"
	KindRelease = "release"
	KindAdvance = "advance"
)

// The outcomes of an operation.
const (
	// OK: the store answered and did what it says.
	OK = "ok"
	// Refused: the store answered that it did nothing (Op.Class says why).
	Refused = "refused"
	// Unknown: no answer (a deadline, a connection lost, the process
	// killed): the operation may or may not have taken effect.
	Unknown = "unknown"
)

// Call is the line written before an operation: its inputs.
type Call struct {
	Seq  uint64 `json:"seq"`
	Kind string `json:"kind"`
	At   int64  `json:"call"` // Unix ns, wall clock
	Node uint64 `json:"node"`
	// AnyNode: a Claim of the lowest free node; Node is then the answer's.
	AnyNode bool `json:"any,omitempty"`
	// Token is the claim a Renew or Release acts for.
	Token string `json:"token,omitempty"`
	// HWM is a Renew's or Advance's target.
	HWM int64 `json:"hwm,omitempty"`
	// Fingerprint is a Claim's or Advance's layout fingerprint.
	Fingerprint string `json:"layout,omitempty"`
}

// Return is the line written after an operation: its outcome.
type Return struct {
	Seq     uint64 `json:"seq"`
	At      int64  `json:"return"` // Unix ns, wall clock
	Outcome string `json:"outcome"`
	Class   string `json:"class,omitempty"` // a refusal's class (see Classify)
	Err     string `json:"err,omitempty"`
	// Node, Token and HWM are a Claim's answer; HWM is also the stored
	// HWM a Renew or Advance returned.
	Node  uint64 `json:"node,omitempty"`
	Token string `json:"token,omitempty"`
	HWM   int64  `json:"hwm,omitempty"`
}

// Recorder is a nodeid.Store that records every operation on the store
// it wraps.
type Recorder struct {
	store nodeid.Store
	mu    sync.Mutex // one line, one write
	w     io.Writer
	seq   atomic.Uint64
	// failed is called with each error writing the log: a log missing
	// an operation could pass a history that broke the rules.
	failed func(error)
}

// New returns a Recorder of s writing to w, which should be a file opened
// with O_APPEND and no buffer: each line is one Write. failed is called
// with each error writing the log.
func New(s nodeid.Store, w io.Writer, failed func(error)) *Recorder {
	return &Recorder{store: s, w: w, failed: failed}
}

// Wrap returns New's Recorder of s, which is also a nodeid.Recorder when
// s is one: a site's registry keeps the namespace's site record, and a
// process of a site claims nothing, and re-reads nothing from its
// ledger, through a store that does not show it. The record's
// operations pass through unrecorded: the linearizability check models
// the node operations, and no process the harness runs changes the
// record (firn site claim writes it, before any starts).
func Wrap(s nodeid.Store, w io.Writer, failed func(error)) nodeid.Store {
	r := New(s, w, failed)
	if rs, ok := s.(nodeid.Recorder); ok {
		return &recorded{Recorder: r, rec: rs}
	}
	return r
}

// recorded is a Recorder of a store that keeps a namespace record.
type recorded struct {
	*Recorder
	rec nodeid.Recorder
}

// Record implements nodeid.Recorder, unrecorded.
func (r *recorded) Record(ctx context.Context) (nodeid.LayoutID, error) { return r.rec.Record(ctx) }

// Rerecord implements nodeid.Recorder, unrecorded.
func (r *recorded) Rerecord(ctx context.Context, old, new nodeid.LayoutID) error {
	return r.rec.Rerecord(ctx, old, new)
}

// HWMs implements nodeid.Recorder, unrecorded.
func (r *recorded) HWMs(ctx context.Context) (map[uint64]int64, error) { return r.rec.HWMs(ctx) }

// Identity implements nodeid.Recorder, unrecorded.
func (r *recorded) Identity(ctx context.Context) (string, error) { return r.rec.Identity(ctx) }

// Claim implements nodeid.Store.
func (r *Recorder) Claim(ctx context.Context, req nodeid.ClaimRequest) (nodeid.Claim, error) {
	seq := r.call(Call{Kind: KindClaim, Node: req.Node, AnyNode: req.AnyNode, Fingerprint: req.Layout.Fingerprint})
	c, err := r.store.Claim(ctx, req)
	r.ret(seq, err, Return{Node: c.Node, Token: c.Token, HWM: c.HWM})
	return c, err
}

// Renew implements nodeid.Store.
func (r *Recorder) Renew(ctx context.Context, c nodeid.Claim, hwm int64) (int64, error) {
	seq := r.call(Call{Kind: KindRenew, Node: c.Node, Token: c.Token, HWM: hwm})
	stored, err := r.store.Renew(ctx, c, hwm)
	r.ret(seq, err, Return{HWM: stored})
	return stored, err
}

// Release implements nodeid.Store.
func (r *Recorder) Release(ctx context.Context, c nodeid.Claim) error {
	seq := r.call(Call{Kind: KindRelease, Node: c.Node, Token: c.Token})
	err := r.store.Release(ctx, c)
	r.ret(seq, err, Return{})
	return err
}

// Advance implements nodeid.Store.
func (r *Recorder) Advance(ctx context.Context, req nodeid.AdvanceRequest) (int64, error) {
	seq := r.call(Call{Kind: KindAdvance, Node: req.Node, HWM: req.HWM, Fingerprint: req.Layout.Fingerprint})
	stored, err := r.store.Advance(ctx, req)
	r.ret(seq, err, Return{HWM: stored})
	return stored, err
}

func (r *Recorder) call(c Call) uint64 {
	c.Seq = r.seq.Add(1)
	c.At = time.Now().UnixNano()
	r.write(c)
	return c.Seq
}

// ret writes the return line: the answer as given for an operation that
// succeeded, the error's class otherwise.
func (r *Recorder) ret(seq uint64, err error, answer Return) {
	at := time.Now().UnixNano()
	out := Return{Seq: seq, At: at}
	if err == nil {
		answer.Seq, answer.At, answer.Outcome = seq, at, OK
		out = answer
	} else {
		out.Outcome, out.Class = Classify(err)
		out.Err = err.Error()
	}
	r.write(out)
}

func (r *Recorder) write(v any) {
	line, err := json.Marshal(v)
	if err == nil {
		r.mu.Lock()
		_, err = r.w.Write(append(line, '\n'))
		r.mu.Unlock()
	}
	if err != nil {
		r.failed(err)
	}
}

// refusals are the errors by which a store says it did nothing, with
// their classes.
var refusals = []struct {
	err   error
	class string
}{
	{nodeid.ErrLeaseLost, "lease_lost"},
	{nodeid.ErrNodeHeld, "node_held"},
	{nodeid.ErrPoolFull, "pool_full"},
	{nodeid.ErrLayoutMismatch, "layout_mismatch"},
	{nodeid.ErrUnknownNamespace, "unknown_namespace"},
	{nodeid.ErrNodeOutOfRange, "node_out_of_range"},
	{nodeid.ErrClosed, "closed"},
}

// Classify returns an error's outcome: Refused with its class for the
// nodeid errors by which a store says it did nothing, Unknown for every
// other (a deadline, a connection lost, a driver's error), since such an
// operation may have taken effect.
func Classify(err error) (outcome, class string) {
	for _, r := range refusals {
		if errors.Is(err, r.err) {
			return Refused, r.class
		}
	}
	return Unknown, ""
}
