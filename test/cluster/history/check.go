package history

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"slices"
	"time"

	"github.com/firn-id/firn/snowflake"
)

// The checks a history can fail.
const (
	CheckDuplicate = "duplicate"
	// CheckSegmentRange: a segment ID outside what its tag's store
	// reserved, [1, Options.SegmentEnd[tag]).
	CheckSegmentRange = "segment-range"
	CheckOrder        = "order"
	CheckFencing      = "fencing"
	CheckTime         = "time"
	CheckDecode       = "decode"
	// CheckSite: a snowflake ID whose site field (Options.SiteField) is
	// not the value of the site that answered it, or a request naming no
	// site of Options.Sites.
	CheckSite = "site"
)

// maxKept is how many violations of each check a report spells out; the
// rest are counted.
const maxKept = 10

// Options says what a history is checked against.
type Options struct {
	// Layout decodes the IDs. Default (no time bits) snowflake.DefaultLayout().
	Layout snowflake.Layout
	// Epsilon widens each request's window on both sides: the harness's
	// scheduling, and at least the client's MaxAge when IDs come through
	// the Go client's buffer. Default 50 ms.
	Epsilon time.Duration
	// Lead is how far past its request's completion an ID's time may be:
	// the start-ahead bound plus the borrowing bound plus any clock offset
	// injected. Default 10 s, firn's default start-ahead bound.
	Lead time.Duration
	// BufferEpsilon replaces Epsilon for IDs taken from the Go client's
	// buffer (Record.Buffered): at least the client's MaxAge. Default
	// 1 s + Epsilon.
	BufferEpsilon time.Duration
	// SegmentEnd is, per segment tag, the store's counter read after the
	// run: no range reserved holds an ID at or past it. KindSegmentEnd
	// records add to it. A tag with neither is checked for uniqueness and
	// order only.
	SegmentEnd map[string]int64
	// Sites are, in a run of several sites, each site's value of the
	// node field SiteField: every snowflake ID a site's process answered
	// (Record.Site) must carry it. Empty: no site check.
	Sites     map[string]uint64
	SiteField string
}

// Violation is one broken rule.
type Violation struct {
	Check  string
	Detail string
}

// Phase is what clients saw during one phase of a run.
type Phase struct {
	Name     string
	Start    time.Time
	Requests int
	IDs      int
	// Errors counts failed requests by kind.
	Errors map[string]int
	// Gap is the longest time no request of any process succeeded, and
	// ProcGap the longest time one process that answered in the phase did
	// not, with its name.
	Gap      time.Duration
	ProcGap  time.Duration
	GapProc  string
	lastDone int64
}

// Report is the result of a check.
type Report struct {
	Requests int
	IDs      int
	// Errors counts failed requests by kind over the whole run.
	Errors map[string]int
	// Counts is the number of violations of each check; Violations keeps
	// the first few of each.
	Counts     map[string]int
	Violations []Violation
	Phases     []*Phase
	// MaxLead is how far the time of the ID most ahead lay past its
	// request's completion: the lead actually seen, against Options.Lead.
	MaxLead time.Duration
	// SegmentIDs counts the IDs of each segment tag, and SegmentEnd
	// holds the counters they were checked against, where known.
	SegmentIDs map[string]int
	SegmentEnd map[string][]SegmentEnd
	// BufferedIDs counts the snowflake IDs taken through the Go client.
	BufferedIDs int
}

// SegmentEnd bounds a tag's IDs by a store's counter after the run: the
// IDs equal to Remainder modulo Delta (every ID when Delta is 0) are
// below End.
type SegmentEnd struct {
	End, Delta, Remainder int64
}

// covers reports whether e bounds id.
func (e SegmentEnd) covers(id int64) bool { return e.Delta == 0 || id%e.Delta == e.Remainder }

// OK reports whether the history broke no rule.
func (r *Report) OK() bool { return len(r.Counts) == 0 }

// issued is one ID and the index of the process life that answered it.
type issued struct {
	id   int64
	proc int32
}

type orderKey struct {
	caller, proc string
	node         uint64
}

type acquisition struct {
	at   int64
	proc int32
}

// Checker checks a history record by record; Check is its usual driver.
type Checker struct {
	opts     Options
	rep      Report
	procs    map[string]int32
	names    []string
	ids      []issued
	buffered []issued                // snowflake IDs from the client's buffer: no life, so no fencing or order
	seg      map[string][]issued     // segment IDs per tag
	segSeq   map[segKey][]int64      // segment IDs per caller, life and tag, in order
	ends     map[string][]SegmentEnd // Options.SegmentEnd and KindSegmentEnd
	last     map[orderKey]int64
	acquired map[uint64][]acquisition
	phase    *Phase
	lastDone map[string]int64
	procGap  map[string]time.Duration
}

// NewChecker returns a checker for opts.
func NewChecker(opts Options) (*Checker, error) {
	if opts.Layout.TimeBits == 0 {
		opts.Layout = snowflake.DefaultLayout()
	}
	if err := opts.Layout.Validate(); err != nil {
		return nil, fmt.Errorf("history: layout: %w", err)
	}
	if opts.Epsilon == 0 {
		opts.Epsilon = 50 * time.Millisecond
	}
	if opts.Lead == 0 {
		opts.Lead = 10 * time.Second
	}
	if opts.BufferEpsilon == 0 {
		opts.BufferEpsilon = time.Second + opts.Epsilon
	}
	c := &Checker{
		opts: opts, procs: map[string]int32{}, last: map[orderKey]int64{}, seg: map[string][]issued{}, segSeq: map[segKey][]int64{}, ends: map[string][]SegmentEnd{},
		acquired: map[uint64][]acquisition{}, lastDone: map[string]int64{},
		procGap: map[string]time.Duration{},
		rep:     Report{Errors: map[string]int{}, Counts: map[string]int{}, SegmentIDs: map[string]int{}},
	}
	for tag, end := range opts.SegmentEnd {
		c.ends[tag] = []SegmentEnd{{End: end}}
	}
	c.startPhase("start", 0)
	return c, nil
}

// Check reads a history from r and checks it.
func Check(r io.Reader, opts Options) (*Report, error) {
	c, err := NewChecker(opts)
	if err != nil {
		return nil, err
	}
	if err := Scan(r, c.Add); err != nil {
		return nil, err
	}
	return c.Finish(), nil
}

func (c *Checker) violate(check, format string, args ...any) {
	c.rep.Counts[check]++
	if c.rep.Counts[check] <= maxKept {
		c.rep.Violations = append(c.rep.Violations, Violation{Check: check, Detail: fmt.Sprintf(format, args...)})
	}
}

func (c *Checker) proc(name string) int32 {
	i, ok := c.procs[name]
	if !ok {
		i = int32(len(c.names))
		c.procs[name] = i
		c.names = append(c.names, name)
	}
	return i
}

// Add checks one record. Records of one caller come in the order it made
// them.
func (c *Checker) Add(r Record) error {
	switch r.Kind {
	case KindPhase:
		c.startPhase(r.Phase, r.At)
	case KindAcquire:
		c.acquired[r.Node] = append(c.acquired[r.Node], acquisition{at: r.At, proc: c.proc(r.Proc)})
	case KindRequest:
		c.request(r)
	case KindSegmentEnd:
		c.ends[r.Tag] = append(c.ends[r.Tag], SegmentEnd{End: r.End, Delta: r.Delta, Remainder: r.Remainder})
	}
	return nil
}

func (c *Checker) startPhase(name string, at int64) {
	c.closePhase()
	c.phase = &Phase{Name: name, Start: time.Unix(0, at), Errors: map[string]int{}, lastDone: at}
	c.rep.Phases = append(c.rep.Phases, c.phase)
}

// closePhase records the longest silence of each process that answered in
// the phase.
func (c *Checker) closePhase() {
	if c.phase == nil {
		return
	}
	for p, g := range c.procGap {
		if g > c.phase.ProcGap {
			c.phase.ProcGap, c.phase.GapProc = g, p
		}
	}
	clear(c.procGap)
}

func (c *Checker) request(r Record) {
	ph := c.phase
	c.rep.Requests++
	ph.Requests++
	if r.Err != "" {
		c.rep.Errors[r.Err]++
		ph.Errors[r.Err]++
		return
	}
	c.rep.IDs += len(r.IDs)
	ph.IDs += len(r.IDs)
	c.gaps(r)
	if r.Buffered {
		r.Proc = "client buffer"
	}
	p := c.proc(r.Proc)
	if r.Tag != "" {
		c.segment(r, p)
		return
	}
	eps := c.opts.Epsilon
	if r.Buffered {
		eps = c.opts.BufferEpsilon
	}
	lo := r.Invoke - int64(eps)
	hi := r.Complete + int64(eps+c.opts.Lead)
	tick := int64(c.opts.Layout.Tick)
	for _, id := range r.IDs {
		if r.Buffered {
			c.rep.BufferedIDs++
			c.buffered = append(c.buffered, issued{id: id, proc: p})
		} else {
			c.ids = append(c.ids, issued{id: id, proc: p})
		}
		parts, err := c.opts.Layout.Decompose(uint64(id))
		if err != nil {
			c.violate(CheckDecode, "%s from %s: %v", fmtID(id), r.Proc, err)
			continue
		}
		if at := parts.Time.UnixNano(); at+tick <= lo || at > hi {
			c.violate(CheckTime, "%s from %s: time %s outside [%s, %s] (invoke − ε, completion + ε + lead)",
				fmtID(id), r.Proc, parts.Time.Format(time.RFC3339Nano),
				time.Unix(0, lo).UTC().Format(time.RFC3339Nano), time.Unix(0, hi).UTC().Format(time.RFC3339Nano))
		}
		c.rep.MaxLead = max(c.rep.MaxLead, time.Duration(parts.Time.UnixNano()-r.Complete))
		c.site(r, id, parts)
		if r.Buffered {
			continue // refills in parallel, from any server: no order to keep
		}
		k := orderKey{caller: r.Caller, proc: r.Proc, node: parts.Node}
		if prev, ok := c.last[k]; ok && id <= prev {
			c.violate(CheckOrder, "caller %s got %s from %s (node %d) after %s", r.Caller, fmtID(id), r.Proc, parts.Node, fmtID(prev))
		}
		c.last[k] = id
	}
}

// site checks that id carries the value of the site that answered it:
// the value is what keeps one site's IDs apart from another's
// (docs/design.md, "Sites: several registries, one ID space").
func (c *Checker) site(r Record, id int64, parts snowflake.Parts) {
	if len(c.opts.Sites) == 0 {
		return
	}
	want, ok := c.opts.Sites[r.Site]
	if !ok {
		c.violate(CheckSite, "%s from %s (caller %s): site %q is none of the run's", fmtID(id), r.Proc, r.Caller, r.Site)
		return
	}
	for _, f := range parts.Fields {
		if f.Name == c.opts.SiteField {
			if f.Value != want {
				c.violate(CheckSite, "%s from %s (caller %s) of site %s: %s=%d, want %d", fmtID(id), r.Proc, r.Caller, r.Site, f.Name, f.Value, want)
			}
			return
		}
	}
	c.violate(CheckSite, "%s: the layout has no node field %q", fmtID(id), c.opts.SiteField)
}

// segKey is one caller's IDs of one tag from one process life.
type segKey struct{ caller, life, tag string }

// segment keeps the IDs of a segment tag for Finish, which checks them
// against the stores' counters and their order.
func (c *Checker) segment(r Record, p int32) {
	k := segKey{r.Caller, r.Proc, r.Tag}
	c.rep.SegmentIDs[r.Tag] += len(r.IDs)
	for _, id := range r.IDs {
		c.seg[r.Tag] = append(c.seg[r.Tag], issued{id: id, proc: p})
	}
	c.segSeq[k] = append(c.segSeq[k], r.IDs...)
}

// segmentOrder checks that each caller's IDs of a tag from one process
// life increase within each residue class of the tag's stores: a server
// hands out each store's ranges in increasing order, and with several
// stores takes ranges from each in turn.
func (c *Checker) segmentOrder() {
	keys := slices.SortedFunc(maps.Keys(c.segSeq), func(a, b segKey) int {
		return cmp.Or(cmp.Compare(a.tag, b.tag), cmp.Compare(a.life, b.life), cmp.Compare(a.caller, b.caller))
	})
	for _, k := range keys {
		delta := int64(1)
		for _, e := range c.ends[k.tag] {
			delta = max(delta, e.Delta)
		}
		last := map[int64]int64{}
		for _, id := range c.segSeq[k] {
			class := ((id % delta) + delta) % delta
			if prev, ok := last[class]; ok && id <= prev {
				c.violate(CheckOrder, "caller %s got %s of tag %s from %s after %s", k.caller, fmtID(id), k.tag, k.life, fmtID(prev))
			}
			last[class] = id
		}
	}
}

// gaps tracks how long the service, and each process, went without a
// successful answer.
func (c *Checker) gaps(r Record) {
	ph := c.phase
	if ph.lastDone != 0 && r.Complete > ph.lastDone {
		ph.Gap = max(ph.Gap, time.Duration(r.Complete-ph.lastDone))
	}
	ph.lastDone = max(ph.lastDone, r.Complete)
	if prev, ok := c.lastDone[r.Proc]; ok && r.Complete > prev {
		c.procGap[r.Proc] = max(c.procGap[r.Proc], time.Duration(r.Complete-prev))
	} else if !ok {
		c.procGap[r.Proc] = max(c.procGap[r.Proc], 0)
	}
	c.lastDone[r.Proc] = max(c.lastDone[r.Proc], r.Complete)
}

// Finish runs the checks that need the whole history and returns the
// report.
func (c *Checker) Finish() *Report {
	c.closePhase()
	c.rep.SegmentEnd = c.ends
	c.segmentOrder()
	c.duplicates(c.ids, "")
	c.bufferedDuplicates()
	tags := make([]string, 0, len(c.seg))
	for tag := range c.seg {
		tags = append(tags, tag)
	}
	slices.Sort(tags)
	for _, tag := range tags {
		ids := c.seg[tag]
		c.duplicates(ids, " of tag "+tag)
		for _, x := range ids {
			if x.id < 1 {
				c.violate(CheckSegmentRange, "%s of tag %s from %s: below 1", fmtID(x.id), tag, c.names[x.proc])
			}
			for _, e := range c.ends[tag] {
				if e.covers(x.id) && x.id >= e.End {
					c.violate(CheckSegmentRange, "%s of tag %s from %s: at or past %d, the counter of the store of the IDs ≡ %d (mod %d)",
						fmtID(x.id), tag, c.names[x.proc], e.End, e.Remainder, e.Delta)
				}
			}
		}
	}
	c.fencing()
	return &c.rep
}

// bufferedDuplicates reports each ID from the client's buffer that came
// twice, or that a caller of a process also got; c.ids is sorted.
func (c *Checker) bufferedDuplicates() {
	c.duplicates(c.buffered, " (through the client)")
	for _, x := range c.buffered {
		if i, ok := slices.BinarySearchFunc(c.ids, x.id, func(a issued, id int64) int { return cmp.Compare(a.id, id) }); ok {
			c.violate(CheckDuplicate, "%s issued through the client and by %s", fmtID(x.id), c.names[c.ids[i].proc])
		}
	}
}

// duplicates sorts ids and reports each ID issued twice.
func (c *Checker) duplicates(ids []issued, what string) {
	slices.SortFunc(ids, func(a, b issued) int { return cmp.Compare(a.id, b.id) })
	for i := 1; i < len(ids); i++ {
		if a, b := ids[i-1], ids[i]; a.id == b.id {
			c.violate(CheckDuplicate, "%s%s issued by %s and by %s", fmtID(a.id), what, c.names[a.proc], c.names[b.proc])
		}
	}
}

// fencing checks, node by node, that the process lives serving it in ID
// order are its acquisitions in time order: no life issues an ID above
// one of a life that acquired the node after it.
func (c *Checker) fencing() {
	served := map[uint64][]int32{}
	for _, x := range c.ids {
		parts, err := c.opts.Layout.Decompose(uint64(x.id))
		if err != nil {
			continue
		}
		s := served[parts.Node]
		if len(s) == 0 || s[len(s)-1] != x.proc {
			served[parts.Node] = append(s, x.proc)
		}
	}
	nodes := make([]uint64, 0, len(served))
	for n := range served {
		nodes = append(nodes, n)
	}
	slices.Sort(nodes)
	for _, n := range nodes {
		acq := c.acquired[n]
		slices.SortStableFunc(acq, func(a, b acquisition) int { return cmp.Compare(a.at, b.at) })
		if !c.subsequence(served[n], acq) {
			c.violate(CheckFencing, "node %d: served in ID order by %s, acquired in time order by %s",
				n, c.list(served[n]), c.acqList(acq))
		}
	}
}

// subsequence reports whether the lives in served follow one another as
// acquisitions in acq do (a life may acquire and serve nothing).
func (c *Checker) subsequence(served []int32, acq []acquisition) bool {
	j := 0
	for _, p := range served {
		for j < len(acq) && acq[j].proc != p {
			j++
		}
		if j == len(acq) {
			return false
		}
		j++
	}
	return true
}

func (c *Checker) list(procs []int32) []string {
	out := make([]string, len(procs))
	for i, p := range procs {
		out[i] = c.names[p]
	}
	return out
}

func (c *Checker) acqList(acq []acquisition) []string {
	out := make([]string, len(acq))
	for i, a := range acq {
		out[i] = c.names[a.proc]
	}
	return out
}

func fmtID(id int64) string { return fmt.Sprintf("ID %d", id) }
