package server

import (
	"context"
	"errors"
	"net/http"
	"sort"
	"time"

	"github.com/firn-id/firn/internal/buildinfo"
	"github.com/firn-id/firn/segment"
	"github.com/firn-id/firn/snowflake"
)

// leaseDetail is what /v1/status shows of a lease beyond Lease, when the
// lease has it (nodeid.Lease does).
type leaseDetail interface {
	Token() string
	TTL() time.Duration
	Renewals() int64
	Renewed() time.Time
	Start() int64
}

// renewalErrer is a Lease that says why its renewals fail while it still
// holds (nodeid.Lease).
type renewalErrer interface {
	RenewalError() error
}

// statusDoc is the answer of GET /v1/status: what the node is doing,
// read from memory only (no store I/O). Times are Unix milliseconds.
type statusDoc struct {
	Version   string          `json:"version"`
	Commit    string          `json:"commit"`
	GoVersion string          `json:"go_version"`
	NowMS     int64           `json:"now_ms"`
	StartedMS int64           `json:"started_ms"`
	UptimeMS  int64           `json:"uptime_ms"`
	Ready     bool            `json:"ready"`
	NotReady  string          `json:"not_ready,omitempty"`
	Opaque    bool            `json:"opaque"`
	Snowflake *snowflakeState `json:"snowflake"`
	Lease     *leaseState     `json:"lease"`
	Rate      rateState       `json:"rate"`
	Tags      []tagState      `json:"tags"`
	Errors    []recentError   `json:"errors"`
	// Starting is set while the process waits for its stores and a node
	// (Starting): what it waits for and how long it has.
	Starting *startingState `json:"starting,omitempty"`
}

// startingState is the wait of a process that does not serve yet.
type startingState struct {
	// Store names the store waited for: its kind and namespace.
	Store string `json:"store,omitempty"`
	// WaitingMS is how long the process has waited, since its ports
	// were bound.
	WaitingMS int64 `json:"waiting_ms"`
}

type snowflakeState struct {
	Node          uint64      `json:"node"`
	Layout        string      `json:"layout"`
	Fingerprint   string      `json:"fingerprint"`
	Bits          []layoutBit `json:"bits"`
	TickMS        int64       `json:"tick_ms"`
	EpochMS       int64       `json:"epoch_ms"`
	PerSecond     float64     `json:"ids_per_second_per_node"`
	Nodes         uint64      `json:"nodes"`
	LastMS        int64       `json:"last_ms"`
	RemainingMS   int64       `json:"remaining_ms"`
	ClockOffsetMS int64       `json:"clock_offset_ms"`
}

// layoutBit is one part of the layout, most significant first: the sign
// bit, time, each node field, sequence.
type layoutBit struct {
	Part string `json:"part"`
	Name string `json:"name"`
	Bits int    `json:"bits"`
}

type leaseState struct {
	Store string `json:"store"`
	Held  bool   `json:"held"`
	Error string `json:"error,omitempty"`
	// RenewalError: renewals fail while the lease still holds (a store
	// that does not answer); the node serves up to its HWM.
	RenewalError string `json:"renewal_error,omitempty"`
	LeaseID      string `json:"lease_id,omitempty"`
	TTLMS        int64  `json:"ttl_granted_ms,omitempty"`
	RenewedMS    int64  `json:"last_renewal_ms,omitempty"`
	ExpiresInMS  int64  `json:"expires_in_ms,omitempty"`
	Renewals     int64  `json:"renewals"`
	StartHWMMS   int64  `json:"start_hwm_ms,omitempty"`
	HWMMS        int64  `json:"hwm_ms"`
	HeadroomMS   int64  `json:"headroom_ms"`
}

// rateState is the IDs issued per second of each mode, oldest first,
// over the seconds before EndMS (seconds since the server started, on the
// monotonic clock).
type rateState struct {
	EndMS     int64               `json:"end_ms"`
	PerSecond map[string][]uint64 `json:"per_second"`
}

// tagState is a tag as this node serves it. Of its steps, Step is the
// adaptive one the next fetch asks for, ConfiguredStep the tag's own in
// the store (firn tag list's STEP), which the adaptive step never goes
// below.
type tagState struct {
	Tag string `json:"tag"`
	// InMemory is the IDs this node holds for the tag: Left in the
	// current range plus Prefetched in the next.
	InMemory       int64      `json:"in_memory"`
	Left           int64      `json:"left"`
	Prefetched     int64      `json:"prefetched"`
	ConfiguredStep int64      `json:"configured_step"`
	Step           int64      `json:"step"`
	Current        rangeState `json:"current"`
	Next           rangeState `json:"next"`
	Fetches        int64      `json:"fetches"`
	Errors         int64      `json:"errors"`
	FetchedMS      int64      `json:"last_fetch_ms,omitempty"`
	LatencyMS      float64    `json:"fetch_latency_ms"`
	Healthy        bool       `json:"healthy"`
	LastError      string     `json:"last_error,omitempty"`
	// Opaque: the tag's IDs are opaque, and its ranges, plain IDs, are
	// left out (zero).
	Opaque bool `json:"opaque,omitempty"`
}

// rangeState is a range of IDs, [start, end) by delta.
type rangeState struct {
	Start int64 `json:"start"`
	End   int64 `json:"end"`
	Delta int64 `json:"delta"`
}

// status reads the node's state at now.
func (s *service) status(now time.Time) statusDoc {
	bi := buildinfo.Read()
	doc := statusDoc{Version: bi.Version, Commit: bi.Commit, GoVersion: bi.GoVersion, NowMS: now.UnixMilli(),
		StartedMS: s.started.UnixMilli(), UptimeMS: now.Sub(s.started).Milliseconds(), Opaque: s.Opaque != nil,
		Tags: []tagState{}}
	if err := s.ready(); err != nil {
		s.recent.seen("readiness", err, now)
		doc.NotReady = redactSecrets(err.Error())
	} else {
		doc.Ready = true
	}
	if g := s.generator(); g != nil {
		doc.Snowflake = snowflakeOf(g, now)
		if l := s.lease(); l != nil {
			doc.Lease = s.leaseOf(l, g, now)
		}
	}
	cur := s.rate.second()
	doc.Rate = rateState{EndMS: s.rate.end(cur).UnixMilli(), PerSecond: map[string][]uint64{}}
	// With opaque tags, how many segment IDs were issued is what their
	// IDs hide: left out, as the snowflake rate in opaque mode.
	if s.Segments == nil || !s.Segments.OpaqueTags() {
		doc.Rate.PerSecond["segment"] = s.rate.perSecond(modeSegment, cur)
	}
	// In opaque mode how many snowflake IDs were issued is what the IDs
	// hide (/metrics needs scope metrics there): left out.
	if s.Opaque == nil {
		doc.Rate.PerSecond["snowflake"] = s.rate.perSecond(modeSnowflake, cur)
	}
	if s.Segments != nil {
		for _, st := range s.Segments.Stats() {
			doc.Tags = append(doc.Tags, s.tagOf(st, now))
		}
		sort.Slice(doc.Tags, func(i, j int) bool { return doc.Tags[i].Tag < doc.Tags[j].Tag })
	}
	doc.Errors = s.recent.list()
	return doc
}

func snowflakeOf(g *snowflake.Generator, now time.Time) *snowflakeState {
	l := g.Layout()
	c := l.Capacity()
	end := c.Last.Add(l.Tick)
	st := &snowflakeState{Node: g.Node(), Layout: l.String(), Fingerprint: l.Fingerprint(), TickMS: l.Tick.Milliseconds(),
		EpochMS: l.Epoch.UnixMilli(), PerSecond: c.PerSecond, Nodes: c.Nodes, LastMS: end.UnixMilli(),
		RemainingMS: max(0, end.Sub(now).Milliseconds()), ClockOffsetMS: g.AheadOfWall().Milliseconds()}
	if l.Bits() < 64 {
		st.Bits = append(st.Bits, layoutBit{Part: "sign", Name: "sign", Bits: 64 - l.Bits()})
	}
	for _, p := range l.Parts() {
		switch p {
		case snowflake.PartTime:
			st.Bits = append(st.Bits, layoutBit{Part: "time", Name: "time", Bits: l.TimeBits})
		case snowflake.PartNode:
			for _, f := range l.Node {
				st.Bits = append(st.Bits, layoutBit{Part: "node", Name: f.Name, Bits: f.Bits})
			}
		case snowflake.PartSequence:
			st.Bits = append(st.Bits, layoutBit{Part: "sequence", Name: "sequence", Bits: l.SequenceBits})
		}
	}
	return st
}

func (s *service) leaseOf(l Lease, g *snowflake.Generator, now time.Time) *leaseState {
	st := &leaseState{Store: s.Store, Held: true, HWMMS: l.Limit(), HeadroomMS: l.Limit() - g.Now().UnixMilli()}
	if err := l.Err(); err != nil {
		st.Held, st.Error = false, redactSecrets(err.Error())
		s.recent.seen("lease", err, now)
	}
	if r, ok := l.(renewalErrer); ok && st.Held {
		if err := r.RenewalError(); err != nil {
			st.RenewalError = redactSecrets(err.Error())
			s.recent.seen("lease renewal", err, now)
		}
	}
	if d, ok := l.(leaseDetail); ok {
		st.LeaseID, st.TTLMS, st.Renewals, st.StartHWMMS = d.Token(), d.TTL().Milliseconds(), d.Renewals(), d.Start()
		if r := d.Renewed(); !r.IsZero() {
			st.RenewedMS = r.UnixMilli()
			if st.Held {
				st.ExpiresInMS = max(0, r.Add(d.TTL()).Sub(now).Milliseconds())
			}
		}
	}
	return st
}

func (s *service) tagOf(st segment.Stats, now time.Time) tagState {
	t := tagState{Tag: st.Tag, InMemory: st.Left + st.Prefetched, Left: st.Left, Prefetched: st.Prefetched,
		ConfiguredStep: st.ConfiguredStep, Step: st.Step, Fetches: st.Fetches, Errors: st.Errors,
		Current:   rangeState{st.Current.Start, st.Current.End, st.Current.Delta},
		Next:      rangeState{st.Next.Start, st.Next.End, st.Next.Delta},
		LatencyMS: float64(st.Latency.Microseconds()) / 1000, Healthy: st.Err == nil}
	if !st.Fetched.IsZero() {
		t.FetchedMS = st.Fetched.UnixMilli()
	}
	if s.Segments.Opaque(st.Tag) {
		t.Opaque, t.Current, t.Next = true, rangeState{}, rangeState{}
	}
	if st.Err != nil {
		t.LastError = redactSecrets(st.Err.Error())
		s.recent.seen("segment "+st.Tag, st.Err, now)
	}
	return t
}

// status answers GET /v1/status.
func (h *handler) status(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, h.svc.status(time.Now()))
}

// noteFailure records an error answered to a request for IDs when it is
// the node's (a 5xx), or a caller's that this node's operator acts on:
// a tag the store does not have (404 unknown_tag), which is a client
// configured with a tag nobody created, or a typo in one. Other errors
// of callers (a bad count, a refused token) are theirs alone.
func (s *service) noteFailure(err error) {
	code, name := status(err)
	switch {
	case errors.Is(err, context.Canceled):
	case code >= 500:
		s.recent.note("request", err, time.Now())
	case name == "unknown_tag":
		s.recent.note(sourceCaller, err, time.Now())
	}
}
