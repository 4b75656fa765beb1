package server

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/firn-id/firn/api"
	"github.com/firn-id/firn/segment"
)

// Segment admin, behind the admin scope: create, list, change a step,
// advance. Nothing lowers a counter.

func (h *handler) adminRoutes() {
	h.route("GET /v1/segments", needAdmin, h.listTags)
	h.route("POST /v1/segments", needAdmin, h.createTag)
	h.route("PATCH /v1/segments/{tag}", needAdmin, h.setStep)
	h.route("POST /v1/segments/{tag}/advance", needAdmin, h.advanceTag)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func (h *handler) adminStore() (segment.Store, error) {
	switch {
	case h.svc.SegmentStore == nil && h.svc.SegmentsOff != "":
		return nil, h.svc.segmentsOff()
	case h.svc.SegmentStore == nil:
		return nil, badRequest("this server has no segment store")
	}
	return h.svc.SegmentStore, nil
}

func (h *handler) listTags(w http.ResponseWriter, r *http.Request) {
	s, err := h.adminStore()
	if err != nil {
		writeError(w, err)
		return
	}
	ctx, cancel := h.ctx(r)
	defer cancel()
	tags, err := s.Tags(ctx)
	if err != nil {
		writeError(w, err)
		return
	}
	out := api.Tags{Tags: make([]api.Tag, 0, len(tags))}
	for _, t := range tags {
		out.Tags = append(out.Tags, api.NewTag(t))
	}
	writeJSON(w, http.StatusOK, out)
}

func (h *handler) createTag(w http.ResponseWriter, r *http.Request) {
	var body api.CreateTag
	s, err := h.adminStore()
	if err == nil {
		err = decodeBody(r, &body)
	}
	switch {
	case err != nil:
	case body.Step < 1:
		err = badRequest(fmt.Sprintf("step %d: want at least 1", body.Step))
	}
	if err != nil {
		writeError(w, err)
		return
	}
	first := int64(1)
	if body.First != nil {
		first = *body.First
	}
	if first < 0 || first > segment.MaxEnd {
		writeError(w, badRequest(fmt.Sprintf("first %d: want 0 to %d", first, int64(segment.MaxEnd))))
		return
	}
	ctx, cancel := h.ctx(r)
	defer cancel()
	// The allocator records the permutation the tag's IDs pass through
	// here with the tag: an opaque tag is opaque from its first ID.
	if err := h.svc.Segments.CreateTag(ctx, body.Tag, first, body.Step, body.Description); err != nil {
		writeError(w, err)
		return
	}
	// The row as the store holds it: a set's or a site's class may start
	// above first.
	created := api.Tag{Tag: body.Tag, Next: first, Step: body.Step, Delta: 1, Description: body.Description}
	if info, err := s.Tag(ctx, body.Tag); err == nil {
		created = api.NewTag(info)
	}
	writeJSON(w, http.StatusCreated, created)
}

func (h *handler) setStep(w http.ResponseWriter, r *http.Request) {
	var body api.SetStep
	s, err := h.adminStore()
	if err == nil {
		err = decodeBody(r, &body)
	}
	if err == nil && body.Step < 1 {
		err = badRequest(fmt.Sprintf("step %d: want at least 1", body.Step))
	}
	if err != nil {
		writeError(w, err)
		return
	}
	ctx, cancel := h.ctx(r)
	defer cancel()
	tag := r.PathValue("tag")
	if err := s.SetStep(ctx, tag, body.Step); err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, api.TagStep{Tag: tag, Step: body.Step})
}

func (h *handler) advanceTag(w http.ResponseWriter, r *http.Request) {
	var body api.Advance
	s, err := h.adminStore()
	if err == nil {
		err = decodeBody(r, &body)
	}
	if err == nil && (body.To < 1 || body.To > segment.MaxEnd) {
		err = badRequest(fmt.Sprintf(`to: want the next ID, 1 to %d, as a string ("to":"5000")`, int64(segment.MaxEnd)))
	}
	if err != nil {
		writeError(w, err)
		return
	}
	ctx, cancel := h.ctx(r)
	defer cancel()
	tag := r.PathValue("tag")
	next, err := s.Advance(ctx, tag, body.To)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, api.Advanced{Tag: tag, Next: next})
}
