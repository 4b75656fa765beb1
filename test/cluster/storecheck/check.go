// Package storecheck checks the node-store operations that firn processes
// recorded (package internal/storelog) for linearizability: whether a
// correct nodeid.Store could have answered them, in an order that
// respects real time. The model (model.go) is written from the Store
// contract and DESIGN.md §3; porcupine searches for the order, per node.
// Two rules span nodes and are checked beside it: a claim's token is
// never seen twice, and the namespace holds one layout.
package storecheck

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/firn-id/firn/internal/storelog"
)

// DefaultTimeout bounds the search in the harness and in firn-check: a
// history undecided after it fails a run as an illegal one does.
const DefaultTimeout = 5 * time.Minute

// Result is the verdict on one history.
type Result struct {
	Ops     int // operations checked
	Unknown int // of which with no answer
	Nodes   int // nodes they touched
	// Verdict is porcupine's: Ok, Illegal, or Unknown when the search
	// ran out of time, which fails a run as Illegal does.
	Verdict porcupine.CheckResult
	// Violations break the rules that span nodes.
	Violations []string
	info       porcupine.LinearizationInfo
	model      porcupine.Model
}

// OK reports whether the history is linearizable and broke no rule.
func (r *Result) OK() bool { return r.Verdict == porcupine.Ok && len(r.Violations) == 0 }

// String is the verdict in one line.
func (r *Result) String() string {
	v := map[porcupine.CheckResult]string{porcupine.Ok: "linearizable", porcupine.Illegal: "NOT LINEARIZABLE",
		porcupine.Unknown: "UNDECIDED (the search timed out)"}[r.Verdict]
	s := fmt.Sprintf("%d store operations on %d nodes (%d with no answer): %s", r.Ops, r.Nodes, r.Unknown, v)
	for _, x := range r.Violations {
		s += "; " + x
	}
	return s
}

// Visualize writes porcupine's picture of the history and the longest
// orders it found to path (HTML).
func (r *Result) Visualize(path string) error { return porcupine.VisualizePath(r.model, r.info, path) }

// Check checks ops, the operations of every process on one namespace,
// giving the search at most timeout (0: no bound).
func Check(ops []storelog.Op, timeout time.Duration) *Result {
	r := &Result{model: model.ToModel(), Violations: spanning(ops)}
	r.model.Partition = byNode
	hist := operations(ops)
	r.Ops = len(hist)
	nodes := map[uint64]bool{}
	for _, o := range hist {
		op := o.Input.(storelog.Op)
		nodes[op.Node] = true
		if op.Ret.Outcome == storelog.Unknown {
			r.Unknown++
		}
	}
	r.Nodes = len(nodes)
	r.Verdict, r.info = porcupine.CheckOperationsVerbose(r.model, hist, timeout)
	return r
}

// operations turns ops into porcupine's operations. A claim of any node
// belongs to the node it answered; one refused or unanswered names no
// node and took none the model could see (it would be a holder whose
// token nobody knows), so it is left out. An operation with no answer may
// take effect at any later moment: its return is at the end of time.
func operations(ops []storelog.Op) []porcupine.Operation {
	clients := map[string]int{}
	var hist []porcupine.Operation
	for _, op := range ops {
		if op.Kind == storelog.KindClaim && op.AnyNode {
			if op.Ret.Outcome != storelog.OK {
				continue
			}
			op.Node = op.Ret.Node
		}
		if _, ok := clients[op.Proc]; !ok {
			clients[op.Proc] = len(clients)
		}
		ret := op.Ret.At
		if op.Ret.Outcome == storelog.Unknown {
			ret = math.MaxInt64
		}
		hist = append(hist, porcupine.Operation{ClientId: clients[op.Proc], Input: op, Call: op.At, Output: op.Ret, Return: ret})
	}
	return hist
}

// byNode partitions a history by node: nodes share nothing but the
// layout, which Check's spanning rules cover.
func byNode(hist []porcupine.Operation) [][]porcupine.Operation {
	parts := map[uint64][]porcupine.Operation{}
	for _, o := range hist {
		n := o.Input.(storelog.Op).Node
		parts[n] = append(parts[n], o)
	}
	var out [][]porcupine.Operation
	for _, n := range slices.Sorted(maps.Keys(parts)) {
		out = append(out, parts[n])
	}
	return out
}

// spanning checks the rules that span nodes: every successful claim's
// token is new, and every successful claim and advance names one layout.
func spanning(ops []storelog.Op) []string {
	var v []string
	seen := map[string]string{}
	layout := ""
	for _, op := range ops {
		if op.Ret.Outcome != storelog.OK || (op.Kind != storelog.KindClaim && op.Kind != storelog.KindAdvance) {
			continue
		}
		if op.Kind == storelog.KindClaim {
			if first, dup := seen[op.Ret.Token]; dup {
				v = append(v, fmt.Sprintf("token %s granted twice: %s, then %s", short(op.Ret.Token), first, describe(op)))
			}
			seen[op.Ret.Token] = describe(op)
		}
		switch {
		case op.Fingerprint == "":
		case layout == "":
			layout = op.Fingerprint
		case op.Fingerprint != layout:
			v = append(v, fmt.Sprintf("layout %q accepted in a namespace of layout %q: %s", op.Fingerprint, layout, describe(op)))
		}
	}
	return v
}
