package server

import (
	"context"
	"fmt"
	"net/http"
	"strconv"

	"github.com/firn-id/firn/api"
)

// nextSnowflake issues one snowflake ID: in opaque mode, its image under
// the permutation.
func (s *service) nextSnowflake(ctx context.Context) (int64, error) {
	id, err := s.generator().Next(ctx)
	if err != nil || s.Opaque == nil {
		return id, err
	}
	return s.conceal(id)
}

// nextSnowflakeN fills dst with snowflake IDs, in opaque mode permuted.
// An ID the permutation refuses fails the call: no plain ID ever leaves
// a server in opaque mode.
func (s *service) nextSnowflakeN(ctx context.Context, dst []int64) (int, error) {
	n, err := s.generator().NextN(ctx, dst)
	if s.Opaque == nil {
		return n, err
	}
	if perr := s.Opaque.EncodeN(dst[:n]); perr != nil {
		return 0, fmt.Errorf("server: opaque IDs: %w", perr)
	}
	return n, err
}

func (s *service) conceal(id int64) (int64, error) {
	y, err := s.Opaque.Encode(uint64(id))
	if err != nil {
		return 0, fmt.Errorf("server: opaque ID of %d: %w", id, err)
	}
	return int64(y), nil
}

// reveal undoes opaque mode's permutation and answers as decode does,
// with the plain ID beside the opaque one.
func (h *handler) reveal(w http.ResponseWriter, r *http.Request) {
	if h.svc.Opaque == nil {
		writeError(w, badRequest("this server's IDs are not opaque: decode them with GET /v1/snowflake/decode/{id}"))
		return
	}
	id, err := pathID(r)
	if err != nil {
		writeError(w, err)
		return
	}
	plain, err := h.svc.Opaque.Decode(id)
	if err != nil {
		writeError(w, badRequest(fmt.Sprintf("ID %d does not fit the %d-bit opaque space", id, h.svc.Opaque.Bits())))
		return
	}
	h.writeDecoded(w, plain, strconv.FormatUint(id, 10))
}

// RevealLookupRate bounds the reveals per second of one client address
// (burst as many) for tags the allocator has not loaded: each may ask the
// store whether the tag exists. Reveals of loaded tags are not counted.
const RevealLookupRate = 100

// revealTag undoes the permutation of an opaque tag's ID: 404 for a tag
// the store does not have, 400 for a plain one. The allocator decides
// from the tags it holds and, for the others, from the store, asked once
// at a time per tag and not again for a while after "unknown"
// (segment.UnknownFor); a client's questions of the store are rate
// limited, so names made up by the thousand cost the store little.
func (h *handler) revealTag(w http.ResponseWriter, r *http.Request) {
	if h.svc.Segments == nil {
		writeError(w, h.svc.segmentsOff())
		return
	}
	tag := r.PathValue("tag")
	id, err := pathID(r)
	if err != nil {
		writeError(w, err)
		return
	}
	if !h.svc.Segments.Loaded(tag) && !h.svc.lookups.allow(r.RemoteAddr) {
		refuse(w, &refusal{status: http.StatusTooManyRequests, retryAfter: 1,
			message: fmt.Sprintf("over %d reveals per second of tags this server has not served, from one client address", RevealLookupRate)})
		return
	}
	ctx := h.bounded(r)
	defer ctx.release()
	plain, err := h.svc.Segments.Reveal(ctx, tag, id)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, api.Revealed{Tag: tag, ID: plain, OpaqueID: strconv.FormatUint(id, 10)})
}
