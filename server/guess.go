package server

import (
	"net/http"
	"strconv"
	"time"

	"github.com/firn-id/firn/snowflake"
)

// guessed is snowflake.Guess's answer as JSON: every preset, the
// plausible ones first.
type guessed struct {
	ID         string      `json:"id"`
	Ambiguous  bool        `json:"ambiguous"`
	Candidates []candidate `json:"candidates"`
}

// candidate is one preset's reading of the ID; the parts are there when
// the ID fits the preset's width.
type candidate struct {
	Layout    string            `json:"layout"`
	Plausible bool              `json:"plausible"`
	Reason    string            `json:"reason,omitempty"`
	UnixMS    *int64            `json:"unix_ms,omitempty"`
	Time      string            `json:"time,omitempty"`
	Tick      *uint64           `json:"tick,omitempty"`
	Node      map[string]uint64 `json:"node,omitempty"`
	Sequence  *uint64           `json:"sequence,omitempty"`
}

// guess ranks the presets an ID of unknown origin plausibly belongs to
// (snowflake.Guess), whatever layout the server issues.
func (h *handler) guess(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r)
	if err != nil {
		writeError(w, err)
		return
	}
	ranked := snowflake.Guess(id, time.Now())
	out := guessed{ID: strconv.FormatUint(id, 10), Ambiguous: len(snowflake.Plausible(ranked)) > 1, Candidates: make([]candidate, len(ranked))}
	for i, c := range ranked {
		out.Candidates[i] = candidate{Layout: c.Layout.Name, Plausible: c.Plausible, Reason: c.Reason}
		if c.Parts.Time.IsZero() {
			continue
		}
		p := c.Parts
		ms := p.Time.UnixMilli()
		j := &out.Candidates[i]
		j.UnixMS, j.Time, j.Tick, j.Sequence = &ms, c.Layout.FormatTime(p.Time), &p.Tick, &p.Sequence
		j.Node = map[string]uint64{}
		for _, f := range p.Fields {
			j.Node[f.Name] = f.Value
		}
	}
	writeJSON(w, http.StatusOK, out)
}
