package storelog_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/firn-id/firn/internal/storelog"
	"github.com/firn-id/firn/nodeid"
	"github.com/firn-id/firn/nodeid/nodeidtest"
)

var layout = nodeid.LayoutID{Fingerprint: "fp", Description: "test"}

// TestWrapKeepsTheRecord: wrapping a store that keeps a namespace
// record (a site's registry) keeps it one, its record read through.
func TestWrapKeepsTheRecord(t *testing.T) {
	ctx := context.Background()
	mem := nodeidtest.NewMemStore()
	if _, err := mem.Claim(ctx, nodeid.ClaimRequest{AnyNode: true, Pool: 4, Layout: layout, TTL: time.Second}); err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	rs, ok := storelog.Wrap(mem, &log, func(err error) { t.Errorf("write the log: %v", err) }).(nodeid.Recorder)
	if !ok {
		t.Fatal("the wrapped MemStore is no nodeid.Recorder: a site's process could not claim through it")
	}
	if rec, err := rs.Record(ctx); err != nil || rec != layout {
		t.Fatalf("Record = %+v, %v; want %+v", rec, err, layout)
	}
	if log.Len() != 0 {
		t.Fatalf("a record read was logged: %q", log.String())
	}
}

// TestRecordsEachOperation records one of each operation, a refusal and
// an error with no answer, and reads them back with their outcomes.
func TestRecordsEachOperation(t *testing.T) {
	ctx := context.Background()
	mem := nodeidtest.NewMemStore()
	var log bytes.Buffer
	r := storelog.New(mem, &log, func(err error) { t.Errorf("write the log: %v", err) })
	c, err := r.Claim(ctx, nodeid.ClaimRequest{AnyNode: true, Pool: 4, Layout: layout, TTL: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Renew(ctx, c, 5000); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Renew(ctx, nodeid.Claim{Node: c.Node, Token: "other"}, 6000); !errors.Is(err, nodeid.ErrLeaseLost) {
		t.Fatalf("renew by another token: %v, want ErrLeaseLost", err)
	}
	mem.Fail(fmt.Errorf("connection reset"))
	_, _ = r.Advance(ctx, nodeid.AdvanceRequest{Node: 1, HWM: 9000})
	mem.Fail(nil)
	if err := r.Release(ctx, c); err != nil {
		t.Fatal(err)
	}
	ops, err := storelog.Read(&log, "p")
	if err != nil {
		t.Fatal(err)
	}
	want := []struct{ kind, outcome, class string }{
		{storelog.KindClaim, storelog.OK, ""},
		{storelog.KindRenew, storelog.OK, ""},
		{storelog.KindRenew, storelog.Refused, "lease_lost"},
		{storelog.KindAdvance, storelog.Unknown, ""},
		{storelog.KindRelease, storelog.OK, ""},
	}
	if len(ops) != len(want) {
		t.Fatalf("read %d operations, want %d: %+v", len(ops), len(want), ops)
	}
	for i, w := range want {
		o := ops[i]
		if o.Kind != w.kind || o.Ret.Outcome != w.outcome || o.Ret.Class != w.class {
			t.Errorf("op %d: %s %s %q, want %s %s %q", i, o.Kind, o.Ret.Outcome, o.Ret.Class, w.kind, w.outcome, w.class)
		}
		if o.At == 0 || o.Ret.At < o.At {
			t.Errorf("op %d: called at %d, returned at %d", i, o.At, o.Ret.At)
		}
	}
	if ops[0].Ret.Token != c.Token || ops[0].Ret.Node != c.Node || ops[1].Ret.HWM != 5000 || ops[1].HWM != 5000 {
		t.Errorf("claim or renew recorded as %+v, %+v; the claim was %+v", ops[0], ops[1], c)
	}
}

// TestCallWithoutReturnIsUnknown reads the log of a process killed while
// an operation was in flight: the call is there, its return is not, and
// a line cut short ends the log.
func TestCallWithoutReturnIsUnknown(t *testing.T) {
	log := `{"seq":1,"kind":"claim","call":10,"node":0,"any":true,"layout":"fp"}
{"seq":1,"return":20,"outcome":"ok","node":2,"token":"t1","hwm":0}
{"seq":2,"kind":"renew","call":30,"node":2,"token":"t1","hwm":900}
{"seq":3,"kind":"renew","ca`
	ops, err := storelog.Read(bytes.NewBufferString(log), "p")
	if err != nil {
		t.Fatal(err)
	}
	if len(ops) != 2 {
		t.Fatalf("read %d operations, want 2: %+v", len(ops), ops)
	}
	if ops[1].Returned() || ops[1].Ret.Outcome != storelog.Unknown || ops[1].HWM != 900 {
		t.Errorf("the renew in flight reads as %+v, want unknown with its target", ops[1])
	}
}

// TestRefusesABrokenLog: a line that does not parse before the end is an
// error, not a shorter history.
func TestRefusesABrokenLog(t *testing.T) {
	log := "{\"seq\":1,\"kind\":\"claim\",\"call\":10}\nnot json\n{\"seq\":1,\"return\":20,\"outcome\":\"ok\"}\n"
	if _, err := storelog.Read(bytes.NewBufferString(log), "p"); err == nil {
		t.Error("a log with a broken line in the middle was read")
	}
}
