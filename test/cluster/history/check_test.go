package history_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/firn-id/firn/snowflake"
	"github.com/firn-id/firn/test/cluster/history"
)

var layout = snowflake.DefaultLayout()

// base is a moment well inside the default layout.
var base = layout.Epoch.Add(1000 * time.Hour)

// id composes an ID issued ms milliseconds after base on node n.
func id(t *testing.T, ms int64, n, seq uint64) int64 {
	t.Helper()
	v, err := layout.Compose(uint64(base.Add(time.Duration(ms)*time.Millisecond).Sub(layout.Epoch)/layout.Tick), n, seq)
	if err != nil {
		t.Fatal(err)
	}
	return int64(v)
}

// at is the Unix nanoseconds ms milliseconds after base.
func at(ms int64) int64 { return base.Add(time.Duration(ms) * time.Millisecond).UnixNano() }

func req(caller, proc string, from, to int64, ids ...int64) history.Record {
	return history.Record{Kind: history.KindRequest, Caller: caller, Proc: proc, Invoke: at(from), Complete: at(to), IDs: ids}
}

// seg is a request for IDs of a segment tag.
func seg(caller, proc, tag string, ids ...int64) history.Record {
	return history.Record{Kind: history.KindRequest, Caller: caller, Proc: proc, Tag: tag, Invoke: at(10), Complete: at(11), IDs: ids}
}

func acquire(proc string, node uint64, ms int64) history.Record {
	return history.Record{Kind: history.KindAcquire, Proc: proc, Node: node, At: at(ms)}
}

// siteLayout is the default layout with its node bits split into a
// 1-bit site and 9 bits of node: the same IDs, other field names.
var siteLayout = func() snowflake.Layout {
	l := snowflake.DefaultLayout()
	l.Node = []snowflake.Field{{Name: "site", Bits: 1}, {Name: "worker", Bits: 9}}
	return l
}()

// sited reports whether any record names a site: the history of a run of
// several sites.
func sited(recs []history.Record) bool {
	for _, r := range recs {
		if r.Site != "" {
			return true
		}
	}
	return false
}

// inSite is r answered by a process of site.
func inSite(site string, r history.Record) history.Record {
	r.Site = site
	return r
}

func check(t *testing.T, recs []history.Record) *history.Report {
	t.Helper()
	var buf bytes.Buffer
	w := history.NewWriter(&buf)
	for _, r := range recs {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	opts := history.Options{Lead: time.Second, SegmentEnd: map[string]int64{"order": 100}}
	if sited(recs) {
		// The site is the top bit of the default layout's 10-bit node
		// field: nodes 0–511 are site a's, 512–1023 site b's.
		opts.Layout = siteLayout
		opts.Sites, opts.SiteField = map[string]uint64{"a": 0, "b": 1}, "site"
	}
	rep, err := history.Check(&buf, opts)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func TestCheckCatchesEachViolation(t *testing.T) {
	tests := []struct {
		name string
		recs func(t *testing.T) []history.Record
		want string // the only check that fails; empty: none
	}{
		{"a clean history", func(t *testing.T) []history.Record {
			return []history.Record{
				acquire("a#1", 1, 0), acquire("b#1", 2, 0),
				req("c1", "a#1", 10, 11, id(t, 10, 1, 0), id(t, 10, 1, 1)),
				req("c1", "b#1", 12, 13, id(t, 12, 2, 0)),
				req("c1", "a#1", 14, 15, id(t, 14, 1, 0)),
				{Kind: history.KindRequest, Caller: "c2", Proc: "b#1", Invoke: at(15), Complete: at(16), Err: "not_serving"},
			}
		}, ""},
		{"one ID to two callers", func(t *testing.T) []history.Record {
			return []history.Record{
				acquire("a#1", 1, 0),
				req("c1", "a#1", 10, 11, id(t, 10, 1, 0)),
				req("c2", "a#1", 10, 11, id(t, 10, 1, 0)),
			}
		}, history.CheckDuplicate},
		{"one ID twice in one batch", func(t *testing.T) []history.Record {
			return []history.Record{
				acquire("a#1", 1, 0),
				req("c1", "a#1", 10, 11, id(t, 10, 1, 0), id(t, 10, 1, 0)),
			}
		}, history.CheckDuplicate + "," + history.CheckOrder},
		{"a caller's IDs from one generator going down", func(t *testing.T) []history.Record {
			return []history.Record{
				acquire("a#1", 1, 0),
				req("c1", "a#1", 10, 11, id(t, 10, 1, 5)),
				req("c1", "a#1", 12, 13, id(t, 10, 1, 4)),
			}
		}, history.CheckOrder},
		{"the new holder below the old one", func(t *testing.T) []history.Record {
			return []history.Record{
				acquire("a#1", 1, 0), acquire("b#1", 1, 500),
				req("c1", "a#1", 10, 11, id(t, 1010, 1, 0)),
				req("c2", "b#1", 1000, 1001, id(t, 1000, 1, 0)),
			}
		}, history.CheckFencing},
		{"a node served with no acquisition", func(t *testing.T) []history.Record {
			return []history.Record{
				acquire("a#1", 1, 0),
				req("c1", "b#1", 10, 11, id(t, 10, 1, 0)),
			}
		}, history.CheckFencing},
		{"an ID from before its request", func(t *testing.T) []history.Record {
			return []history.Record{
				acquire("a#1", 1, 0),
				req("c1", "a#1", 1000, 1001, id(t, 800, 1, 0)),
			}
		}, history.CheckTime},
		{"an ID ahead past the lead", func(t *testing.T) []history.Record {
			return []history.Record{
				acquire("a#1", 1, 0),
				req("c1", "a#1", 1000, 1001, id(t, 2200, 1, 0)),
			}
		}, history.CheckTime},
		{"segment IDs, clean: each tag its own space, no time or node", func(t *testing.T) []history.Record {
			return []history.Record{
				seg("c1", "a#1", "order", 1, 2, 3), seg("c2", "b#1", "order", 50, 51),
				seg("c1", "a#1", "order", 4), seg("c1", "a#1", "user", 1, 2, 500),
			}
		}, ""},
		{"a segment ID to two callers", func(t *testing.T) []history.Record {
			return []history.Record{seg("c1", "a#1", "order", 1, 2), seg("c2", "b#1", "order", 2, 3)}
		}, history.CheckDuplicate},
		{"a segment ID going down for one caller of one life", func(t *testing.T) []history.Record {
			return []history.Record{seg("c1", "a#1", "order", 5, 6), seg("c1", "a#1", "order", 4)}
		}, history.CheckOrder},
		{"a segment ID past what the store reserved", func(t *testing.T) []history.Record {
			return []history.Record{seg("c1", "a#1", "order", 99, 100)}
		}, history.CheckSegmentRange},
		{"a segment ID past the end the history records", func(t *testing.T) []history.Record {
			return []history.Record{seg("c1", "a#1", "user", 7, 8), {Kind: history.KindSegmentEnd, Tag: "user", End: 8}}
		}, history.CheckSegmentRange},
		{"two residue classes, each below its own store's counter", func(t *testing.T) []history.Record {
			return []history.Record{seg("c1", "a#1", "pair", 2, 4, 3, 41),
				{Kind: history.KindSegmentEnd, Tag: "pair", End: 5, Delta: 2, Remainder: 0},
				{Kind: history.KindSegmentEnd, Tag: "pair", End: 43, Delta: 2, Remainder: 1}}
		}, ""},
		{"one residue class going down for one caller", func(t *testing.T) []history.Record {
			return []history.Record{seg("c1", "a#1", "pair", 2, 41, 3, 4, 39),
				{Kind: history.KindSegmentEnd, Tag: "pair", End: 5, Delta: 2, Remainder: 0},
				{Kind: history.KindSegmentEnd, Tag: "pair", End: 43, Delta: 2, Remainder: 1}}
		}, history.CheckOrder},
		{"an odd ID past the odd store's counter", func(t *testing.T) []history.Record {
			return []history.Record{seg("c1", "a#1", "pair", 2, 41), seg("c2", "a#1", "pair", 43),
				{Kind: history.KindSegmentEnd, Tag: "pair", End: 5, Delta: 2, Remainder: 0},
				{Kind: history.KindSegmentEnd, Tag: "pair", End: 43, Delta: 2, Remainder: 1}}
		}, history.CheckSegmentRange},
		{"IDs through the client's buffer: no life, no order, a wider window", func(t *testing.T) []history.Record {
			return []history.Record{
				acquire("a#1", 1, 0),
				req("c1", "a#1", 10, 11, id(t, 10, 1, 0)),
				{Kind: history.KindRequest, Caller: "client.c0", Buffered: true, Invoke: at(900), Complete: at(901),
					IDs: []int64{id(t, 12, 1, 1), id(t, 11, 1, 0)}},
			}
		}, ""},
		{"an ID through the client that a process's caller also got", func(t *testing.T) []history.Record {
			return []history.Record{
				acquire("a#1", 1, 0),
				req("c1", "a#1", 10, 11, id(t, 10, 1, 0)),
				{Kind: history.KindRequest, Caller: "client.c0", Buffered: true, Invoke: at(20), Complete: at(21), IDs: []int64{id(t, 10, 1, 0)}},
			}
		}, history.CheckDuplicate},
		{"an ID through the client older than the buffer keeps one", func(t *testing.T) []history.Record {
			return []history.Record{
				acquire("a#1", 1, 0),
				{Kind: history.KindRequest, Caller: "client.c0", Buffered: true, Invoke: at(5000), Complete: at(5001), IDs: []int64{id(t, 10, 1, 0)}},
			}
		}, history.CheckTime},
		{"a segment ID below the first", func(t *testing.T) []history.Record {
			return []history.Record{seg("c1", "a#1", "order", 0)}
		}, history.CheckSegmentRange},
		{"two sites, each ID carrying its site's value", func(t *testing.T) []history.Record {
			return []history.Record{
				acquire("a-f0#1", 1, 0), acquire("b-f0#1", 513, 0),
				inSite("a", req("a-f0.c0", "a-f0#1", 10, 11, id(t, 10, 1, 0))),
				inSite("b", req("b-f0.c0", "b-f0#1", 10, 11, id(t, 10, 513, 0))),
				inSite("b", history.Record{Kind: history.KindRequest, Caller: "b-client.c0", Buffered: true, Invoke: at(12), Complete: at(13),
					IDs: []int64{id(t, 10, 513, 1)}}),
			}
		}, ""},
		{"an ID of site b's value from site a", func(t *testing.T) []history.Record {
			return []history.Record{
				acquire("a-f0#1", 513, 0),
				inSite("a", req("a-f0.c0", "a-f0#1", 10, 11, id(t, 10, 513, 0))),
			}
		}, history.CheckSite},
		{"a request of no site in a run of sites", func(t *testing.T) []history.Record {
			return []history.Record{
				acquire("a-f0#1", 1, 0), acquire("f1#1", 2, 0),
				inSite("a", req("a-f0.c0", "a-f0#1", 10, 11, id(t, 10, 1, 0))),
				req("f1.c0", "f1#1", 10, 11, id(t, 10, 2, 0)),
			}
		}, history.CheckSite},
		{"an ID wider than the layout", func(t *testing.T) []history.Record {
			return []history.Record{
				acquire("a#1", 1, 0),
				req("c1", "a#1", 10, 11, -1),
			}
		}, history.CheckDecode},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep := check(t, tt.recs(t))
			var got []string
			for _, c := range []string{history.CheckDuplicate, history.CheckOrder, history.CheckFencing, history.CheckTime, history.CheckDecode, history.CheckSegmentRange, history.CheckSite} {
				if rep.Counts[c] > 0 {
					got = append(got, c)
				}
			}
			if strings.Join(got, ",") != tt.want {
				var out bytes.Buffer
				rep.Write(&out)
				t.Fatalf("failed checks %v, want %q\n%s", got, tt.want, out.String())
			}
			if rep.OK() != (tt.want == "") {
				t.Fatalf("OK() = %v with counts %v", rep.OK(), rep.Counts)
			}
		})
	}
}

func TestCheckCountsErrorsAndGapsPerPhase(t *testing.T) {
	recs := []history.Record{
		acquire("a#1", 1, 0),
		req("c1", "a#1", 0, 1, id(t, 0, 1, 0)),
		{Kind: history.KindPhase, Phase: "kill", At: at(100)},
		{Kind: history.KindRequest, Caller: "c1", Proc: "a#1", Invoke: at(101), Complete: at(102), Err: "transport"},
		{Kind: history.KindRequest, Caller: "c1", Proc: "a#1", Invoke: at(103), Complete: at(104), Err: "transport"},
		acquire("a#2", 2, 1500),
		req("c1", "a#2", 1600, 1601, id(t, 1600, 2, 0)),
		req("c1", "a#2", 1900, 1901, id(t, 2400, 2, 0)),
	}
	rep := check(t, recs)
	if !rep.OK() {
		t.Fatalf("violations: %v", rep.Violations)
	}
	if rep.MaxLead != 499*time.Millisecond {
		t.Errorf("MaxLead = %s, want 499ms (the last ID's time past its completion)", rep.MaxLead)
	}
	if rep.Errors["transport"] != 2 || rep.IDs != 3 || rep.Requests != 5 {
		t.Fatalf("errors %v, IDs %d, requests %d; want transport=2, 3 IDs, 5 requests", rep.Errors, rep.IDs, rep.Requests)
	}
	var kill *history.Phase
	for _, p := range rep.Phases {
		if p.Name == "kill" {
			kill = p
		}
	}
	if kill == nil {
		t.Fatal("no phase kill in the report")
	}
	if kill.Gap != 1501*time.Millisecond || kill.ProcGap != 300*time.Millisecond || kill.GapProc != "a#2" {
		t.Fatalf("kill: gap %s, proc gap %s (%s); want 1.501s (from the phase's start), 300ms (a#2)", kill.Gap, kill.ProcGap, kill.GapProc)
	}
}

func TestScanRefusesAnUnknownKind(t *testing.T) {
	err := history.Scan(strings.NewReader(`{"kind":"nope"}`+"\n"), func(history.Record) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "nope") {
		t.Fatalf("Scan = %v, want an error naming the kind", err)
	}
}

func TestWriteSumsTheRoundsOfOneFault(t *testing.T) {
	recs := []history.Record{acquire("a#1", 1, 0)}
	for round := range int64(2) {
		recs = append(recs,
			history.Record{Kind: history.KindPhase, Phase: "kill", At: at(round * 1000)},
			req("c1", "a#1", round*1000+1, round*1000+2, id(t, round*1000+1, 1, 0), id(t, round*1000+1, 1, 1)),
			history.Record{Kind: history.KindPhase, Phase: "settle", At: at(round*1000 + 500)},
			req("c1", "a#1", round*1000+501, round*1000+502, id(t, round*1000+501, 1, 0)))
	}
	var out bytes.Buffer
	check(t, recs).Write(&out)
	var rows []string
	for _, line := range strings.Split(out.String(), "\n") {
		if f := strings.Fields(line); len(f) > 2 && (f[0] == "kill" || f[0] == "settle") {
			rows = append(rows, f[0]+" "+f[1]+" "+f[2])
		}
	}
	if got := strings.Join(rows, ", "); got != "kill 2 4, settle 2 2" {
		t.Fatalf("rows %q, want kill 2 4, settle 2 2 (name, requests, IDs)\n%s", got, out.String())
	}
}

// TestCheckCountsSegmentIDsPerTag: the report counts each tag's IDs and
// names the counter they were checked against.
func TestCheckCountsSegmentIDsPerTag(t *testing.T) {
	rep := check(t, []history.Record{seg("c1", "a#1", "order", 1, 2, 3), seg("c1", "a#1", "user", 9),
		{Kind: history.KindSegmentEnd, Tag: "user", End: 10}})
	if rep.SegmentIDs["order"] != 3 || rep.SegmentIDs["user"] != 1 || rep.SegmentEnd["order"][0].End != 100 || rep.SegmentEnd["user"][0].End != 10 {
		t.Fatalf("segment IDs %v, ends %v", rep.SegmentIDs, rep.SegmentEnd)
	}
	var out bytes.Buffer
	rep.Write(&out)
	if !strings.Contains(out.String(), "segment tag user: 1 IDs, all below the store's counter 10") {
		t.Fatalf("report:\n%s", out.String())
	}
}
