package storecheck_test

import (
	"testing"

	"github.com/anishathalye/porcupine"

	"github.com/firn-id/firn/internal/storelog"
	"github.com/firn-id/firn/test/cluster/storecheck"
)

// h builds a history of operations, one after another unless a test
// overlaps them: each op's call and return are its own times.
type h []storelog.Op

func op(proc, kind string, call, ret int64, token string, hwm int64, outcome string, answer int64) storelog.Op {
	o := storelog.Op{Proc: proc, Call: storelog.Call{Kind: kind, At: call, Node: 1, Token: token, HWM: hwm, Fingerprint: "fp"}}
	o.Ret = storelog.Return{At: ret, Outcome: outcome, HWM: answer}
	if kind == storelog.KindClaim {
		o.Token, o.Ret.Token = "", token
	}
	if kind != storelog.KindClaim && kind != storelog.KindAdvance {
		o.Fingerprint = ""
	}
	if outcome == storelog.Unknown && ret == 0 {
		o.Ret = storelog.Return{Outcome: storelog.Unknown}
	}
	return o
}

const (
	ok      = storelog.OK
	refused = storelog.Refused
	unknown = storelog.Unknown
	claim   = storelog.KindClaim
	renew   = storelog.KindRenew
	release = storelog.KindRelease
	advance = storelog.KindAdvance
)

// TestModel runs the model on small histories, legal and not, written
// by hand: each illegal one is a store answer that would let two owners
// issue the same tick.
func TestModel(t *testing.T) {
	tests := []struct {
		name  string
		ops   h
		legal bool
	}{
		{"a claim, renewals, a release, a new claim at the HWM", h{
			op("a", claim, 1, 2, "A", 0, ok, 0), op("a", renew, 3, 4, "A", 100, ok, 100),
			op("a", renew, 5, 6, "A", 90, ok, 100), op("a", release, 7, 8, "A", 0, ok, 0),
			op("b", claim, 9, 10, "B", 0, ok, 100)}, true},
		{"a takeover after the holder's lease expired, its renewal refused", h{
			op("a", claim, 1, 2, "A", 0, ok, 0), op("a", renew, 3, 4, "A", 100, ok, 100),
			op("b", claim, 5, 6, "B", 0, ok, 100), op("a", renew, 7, 8, "A", 200, refused, 0)}, true},
		{"a renewal with no answer explains the next owner's higher HWM", h{
			op("a", claim, 1, 2, "A", 0, ok, 0), op("a", renew, 3, 0, "A", 300, unknown, 0),
			op("b", claim, 9, 10, "B", 0, ok, 300)}, true},
		{"a renewal with no answer may also not have landed", h{
			op("a", claim, 1, 2, "A", 0, ok, 0), op("a", renew, 3, 0, "A", 300, unknown, 0),
			op("b", claim, 9, 10, "B", 0, ok, 0)}, true},
		{"a claim concurrent with the holder's renewal, ordered after it", h{
			op("a", claim, 1, 2, "A", 0, ok, 0), op("a", renew, 3, 8, "A", 100, ok, 100),
			op("b", claim, 4, 9, "B", 0, ok, 100)}, true},
		{"a claim concurrent with the holder's renewal that fits no order", h{
			op("a", claim, 1, 2, "A", 0, ok, 0), op("a", renew, 3, 8, "A", 100, ok, 100),
			op("b", claim, 4, 9, "B", 0, ok, 0)}, false},
		{"the old holder renews after a takeover", h{
			op("a", claim, 1, 2, "A", 0, ok, 0), op("b", claim, 3, 4, "B", 0, ok, 0),
			op("a", renew, 5, 6, "A", 100, ok, 100)}, false},
		{"a new owner starts below a confirmed HWM", h{
			op("a", claim, 1, 2, "A", 0, ok, 0), op("a", renew, 3, 4, "A", 100, ok, 100),
			op("b", claim, 5, 6, "B", 0, ok, 50)}, false},
		{"a renewal answers a lower HWM", h{
			op("a", claim, 1, 2, "A", 0, ok, 0), op("a", renew, 3, 4, "A", 100, ok, 100),
			op("a", renew, 5, 6, "A", 50, ok, 50)}, false},
		{"an advance lowers the HWM", h{
			op("x", advance, 1, 2, "", 100, ok, 100), op("x", advance, 3, 4, "", 50, ok, 50)}, false},
		{"the holder renews after an advance found its lease expired", h{
			op("a", claim, 1, 2, "A", 0, ok, 0), op("x", advance, 3, 4, "", 100, ok, 100),
			op("a", renew, 5, 6, "A", 50, ok, 100)}, false},
		{"a refused advance changes nothing", h{
			op("a", claim, 1, 2, "A", 0, ok, 0), op("x", advance, 3, 4, "", 100, refused, 0),
			op("a", renew, 5, 6, "A", 50, ok, 50)}, true},
		{"a token granted twice", h{
			op("a", claim, 1, 2, "A", 0, ok, 0), op("a", release, 3, 4, "A", 0, ok, 0),
			op("b", claim, 5, 6, "A", 0, ok, 0)}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := storecheck.Check(tt.ops, 0)
			if r.OK() != tt.legal {
				t.Errorf("legal %v, want %v: %s", r.OK(), tt.legal, r)
			}
			if !tt.legal && r.Verdict == porcupine.Unknown {
				t.Errorf("undecided: %s", r)
			}
		})
	}
}
