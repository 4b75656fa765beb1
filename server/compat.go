package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"

	"github.com/firn-id/firn/segment"
)

// The routes of Meituan Leaf and Didi Tinyid, so that their users can
// switch by changing a host name. Success answers as the original does;
// failure answers with a real HTTP status (docs/migration.md lists every
// difference).

// leafMethods are the methods Leaf's routes answer: every method Spring's
// @RequestMapping takes without a method named (HEAD comes with GET).
var leafMethods = []string{"GET", "POST", "PUT", "PATCH", "DELETE"}

// maxTinyidBatch is Tinyid's default batch limit.
const maxTinyidBatch = 100_000

func (h *handler) compatRoutes() {
	// Leaf maps these with @RequestMapping and no method (LeafController
	// lines 25 and 30, LeafMonitorController line 82): any method.
	for _, m := range leafMethods {
		h.route(m+" /api/segment/get/{key}", tagInPath("key"), h.leafSegment)
		h.route(m+" /api/snowflake/get/{key}", snowflakeIDs, h.leafSnowflake)
		h.route(m+" /decodeSnowflakeId", needSnowflake, h.leafDecode)
	}
	for _, m := range []string{"GET", "POST"} {
		h.routeTinyid(m+" /tinyid/id/nextId", tinyidBizType(), false, h.tinyidNextID)
		h.routeTinyid(m+" /tinyid/id/nextIdSimple", tinyidBizType(), true, h.tinyidNextIDSimple)
		h.routeTinyid(m+" /tinyid/id/nextSegmentId", tinyidRange(), false, h.tinyidNextSegment)
		h.routeTinyid(m+" /tinyid/id/nextSegmentIdSimple", tinyidRange(), true, h.tinyidNextSegmentSimple)
	}
}

// leafError answers a Leaf route's failure: the status, and the message
// as plain text.
func leafError(w http.ResponseWriter, err error) {
	code, name := status(err)
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(code)
	_, _ = fmt.Fprintln(w, message(name, err))
}

func leafID(w http.ResponseWriter, id int64) {
	w.Header()["Content-Type"] = textType
	_, _ = w.Write(strconv.AppendInt(make([]byte, 0, 20), id, 10))
}

func (h *handler) leafSegment(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := h.ctx(r)
	defer cancel()
	tag := r.PathValue("key")
	id, err := h.svc.Segments.Next(ctx, tag)
	if err != nil {
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
	l := h.svc.generator().Layout()
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

// tinyidResponse is Tinyid's envelope: data, code (200 on success) and
// message.
type tinyidResponse struct {
	Data    any    `json:"data"`
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// tinyidError answers a Tinyid route's failure: the HTTP status, and
// Tinyid's envelope with its system error code 6.
func tinyidError(w http.ResponseWriter, err error) {
	code, _ := status(err)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(tinyidResponse{Code: 6, Message: err.Error()})
}

// tinyidParams reads bizType and batchSize from the form parseTinyidForm
// read before the token was checked (the token itself by
// service.checkTinyid).
func tinyidParams(r *http.Request) (tag string, batch int, err error) {
	tag = tinyidParam(r, "bizType")
	if tag == "" {
		return "", 0, badRequest("bizType is required")
	}
	if err := checkTag(tag); err != nil {
		return "", 0, err
	}
	batch = 1
	if s := tinyidParam(r, "batchSize"); s != "" {
		batch, err = strconv.Atoi(s)
		if err != nil || batch < 1 || batch > maxTinyidBatch {
			return "", 0, badRequest(fmt.Sprintf("batchSize %q: want 1 to %d", s, maxTinyidBatch))
		}
	}
	return tag, batch, nil
}

func (h *handler) tinyidIDs(r *http.Request) ([]int64, error) {
	tag, batch, err := tinyidParams(r)
	if err != nil {
		return nil, err
	}
	ctx, cancel := h.ctx(r)
	defer cancel()
	ids := make([]int64, batch)
	if _, err := h.svc.Segments.NextN(ctx, tag, ids); err != nil {
		return nil, err
	}
	h.segmentIssued(tag, batch)
	return ids, nil
}

// tinyidNextID answers Tinyid's envelope {"data":[IDs],"code":200,
// "message":""}, written as encoding/json writes tinyidResponse, without
// its reflection.
func (h *handler) tinyidNextID(w http.ResponseWriter, r *http.Request) {
	ids, err := h.tinyidIDs(r)
	if err != nil {
		tinyidError(w, err)
		return
	}
	w.Header()["Content-Type"] = jsonType
	b := append(make([]byte, 0, 40+21*len(ids)), `{"data":`...)
	b = appendIDList(append(b, '['), ids)
	_, _ = w.Write(append(b, `],"code":200,"message":""}`+"\n"...))
}

func (h *handler) tinyidNextIDSimple(w http.ResponseWriter, r *http.Request) {
	ids, err := h.tinyidIDs(r)
	if err != nil {
		leafError(w, err)
		return
	}
	w.Header()["Content-Type"] = textType
	_, _ = w.Write(appendIDList(make([]byte, 0, 21*len(ids)), ids))
}

// appendIDList appends ids to b, separated by commas.
func appendIDList(b []byte, ids []int64) []byte {
	for i, id := range ids {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, id, 10)
	}
	return b
}

// tinyidSegment is Tinyid's SegmentId as its client reads it: the client
// issues currentId+delta, currentId+2·delta, … up to maxId, and fetches the
// next segment once it passes loadingId.
type tinyidSegment struct {
	CurrentID int64 `json:"currentId"`
	LoadingID int64 `json:"loadingId"`
	MaxID     int64 `json:"maxId"`
	Delta     int64 `json:"delta"`
	Remainder int64 `json:"remainder"`
}

// tinyidNewSegment reserves a fresh range in the store for the asking
// client alone — never a slice of this server's buffers.
func (h *handler) tinyidNewSegment(r *http.Request) (tinyidSegment, error) {
	tag, _, err := tinyidParams(r)
	if err != nil {
		return tinyidSegment{}, err
	}
	if h.svc.SegmentStore == nil {
		return tinyidSegment{}, badRequest("this server hands out no segments")
	}
	ctx, cancel := h.ctx(r) // a store read and write on every call
	defer cancel()
	info, err := h.svc.SegmentStore.Tag(ctx, tag)
	if err == nil {
		err = h.svc.Segments.CheckHandOut(tag, info.Opaque)
	}
	if err != nil {
		return tinyidSegment{}, err
	}
	step := min(max(info.Step, 1), segment.StepLimit)
	rg, err := h.svc.SegmentStore.Reserve(ctx, tag, step)
	if err == nil {
		err = rg.Check() // the client issues from it: the allocator's own checks
	}
	if err == nil {
		err = h.svc.Segments.CheckHandOut(tag, rg.Opaque)
	}
	if err != nil {
		return tinyidSegment{}, err
	}
	return segmentForTinyid(rg, step), nil
}

func segmentForTinyid(rg segment.Range, step int64) tinyidSegment {
	// Tinyid's numbers (DbSegmentIdServiceImpl.convert): currentId is the
	// counter before the reservation, maxId after it, loadingId a fifth of
	// the step past currentId (LOADING_PERCENT = 20), for any delta; the
	// client moves currentId into its class itself (SegmentId.init). The
	// range is (currentId, maxId]; step is at most StepLimit, so step·20
	// cannot overflow.
	//
	// A store that reserved less than step must not have the client start
	// below the range: currentId is never below the ID of the range's
	// class just before its start, so the client's first ID is the
	// range's first.
	maxID := rg.End - 1
	cur := max(maxID-step, rg.Start-rg.Delta)
	return tinyidSegment{CurrentID: cur, LoadingID: min(cur+step*20/100, maxID), MaxID: maxID,
		Delta: rg.Delta, Remainder: ((rg.Start % rg.Delta) + rg.Delta) % rg.Delta}
}

func (h *handler) tinyidNextSegment(w http.ResponseWriter, r *http.Request) {
	seg, err := h.tinyidNewSegment(r)
	if err != nil {
		tinyidError(w, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(tinyidResponse{Data: seg, Code: 200})
}

func (h *handler) tinyidNextSegmentSimple(w http.ResponseWriter, r *http.Request) {
	seg, err := h.tinyidNewSegment(r)
	if err != nil {
		leafError(w, err)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = fmt.Fprintf(w, "%d,%d,%d,%d,%d", seg.CurrentID, seg.LoadingID, seg.MaxID, seg.Delta, seg.Remainder)
}
