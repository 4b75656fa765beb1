package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
)

// The routes of Meituan Leaf and Didi Tinyid, so that their users can
// switch by changing a host name. Success answers as the original does;
// failure answers with a real HTTP status (docs/migration.md lists every
// difference).

// leafMethods are the methods Leaf's routes answer: every method Spring's
// @RequestMapping takes without a method named (HEAD comes with GET).
var leafMethods = []string{"GET", "POST", "PUT", "PATCH", "DELETE"}

func (h *handler) compatRoutes() {
	// Leaf maps these with @RequestMapping and no method (LeafController
	// lines 25 and 30, LeafMonitorController line 82): any method. Its
	// two ID routes fail through one method (LeafController lines 35-45,
	// Meituan-Dianping/Leaf 86a6441), so every failure of a Leaf route,
	// refusals and a mode that is off included, takes one form: leafError.
	// Decoding needs the layout alone, not a node: the scope of firn's own
	// decode route.
	for _, m := range leafMethods {
		h.routeParsed(m+" /api/segment/get/{key}", tagInPath("key"), nil, h.leafSegment).leaf()
		h.routeParsed(m+" /api/snowflake/get/{key}", snowflakeIDs, nil, h.leafSnowflake).leaf()
		h.routeParsed(m+" /decodeSnowflakeId", needDecode, nil, h.leafDecode).leaf()
	}
	h.tinyidRoutes()
}

// leaf makes rt answer its failures as Leaf's routes do.
func (rt *routed) leaf() {
	rt.fail, rt.refused = leafError, refuseLeaf
}

// leafError answers a Leaf route's failure: the status, and the message
// as plain text, which the browser must not sniff (it may quote the
// request).
func leafError(w http.ResponseWriter, err error) {
	code, name := status(err)
	leafText(w, code, message(name, err))
}

// refuseLeaf answers a refusal on a Leaf route as leafError does.
func refuseLeaf(w http.ResponseWriter, no *refusal) {
	if no.retryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(no.retryAfter))
	}
	leafText(w, no.status, no.message)
}

func leafText(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	_, _ = fmt.Fprintln(w, msg)
}

func leafID(w http.ResponseWriter, id int64) {
	w.Header()["Content-Type"] = textType
	_, _ = w.Write(strconv.AppendInt(make([]byte, 0, 20), id, 10))
}

func (h *handler) leafSegment(w http.ResponseWriter, r *http.Request) {
	ctx := h.bounded(r)
	defer ctx.release()
	tag := r.PathValue("key")
	id, err := h.svc.Segments.Next(ctx, tag)
	if err != nil {
		h.svc.noteFailure(err)
		leafError(w, err)
		return
	}
	h.segmentIssued(tag, 1)
	leafID(w, id)
}

// leafSnowflake ignores its key, as Leaf does. Like firn's own snowflake
// routes it waits at most the generator's MaxWait, never on a store.
func (h *handler) leafSnowflake(w http.ResponseWriter, r *http.Request) {
	id, err := h.svc.nextSnowflake(r.Context())
	if err != nil {
		leafError(w, err)
		return
	}
	h.snowflakeIssued(1)
	leafID(w, id)
}

// leafDecode answers as Leaf's decodeSnowflakeId: timestamp (Unix ms and
// the time, here in UTC), workerId (the whole node part) and sequenceId,
// all strings.
func (h *handler) leafDecode(w http.ResponseWriter, r *http.Request) {
	s := r.URL.Query().Get("snowflakeId")
	id, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		leafError(w, badRequest(fmt.Sprintf("snowflakeId %q is not a non-negative decimal number", s)))
		return
	}
	if h.svc.Opaque != nil {
		leafError(w, ErrOpaqueIDs)
		return
	}
	l, _ := h.svc.layout() // the route answers only with a layout
	p, err := l.Decompose(id)
	if err != nil {
		leafError(w, badRequest(fmt.Sprintf("snowflakeId %d does not fit the %d-bit %s layout", id, l.Bits(), l.Name)))
		return
	}
	ms := p.Time.UnixMilli()
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]string{
		"timestamp":  fmt.Sprintf("%d(%s)", ms, p.Time.UTC().Format("2006-01-02 15:04:05.000")),
		"workerId":   strconv.FormatUint(p.Node, 10),
		"sequenceId": strconv.FormatUint(p.Sequence, 10),
	})
}
