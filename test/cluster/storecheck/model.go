package storecheck

import (
	"fmt"
	"hash/fnv"

	"github.com/anishathalye/porcupine"

	"github.com/firn-id/firn/internal/storelog"
)

// state is one node as a correct store holds it.
type state struct {
	// holder is the token of the claim that holds the node, "" for none.
	// Its lease may expire at any moment (expiry is by time and
	// unrecorded), so the model never needs a holder gone for a claim to
	// succeed; it only forbids a token that is not the holder's to renew.
	holder string
	// hwm is the stored HWM when known; until an answer reveals it (a
	// node that held one before the recording began), a lower bound.
	hwm   int64
	known bool
	// layout is the fingerprint the node was claimed with, "" before.
	layout string
}

// model is the written specification of one node of a nodeid.Store
// (nodeid/store.go, DESIGN.md §3), as a nondeterministic model: an
// operation whose answer was lost may or may not have taken effect.
//
//   - Claim succeeds with no holder, or a holder whose lease may have
//     expired: always. It answers the stored HWM, sets a token never seen
//     before (Check's namespace-wide rule) and records the layout, which
//     must match the one recorded.
//   - Renew succeeds only for the holder's token (it may fail for it too,
//     once its lease expired) and raises the HWM to at least its target,
//     answering the stored HWM: never lower.
//   - Release by the holder frees the node; by another token it does
//     nothing.
//   - Advance raises the HWM as Renew does, for a node no live lease holds:
//     a success means the holder's lease had expired, so the holder can no
//     longer renew. A fingerprint given must match the recorded layout.
//   - A refused operation changes nothing. One with no answer changes
//     nothing or takes effect; for Claim and Release doing nothing is
//     always the more permissive of the two, so only Renew and Advance
//     branch.
var model = porcupine.NondeterministicModel{
	Init:              func() []any { return []any{state{}} },
	Step:              func(s, in, _ any) []any { return step(s.(state), in.(storelog.Op)) },
	Hash:              hash,
	DescribeOperation: func(in, _ any) string { return describe(in.(storelog.Op)) },
	DescribeState:     func(s any) string { return s.(state).String() },
}

func step(s state, op storelog.Op) []any {
	switch op.Ret.Outcome {
	case storelog.Refused:
		return []any{s}
	case storelog.Unknown:
		return unknown(s, op)
	}
	switch op.Kind {
	case storelog.KindClaim:
		return claim(s, op)
	case storelog.KindRenew:
		if op.Token == "" || op.Token != s.holder || !s.answers(op.HWM, op.Ret.HWM) {
			return nil
		}
		return []any{s.raised(op.Ret.HWM)}
	case storelog.KindRelease:
		if op.Token == s.holder {
			s.holder = ""
		}
		return []any{s}
	case storelog.KindAdvance:
		if !s.fits(op.Fingerprint) || !s.answers(op.HWM, op.Ret.HWM) {
			return nil
		}
		n := s.raised(op.Ret.HWM)
		n.holder = ""
		return []any{n}
	}
	return nil
}

func claim(s state, op storelog.Op) []any {
	hwm := op.Ret.HWM
	if op.Ret.Token == "" || op.Ret.Token == s.holder || !s.fits(op.Fingerprint) ||
		(s.known && hwm != s.hwm) || (!s.known && hwm < s.hwm) {
		return nil
	}
	s.holder, s.hwm, s.known = op.Ret.Token, hwm, true
	if s.layout == "" {
		s.layout = op.Fingerprint
	}
	return []any{s}
}

// unknown returns the states after an operation with no answer: as
// before, or as if it succeeded.
func unknown(s state, op storelog.Op) []any {
	switch {
	case op.Kind == storelog.KindRenew && op.Token != "" && op.Token == s.holder:
		return []any{s, s.raisedTo(op.HWM)}
	case op.Kind == storelog.KindAdvance && s.fits(op.Fingerprint):
		n := s.raisedTo(op.HWM)
		n.holder = ""
		return []any{s, n}
	}
	return []any{s}
}

// answers reports whether got is what a correct store answers after
// raising the HWM to at least target.
func (s state) answers(target, got int64) bool {
	want := max(s.hwm, target)
	if s.known {
		return got == want
	}
	return got >= want
}

// raised is s with the HWM an answer revealed.
func (s state) raised(hwm int64) state {
	s.hwm, s.known = hwm, true
	return s
}

// raisedTo is s after a raise to target whose answer is unknown.
func (s state) raisedTo(target int64) state {
	s.hwm = max(s.hwm, target)
	return s
}

// fits reports whether fingerprint may be used on the node: none given,
// none recorded yet, or the recorded one.
func (s state) fits(fingerprint string) bool {
	return fingerprint == "" || s.layout == "" || fingerprint == s.layout
}

func hash(v any) uint64 {
	s := v.(state)
	h := fnv.New64a()
	fmt.Fprintf(h, "%s|%d|%t|%s", s.holder, s.hwm, s.known, s.layout)
	return h.Sum64()
}

func (s state) String() string {
	holder := s.holder
	if holder == "" {
		holder = "none"
	}
	bound := "="
	if !s.known {
		bound = "≥"
	}
	return fmt.Sprintf("holder %s, HWM %s%d, layout %q", short(holder), bound, s.hwm, s.layout)
}

func describe(op storelog.Op) string {
	var in string
	switch op.Kind {
	case storelog.KindClaim:
		in = fmt.Sprintf("claim(%d)", op.Node)
		if op.AnyNode {
			in = "claim(any)"
		}
	case storelog.KindRenew:
		in = fmt.Sprintf("renew(%s, %d)", short(op.Token), op.HWM)
	case storelog.KindRelease:
		in = fmt.Sprintf("release(%s)", short(op.Token))
	case storelog.KindAdvance:
		in = fmt.Sprintf("advance(%d)", op.HWM)
	}
	out := op.Ret.Outcome
	switch {
	case op.Ret.Outcome == storelog.Refused:
		out += " " + op.Ret.Class
	case op.Ret.Outcome != storelog.OK:
	case op.Kind == storelog.KindClaim:
		out = fmt.Sprintf("node %d token %s HWM %d", op.Node, short(op.Ret.Token), op.Ret.HWM)
	case op.Kind != storelog.KindRelease:
		out = fmt.Sprintf("HWM %d", op.Ret.HWM)
	}
	return fmt.Sprintf("%s %s → %s", op.Proc, in, out)
}

// short cuts a token to what tells it apart in a picture.
func short(token string) string {
	if len(token) > 8 {
		return token[:8]
	}
	return token
}
