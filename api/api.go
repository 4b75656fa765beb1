// Package api holds the JSON bodies of firn's HTTP API (/v1) and the
// header that says a batch's order (Order), each defined once: package
// server writes them and package client reads them, so a field renamed on
// one side is renamed on the other. It imports only the
// standard library and the domain packages whose values the bodies carry,
// so both may import it: client never imports server.
package api

import (
	"encoding/hex"
	"strconv"

	"github.com/firn-id/firn/segment"
	"github.com/firn-id/firn/snowflake"
	"github.com/firn-id/firn/wide"
)

// TimeFormat is the form of every time the API writes: UTC to the
// millisecond.
const TimeFormat = "2006-01-02T15:04:05.000Z"

// ErrorBody is every refusal's body: {"error":{"code":…,"message":…}}.
type ErrorBody struct {
	Error ErrorDetail `json:"error"`
}

// ErrorDetail is a refusal's code (such as "unknown_tag") and message.
type ErrorDetail struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Info is GET /v1/snowflake/info: the layout and node a server issues
// snowflake IDs with, and the most IDs one batch may ask for.
type Info struct {
	// Layout is the layout's description (snowflake.Layout.String).
	Layout string `json:"layout"`
	// Fingerprint identifies the layout (snowflake.Layout.Fingerprint).
	Fingerprint string `json:"fingerprint"`
	// Bits identifies the IDs the layout composes, without the names or
	// split of its node fields (snowflake.Layout.BitsFingerprint).
	Bits     string `json:"bits,omitempty"`
	Node     uint64 `json:"node"`
	MaxBatch int    `json:"max_batch"`
	// Opaque is the permutation's fingerprint in opaque mode; empty
	// otherwise.
	Opaque string `json:"opaque,omitempty"`
}

// Decoded is an ID taken apart (GET /v1/snowflake/decode/{id} and
// /reveal/{id}, firn parse --json). IDs are strings: JavaScript's numbers
// lose 64-bit integers.
type Decoded struct {
	ID       string `json:"id"`
	UnixMS   int64  `json:"unix_ms"`
	Time     string `json:"time"`
	Tick     uint64 `json:"tick"`
	Node     Node   `json:"node"`
	Sequence uint64 `json:"sequence"`
	// OpaqueID is the ID given, when it was revealed with the key.
	OpaqueID string `json:"opaque_id,omitempty"`
}

// NewDecoded is the body of id, whose parts are p.
func NewDecoded(id uint64, p snowflake.Parts) Decoded {
	return Decoded{ID: strconv.FormatUint(id, 10), UnixMS: p.Time.UnixMilli(), Time: p.Time.UTC().Format(TimeFormat),
		Tick: p.Tick, Node: nodeFields(p), Sequence: p.Sequence}
}

// nodeFields is p's node fields, never nil: a layout without node bits
// writes "node":{}.
func nodeFields(p snowflake.Parts) Node { return append(Node{}, p.Fields...) }

// Guess is GET /v1/snowflake/guess/{id} and firn parse --guess --json:
// every preset's reading of an ID of unknown origin, the plausible ones
// first (snowflake.Guess).
type Guess struct {
	ID string `json:"id"`
	// Ambiguous is true when two or more presets are plausible.
	Ambiguous  bool        `json:"ambiguous"`
	Candidates []Candidate `json:"candidates"`
}

// Candidate is one preset's reading of the ID; the parts are there when
// the ID fits the preset's width.
type Candidate struct {
	Layout    string  `json:"layout"`
	Plausible bool    `json:"plausible"`
	Reason    string  `json:"reason,omitempty"`
	UnixMS    *int64  `json:"unix_ms,omitempty"`
	Time      string  `json:"time,omitempty"`
	Tick      *uint64 `json:"tick,omitempty"`
	Node      Node    `json:"node,omitempty"`
	Sequence  *uint64 `json:"sequence,omitempty"`
}

// NewGuess is the body of snowflake.Guess's ranking of id.
func NewGuess(id uint64, ranked []snowflake.Candidate) Guess {
	out := Guess{ID: strconv.FormatUint(id, 10), Ambiguous: len(snowflake.Plausible(ranked)) > 1, Candidates: make([]Candidate, len(ranked))}
	for i, c := range ranked {
		j := Candidate{Layout: c.Layout.Name, Plausible: c.Plausible, Reason: c.Reason}
		if !c.Parts.Time.IsZero() {
			p := c.Parts
			ms := p.Time.UnixMilli()
			j.UnixMS, j.Time, j.Tick, j.Sequence, j.Node = &ms, c.Layout.FormatTime(p.Time), &p.Tick, &p.Sequence, nodeFields(p)
		}
		out.Candidates[i] = j
	}
	return out
}

// Tag is a segment tag as GET /v1/segments lists it and POST /v1/segments
// answers. Next is a string: JavaScript's numbers lose 64-bit integers.
type Tag struct {
	Tag         string `json:"tag"`
	Next        int64  `json:"next,string"`
	Step        int64  `json:"step"`
	Delta       int64  `json:"delta"`
	Remainder   int64  `json:"remainder"`
	Description string `json:"description"`
	// Opaque is the permutation the tag's IDs pass through, as the store
	// records it (segment.Recorded); empty for plain IDs.
	Opaque string `json:"opaque,omitempty"`
}

// NewTag is the body of a stored tag.
func NewTag(t segment.TagInfo) Tag {
	return Tag{Tag: t.Tag, Next: t.Next, Step: t.Step, Delta: t.Delta, Remainder: t.Remainder, Description: t.Description, Opaque: t.Opaque}
}

// Info is the tag as a segment store describes it.
func (t Tag) Info() segment.TagInfo {
	return segment.TagInfo{Tag: t.Tag, Next: t.Next, Step: t.Step, Delta: t.Delta, Remainder: t.Remainder, Description: t.Description, Opaque: t.Opaque}
}

// Tags is GET /v1/segments.
type Tags struct {
	Tags []Tag `json:"tags"`
}

// CreateTag is the body of POST /v1/segments. First is a string, and
// absent means 1.
type CreateTag struct {
	Tag         string `json:"tag"`
	First       *int64 `json:"first,string"`
	Step        int64  `json:"step"`
	Description string `json:"description"`
}

// SetStep is the body of PATCH /v1/segments/{tag}.
type SetStep struct {
	Step int64 `json:"step"`
}

// TagStep is the answer of PATCH /v1/segments/{tag}: the tag's new step.
type TagStep struct {
	Tag  string `json:"tag"`
	Step int64  `json:"step"`
}

// Advance is the body of POST /v1/segments/{tag}/advance: the least next
// ID, as a string.
type Advance struct {
	To int64 `json:"to,string"`
}

// Advanced is the answer of POST /v1/segments/{tag}/advance: the tag's
// next ID afterwards, which may be past the one asked for.
type Advanced struct {
	Tag  string `json:"tag"`
	Next int64  `json:"next,string"`
}

// Revealed is GET /v1/segments/{tag}/reveal/{id}: the plain ID behind an
// opaque tag's ID.
type Revealed struct {
	Tag      string `json:"tag"`
	ID       int64  `json:"id,string"`
	OpaqueID string `json:"opaque_id"`
}

// WideDecoded is a UUID, ULID, ObjectId, KSUID or xid taken apart (GET
// /v1/wide/decode/{id}, firn parse --json). Firn is the slot of a UUIDv7
// or ULID that the layout can have made, absent otherwise.
type WideDecoded struct {
	ID     string            `json:"id"` // as given
	Form   string            `json:"form"`
	Hex    string            `json:"hex"`
	UnixMS *int64            `json:"unix_ms,omitempty"`
	Time   string            `json:"time,omitempty"`
	Fields map[string]string `json:"fields"`
	Firn   *Decoded          `json:"firn,omitempty"`
}

// NewWideDecoded is the body of id, given as arg; firn, when not nil, is
// its slot in the layout.
func NewWideDecoded(arg string, id wide.ID, firn *snowflake.Parts) WideDecoded {
	d := WideDecoded{ID: arg, Form: string(id.Form), Hex: hex.EncodeToString(id.Bytes), Fields: make(map[string]string, len(id.Fields))}
	if !id.Time.IsZero() {
		ms := id.Time.UnixMilli()
		d.UnixMS, d.Time = &ms, id.Time.UTC().Format(TimeFormat)
	}
	for _, f := range id.Fields {
		d.Fields[f.Name] = f.Value
	}
	if firn != nil {
		p := NewDecoded(firn.ID, *firn)
		d.Firn = &p
	}
	return d
}
