package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/firn-id/firn/segment"
)

// Didi Tinyid's routes (compat.go has Leaf's): the request read within
// bounds, the token checked with Tinyid's token= or firn's credentials,
// the answers in Tinyid's shapes (docs/migration.md).

// maxTinyidBatch is Tinyid's default batch limit.
const maxTinyidBatch = 100_000

// tinyidRoutes registers Didi Tinyid's routes, GET and POST as Tinyid
// takes them.
func (h *handler) tinyidRoutes() {
	for _, m := range []string{"GET", "POST"} {
		h.routeTinyid(m+" /tinyid/id/nextId", tinyidBizType(), false, h.tinyidNextID)
		h.routeTinyid(m+" /tinyid/id/nextIdSimple", tinyidBizType(), true, h.tinyidNextIDSimple)
		h.routeTinyid(m+" /tinyid/id/nextSegmentId", tinyidRange(), false, h.tinyidNextSegment)
		h.routeTinyid(m+" /tinyid/id/nextSegmentIdSimple", tinyidRange(), true, h.tinyidNextSegmentSimple)
	}
}

// routeTinyid registers a Tinyid route of scope sc (tinyidBizType or
// tinyidRange): bizType and token read from the bounded form, Tinyid's
// token= checked with firn's credentials (service.checkTinyid), refusals
// answered in Tinyid's shape (empty on the Simple routes).
func (h *handler) routeTinyid(pattern string, sc scope, simple bool, fn http.HandlerFunc) {
	h.routeParsed(pattern, sc, parseTinyidForm, fn).refused = refuseTinyid(simple)
}

// tinyidBizType needs tag:BIZTYPE for the IDs of Tinyid's bizType
// parameter (read within bounds by the route's parse step), which
// Tinyid's token= parameter may grant as well as firn's credentials.
func tinyidBizType() scope {
	return scope{kind: scopeTag, ids: true, tinyid: true, tag: bizType}
}

// tinyidRange needs range:BIZTYPE, a grant of its own: Tinyid's
// nextSegmentId routes write to the store on every call.
func tinyidRange() scope {
	return scope{kind: scopeRange, ids: true, tinyid: true, tag: bizType}
}

func bizType(r *http.Request) string { return tinyidParam(r, "bizType") }

// maxTinyidForm bounds a Tinyid form body: it carries bizType, token and
// batchSize.
const maxTinyidForm = 64 << 10

// parseTinyidForm reads the parameters of a Tinyid request — bizType,
// token, batchSize — into r.Form, from the query string and, for a body,
// only from an application/x-www-form-urlencoded one of at most 64 KiB.
// Anything else (multipart above all, which r.FormValue would spool to
// disk) is refused before the token is checked.
func parseTinyidForm(w http.ResponseWriter, r *http.Request) error {
	if (r.Body == nil || r.Body == http.NoBody) && parseTinyidQuery(r) {
		return nil
	}
	if r.Body != nil && r.Body != http.NoBody && r.Header.Get("Content-Type") != "" {
		ct, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
		if err != nil || ct != "application/x-www-form-urlencoded" {
			return fmt.Errorf("%w, not %q", ErrUnsupportedBody, r.Header.Get("Content-Type"))
		}
		r.Body = http.MaxBytesReader(w, r.Body, maxTinyidForm)
	}
	if err := r.ParseForm(); err != nil {
		var mb *http.MaxBytesError
		if errors.As(err, &mb) {
			return fmt.Errorf("%w: the form is over %d bytes", ErrBodyTooLarge, mb.Limit)
		}
		return badRequest(fmt.Sprintf("the parameters: %v", err))
	}
	return nil
}

// parseTinyidQuery checks the query string of a Tinyid request without a
// body and leaves r.Form unset: tinyidParam reads the query string then,
// with no map built (ParseForm's maps were a third of nextIdSimple's
// time, BenchmarkRoutes). A query url.ParseQuery would refuse (a
// semicolon, a bad escape) returns false, for ParseForm to say why.
func parseTinyidQuery(r *http.Request) bool {
	q := r.URL.RawQuery
	if strings.IndexByte(q, ';') >= 0 {
		return false
	}
	for q != "" {
		var kv string
		kv, q, _ = strings.Cut(q, "&")
		if strings.IndexByte(kv, '%') < 0 {
			continue
		}
		k, v, _ := strings.Cut(kv, "=")
		if _, err := url.QueryUnescape(k); err != nil {
			return false
		}
		if _, err := url.QueryUnescape(v); err != nil {
			return false
		}
	}
	return true
}

// tinyidParam returns the first value of a Tinyid parameter, as
// r.Form.Get would: from r.Form when parseTinyidForm read a body, else
// from the query string parseTinyidQuery checked.
func tinyidParam(r *http.Request, key string) string {
	if r.Form != nil {
		return r.Form.Get(key)
	}
	for q := r.URL.RawQuery; q != ""; {
		var kv string
		kv, q, _ = strings.Cut(q, "&")
		k, v, _ := strings.Cut(kv, "=")
		if kv == "" || unescape(k) != key {
			continue
		}
		return unescape(v)
	}
	return ""
}

// unescape is url.QueryUnescape of a part parseTinyidQuery checked.
func unescape(s string) string {
	if strings.IndexByte(s, '%') < 0 && strings.IndexByte(s, '+') < 0 {
		return s
	}
	u, _ := url.QueryUnescape(s)
	return u
}

// TinyidTokens holds Didi Tinyid's tokens (its tiny_id_token table):
// which bizTypes each token may use. sqlstore.TinyidTokens is one.
type TinyidTokens interface {
	// Allows reports whether token may use bizType, as Tinyid's
	// canVisit, and whether token is known at all (a known token for
	// another bizType is 403, an unknown one 401). ctx bounds any read
	// of the table a miss causes.
	Allows(ctx context.Context, bizType, token string) (allowed, known bool)
}

// tinyidTokenError is Tinyid's ErrorCode.TOKEN_ERR: code 5, "token is error".
var tinyidTokenError = tinyidResponse{Code: 5, Message: "token is error"}

// checkTinyid checks a Tinyid route's request: it passes with Tinyid's
// token= for its bizType, with firn's bearer token holding the route's
// scope (tag:BIZTYPE, or range:BIZTYPE on nextSegmentId), or with an
// anonymous grant of it. Without Tinyid's tokens the route is checked as
// every other route is. The second result says whether an anonymous
// grant decided.
func (s *service) checkTinyid(sc scope, r *http.Request) (*refusal, bool) {
	if s.TinyidTokens == nil {
		return s.Auth.check(sc, r)
	}
	bizType, token := tinyidParam(r, "bizType"), tinyidParam(r, "token")
	ctx, cancel := context.WithTimeout(r.Context(), s.Timeout)
	defer cancel()
	allowed, known := s.TinyidTokens.Allows(ctx, bizType, token)
	if allowed {
		return nil, false
	}
	if _, header := r.Header["Authorization"]; header && s.Auth.Enabled() {
		return s.Auth.check(sc, r) // firn's own token, in its one place
	}
	if no, granted := s.Auth.anonymousGrant(sc, sc.need(r), r); granted {
		return no, true
	}
	if known {
		return &refusal{status: http.StatusForbidden, message: "the token does not cover this bizType"}, false
	}
	return &refusal{status: http.StatusUnauthorized, message: "a token for this bizType is required"}, false
}

// refuseTinyid answers a Tinyid route's refusal as Tinyid does, with an
// honest status: Tinyid's body {"data":null,"code":5,"message":"token is
// error"} on nextId and nextSegmentId, an empty body on the Simple
// routes. A token over its rate (429) gets code 6 and the reason.
func refuseTinyid(simple bool) func(w http.ResponseWriter, no *refusal) {
	return func(w http.ResponseWriter, no *refusal) {
		if no.retryAfter > 0 {
			w.Header().Set("Retry-After", strconv.Itoa(no.retryAfter))
		}
		if simple {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			w.WriteHeader(no.status)
			return
		}
		body := tinyidTokenError
		if no.status == http.StatusTooManyRequests {
			body = tinyidResponse{Code: 6, Message: no.message}
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(no.status)
		_ = json.NewEncoder(w).Encode(body)
	}
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
	ctx := h.bounded(r)
	defer ctx.release()
	ids := make([]int64, batch)
	if _, err := h.svc.Segments.NextN(ctx, tag, ids); err != nil {
		h.svc.noteFailure(err)
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
		h.svc.noteFailure(err)
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
