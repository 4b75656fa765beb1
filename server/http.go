package server

import (
	"context"
	_ "embed" // the OpenAPI document
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/firn-id/firn/api"
	"github.com/firn-id/firn/idtext"
	"github.com/firn-id/firn/internal/buildinfo"
)

// OpenAPI is the OpenAPI 3 document of the HTTP API, served at
// /v1/openapi.json.
//
//go:embed openapi.json
var OpenAPI []byte

// newHandler returns the HTTP handler of svc, or the error of a route
// registered without a scope.
func newHandler(svc *service) (*handler, error) {
	h := &handler{svc: svc, mux: http.NewServeMux(), metrics: newMetrics(svc)}
	issued := h.metrics.issued.WithLabelValues("snowflake", "")
	h.snowflakeIssued = func(n int) {
		issued.Add(float64(n))
		svc.rate.add(modeSnowflake, n)
	}
	metrics := h.metrics.handler()
	// In opaque mode the counters would tell what the IDs hide (how many
	// were issued): /metrics then needs scope metrics.
	metricsScope := open
	if svc.Opaque != nil || (svc.Segments != nil && svc.Segments.OpaqueTags()) {
		metricsScope = needMetrics
	}
	h.route("GET /metrics", metricsScope, metrics.ServeHTTP)
	h.route("GET /v1/snowflake/next", snowflakeIDs, h.snowflakeNext)
	h.route("GET /v1/snowflake/batch", snowflakeIDs, h.snowflakeBatch)
	h.route("GET /v1/snowflake/decode/{id}", needDecode, h.decode)
	h.route("GET /v1/snowflake/reveal/{id}", needReveal, h.reveal)
	h.route("GET /v1/snowflake/guess/{id}", needSnowflake, h.guess)
	h.route("GET /v1/snowflake/info", needSnowflake, h.info)
	h.route("GET /v1/status", needStatus, h.status)
	h.route("GET /v1/segments/{tag}/next", tagInPath("tag"), h.segmentNext)
	h.route("GET /v1/segments/{tag}/batch", tagInPath("tag"), h.segmentBatch)
	h.route("GET /v1/segments/{tag}/reveal/{id}", needReveal, h.revealTag)
	healthz := []byte("ok " + buildinfo.Read().String() + "\n")
	h.route("GET /healthz", open, func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(healthz) })
	h.route("GET /readyz", open, h.ready)
	h.route("GET /v1/openapi.json", open, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(OpenAPI)
	})
	h.wideRoutes()
	h.pageRoutes()
	h.compatRoutes()
	h.adminRoutes()
	h.mux.HandleFunc("/", h.unrouted)
	if err := errors.Join(h.errs...); err != nil {
		return nil, err
	}
	return h, nil
}

// route registers fn behind the token check of its scope (inside the
// mux, where the path's values are known).
func (h *handler) route(pattern string, sc scope, fn http.HandlerFunc) {
	h.routeParsed(pattern, sc, nil, fn)
}

// routeScopes returns every route the handler serves with the scope a token
// needs for it ("open", "snowflake", "admin", "reveal", "metrics", "tag"
// or "range"), for the tests that hold every route to its scope.
func (h *handler) routeScopes() map[string]string {
	names := map[scopeKind]string{scopeOpen: "open", scopeSnowflake: "snowflake", scopeAdmin: "admin", scopeReveal: "reveal",
		scopeMetrics: "metrics", scopeTag: "tag", scopeRange: "range", scopeStatus: "status", scopeDecode: "snowflake or status"}
	out := map[string]string{}
	for _, rt := range h.routes {
		out[strings.Replace(rt.pattern, "{$}", "", 1)] = names[rt.scope.kind]
	}
	return out
}

// routeParsed registers fn behind parse and then the token check: parse
// reads, within bounds, what the token check needs from the request
// (Tinyid's form). A {tag} or {key} path value longer than MaxTagBytes
// is refused before either.
func (h *handler) routeParsed(pattern string, sc scope, parse func(http.ResponseWriter, *http.Request) error, fn http.HandlerFunc) *routed {
	if err := sc.check(pattern); err != nil {
		h.errs = append(h.errs, err)
		return &routed{}
	}
	rt := &routed{h: h, pattern: pattern, scope: sc, parse: parse, fn: fn, observe: h.metrics.observer(pattern), refused: refuse, fail: writeError}
	if len(h.svc.Auth.Anonymous()) > 0 {
		// Only then: without anonymous scopes, no series of zeros.
		rt.anonymous = h.metrics.anonymousOf(pattern)
	}
	rt.serveFn = rt.serve
	h.routes = append(h.routes, rt)
	for _, name := range []string{"tag", "key"} {
		if strings.Contains(pattern, "{"+name+"}") {
			rt.tags = append(rt.tags, name)
		}
	}
	h.mux.Handle(pattern, rt)
	return rt
}

// routed is one route: the token check, the metrics, then the handler.
type routed struct {
	h       *handler
	pattern string
	scope   scope
	parse   func(http.ResponseWriter, *http.Request) error
	tags    []string // the path values that name a tag
	fn      http.HandlerFunc
	observe func(w http.ResponseWriter, r *http.Request, serve http.HandlerFunc)
	// serveFn is serve, bound once rather than on every request.
	serveFn http.HandlerFunc
	// refused answers a refusal: refuse, or the route's own shape
	// (Tinyid's, Leaf's).
	refused func(w http.ResponseWriter, no *refusal)
	// fail answers a request refused before its handler: writeError, or
	// the route's own shape (Leaf's).
	fail func(w http.ResponseWriter, err error)
	// anonymous counts the requests an anonymous grant decided.
	anonymous anonymousCounters
}

func (rt *routed) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rt.observe(w, r, rt.serveFn)
}

func (rt *routed) serve(w http.ResponseWriter, r *http.Request) {
	if rt.scope.ids {
		// An answer of IDs must never be stored: a proxy or browser told
		// to cache GETs would hand the same IDs to every later caller.
		w.Header().Set("Cache-Control", "no-store")
	}
	for _, name := range rt.tags {
		if err := checkTag(r.PathValue(name)); err != nil {
			rt.fail(w, err)
			return
		}
	}
	if rt.parse != nil {
		if err := rt.parse(w, r); err != nil {
			rt.fail(w, err)
			return
		}
	}
	no, anon := rt.check(r)
	if anon {
		rt.anonymous.count(no)
	}
	if no != nil {
		rt.refused(w, no)
		return
	}
	if err := rt.h.svc.modeOff(rt.scope.kind); err != nil {
		rt.fail(w, err)
		return
	}
	rt.fn(w, r)
}

// check returns why r may not use the route, or nil, and whether an
// anonymous grant decided.
func (rt *routed) check(r *http.Request) (*refusal, bool) {
	if rt.scope.tinyid {
		return rt.h.svc.checkTinyid(rt.scope, r)
	}
	return rt.h.svc.Auth.check(rt.scope, r)
}

// refuse answers a request its token may not make.
func refuse(w http.ResponseWriter, no *refusal) {
	code := map[int]string{http.StatusUnauthorized: "unauthorized", http.StatusForbidden: "forbidden",
		http.StatusTooManyRequests: "rate_limited"}[no.status]
	if no.retryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(no.retryAfter))
	}
	writeErrorCode(w, no.status, code, no.message)
}

type handler struct {
	svc     *service
	mux     *http.ServeMux
	routes  []*routed
	errs    []error // of routes registered without a valid scope
	metrics *metrics
	// snowflakeIssued counts snowflake IDs, its counter resolved once.
	snowflakeIssued func(n int)
	// tagIssued holds the issued-IDs counter of each tag that issued IDs
	// (segmentIssued).
	tagIssued sync.Map
}

// ServeHTTP routes r; unknown paths and wrong methods get the JSON error
// shape too. Every request passes here: its body is capped at MaxBody
// (413), and a panic anywhere below is answered 500 and logged.
func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	defer h.recoverHTTP(w, r)
	if !limitBody(w, r, h.svc.maxBody()) {
		return
	}
	h.mux.ServeHTTP(w, r)
}

// unrouted answers what no route takes: 405 with Allow when the path
// exists for other methods, 404 otherwise.
func (h *handler) unrouted(w http.ResponseWriter, r *http.Request) {
	var allow []string
	for _, m := range []string{"GET", "POST", "PATCH"} {
		probe := r.Clone(r.Context())
		probe.Method = m
		if _, pattern := h.mux.Handler(probe); pattern != "/" && pattern != "" {
			allow = append(allow, m)
		}
	}
	if len(allow) > 0 {
		w.Header().Set("Allow", strings.Join(allow, ", "))
		writeErrorCode(w, http.StatusMethodNotAllowed, "method_not_allowed", fmt.Sprintf("%s is not allowed on %s", r.Method, r.URL.Path))
		return
	}
	writeErrorCode(w, http.StatusNotFound, "not_found", fmt.Sprintf("no route %s", r.URL.Path))
}

// ctx is r's context bounded by the service's Timeout, for a call that
// may wait on a store.
func (h *handler) ctx(r *http.Request) (context.Context, context.CancelFunc) {
	return context.WithTimeout(r.Context(), h.svc.Timeout)
}

// count reads ?count=, 1..MaxBatch.
func (h *handler) count(r *http.Request) (int, error) {
	s := r.URL.Query().Get("count")
	if s == "" {
		return 0, badRequest("count is required: ?count=N, 1 to " + strconv.Itoa(h.svc.MaxBatch))
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > h.svc.MaxBatch {
		return 0, badRequest(fmt.Sprintf("count %q: want a whole number from 1 to %d", s, h.svc.MaxBatch))
	}
	return n, nil
}

// idFormat is how IDs are written: kind "string" (default), "number" or
// "text", and their encoding (idtext: decimal by default, base62 or
// base32), which numbers cannot have.
type idFormat struct {
	kind string
	enc  idtext.Encoding
}

// format reads ?format= and ?encoding=.
func format(r *http.Request) (idFormat, error) {
	var f, e string
	if r.URL.RawQuery != "" { // parsing an empty query still allocates
		q := r.URL.Query()
		f, e = q.Get("format"), q.Get("encoding")
	}
	enc, err := idtext.ParseEncoding(e)
	if err != nil {
		return idFormat{}, badRequest(fmt.Sprintf("encoding %q: want %s", e, idtext.EncodingNames))
	}
	switch f {
	case "", "string":
		if strings.HasPrefix(r.Header.Get("Accept"), "text/plain") {
			return idFormat{"text", enc}, nil
		}
		return idFormat{"string", enc}, nil
	case "text":
		return idFormat{f, enc}, nil
	case "number":
		if enc != idtext.Decimal {
			return idFormat{}, badRequest(fmt.Sprintf("format number with encoding %s: numbers are decimal; use format string or text", enc))
		}
		return idFormat{f, enc}, nil
	default:
		return idFormat{}, badRequest(fmt.Sprintf("format %q: want string, number or text", f))
	}
}

// The Content-Type values of ID answers, set without canonicalizing the
// header name on every request. Handlers never modify them.
var (
	jsonType = []string{"application/json"}
	textType = []string{"text/plain; charset=utf-8"}
)

func writeIDs(w http.ResponseWriter, f idFormat, one bool, ids []int64) {
	if f.kind == "text" {
		w.Header()["Content-Type"] = textType
		b := make([]byte, 0, 21*len(ids))
		for _, id := range ids {
			b = f.enc.Append(b, uint64(id))
			b = append(b, '\n')
		}
		_, _ = w.Write(b)
		return
	}
	w.Header()["Content-Type"] = jsonType
	b := make([]byte, 0, 12+23*len(ids))
	if one {
		b = append(b, `{"id":`...)
	} else {
		b = append(b, `{"ids":[`...)
	}
	for i, id := range ids {
		if i > 0 {
			b = append(b, ',')
		}
		if f.kind == "string" {
			b = append(b, '"')
		}
		b = f.enc.Append(b, uint64(id))
		if f.kind == "string" {
			b = append(b, '"')
		}
	}
	if !one {
		b = append(b, ']')
	}
	b = append(b, "}\n"...)
	_, _ = w.Write(b)
}

// Snowflake calls wait at most the generator's MaxWait, never on a store:
// they take the request's own context.
func (h *handler) snowflakeNext(w http.ResponseWriter, r *http.Request) {
	h.one(w, r, false, h.counter("snowflake", ""), h.svc.nextSnowflake)
}

func (h *handler) snowflakeBatch(w http.ResponseWriter, r *http.Request) {
	h.batch(w, r, false, h.svc.order, h.counter("snowflake", ""), h.svc.nextSnowflakeN)
}

func (h *handler) segmentNext(w http.ResponseWriter, r *http.Request) {
	tag := r.PathValue("tag")
	h.one(w, r, true, h.counter("segment", tag), func(ctx context.Context) (int64, error) { return h.svc.Segments.Next(ctx, tag) })
}

func (h *handler) segmentBatch(w http.ResponseWriter, r *http.Request) {
	tag := r.PathValue("tag")
	h.batch(w, r, true, api.OrderUnordered, h.counter("segment", tag), func(ctx context.Context, dst []int64) (int, error) {
		return h.svc.Segments.NextN(ctx, tag, dst)
	})
}

// counter returns the issued-IDs counter of a mode and tag.
func (h *handler) counter(mode, tag string) func(n int) {
	if mode == "snowflake" {
		return h.snowflakeIssued
	}
	return func(n int) { h.segmentIssued(tag, n) }
}

// segmentIssued counts n IDs of a segment tag, the tag's counter resolved
// once: a label lookup on every request cost a third of a segment
// route's time (BenchmarkRoutes). Only tags that issued IDs are kept, so
// the cache holds no more than the allocator does.
func (h *handler) segmentIssued(tag string, n int) {
	if c, ok := h.tagIssued.Load(tag); ok {
		c.(prometheus.Counter).Add(float64(n))
		h.svc.rate.add(modeSegment, n)
		return
	}
	h.metrics.issuedAdd("segment", tag, n) // a label it cannot write is dropped and counted there
	if c, err := h.metrics.issued.GetMetricWithLabelValues("segment", labelValue(tag)); err == nil {
		h.tagIssued.Store(tag, c)
	}
}

// one answers a request for one ID drawn by next, and counts it. With
// bounded, the call may wait on a store and gets the service's timeout.
func (h *handler) one(w http.ResponseWriter, r *http.Request, bounded bool, count func(int), next func(context.Context) (int64, error)) {
	f, err := format(r)
	if err != nil {
		writeError(w, err)
		return
	}
	ctx := r.Context()
	if bounded {
		d := h.bounded(r)
		defer d.release()
		ctx = d
	}
	id, err := next(ctx)
	if err != nil {
		h.svc.noteFailure(err)
		writeError(w, err)
		return
	}
	count(1)
	writeIDs(w, f, true, []int64{id})
}

// batch answers a request for ?count= IDs filled by fill, in order (an
// api.Order), and counts them.
func (h *handler) batch(w http.ResponseWriter, r *http.Request, bounded bool, order string, count func(int), fill func(context.Context, []int64) (int, error)) {
	f, err := format(r)
	if err != nil {
		writeError(w, err)
		return
	}
	n, err := h.count(r)
	if err != nil {
		writeError(w, err)
		return
	}
	ctx := r.Context()
	if bounded {
		d := h.bounded(r)
		defer d.release()
		ctx = d
	}
	ids := make([]int64, n)
	if _, err := fill(ctx, ids); err != nil {
		h.svc.noteFailure(err)
		writeError(w, err)
		return
	}
	count(n)
	w.Header().Set(api.Order, order)
	writeIDs(w, f, false, ids)
}

func (h *handler) decode(w http.ResponseWriter, r *http.Request) {
	if h.svc.Opaque != nil {
		writeError(w, ErrOpaqueIDs)
		return
	}
	id, err := pathID(r)
	if err != nil {
		writeError(w, err)
		return
	}
	h.writeDecoded(w, id, "")
}

// pathID reads the {id} of r, written as its ?encoding= says: decimal
// unless base62 or base32 is named.
func pathID(r *http.Request) (uint64, error) {
	s, e := r.PathValue("id"), r.URL.Query().Get("encoding")
	enc, err := idtext.ParseEncoding(e)
	if err != nil {
		return 0, badRequest(fmt.Sprintf("encoding %q: want %s", e, idtext.EncodingNames))
	}
	id, err := enc.Parse(s)
	switch {
	case err != nil && enc == idtext.Decimal:
		return 0, badRequest(fmt.Sprintf("ID %q is not a non-negative decimal number of at most 64 bits (for base62 or base32, add ?encoding=base62 or ?encoding=base32)", s))
	case err != nil:
		return 0, badRequest(err.Error())
	}
	return id, nil
}

// writeDecoded answers with the parts of a plain ID, and the opaque ID it
// was revealed from, if any.
func (h *handler) writeDecoded(w http.ResponseWriter, id uint64, opaqueID string) {
	l, _ := h.svc.layout() // the decode routes answer only with a layout
	p, err := l.Decompose(id)
	if err != nil {
		writeError(w, badRequest(fmt.Sprintf("ID %d does not fit the %d-bit %s layout", id, l.Bits(), l.Name)))
		return
	}
	d := api.NewDecoded(id, p)
	d.OpaqueID = opaqueID
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(d)
}

// info says which node and layout the server issues snowflake IDs with.
func (h *handler) info(w http.ResponseWriter, _ *http.Request) {
	g := h.svc.generator()
	l := g.Layout()
	info := api.Info{Layout: l.String(), Fingerprint: l.Fingerprint(), Bits: l.BitsFingerprint(), Node: g.Node(), MaxBatch: h.svc.MaxBatch}
	if h.svc.Opaque != nil {
		info.Opaque = h.svc.Opaque.Fingerprint()
	}
	writeJSON(w, http.StatusOK, info)
}

func (h *handler) ready(w http.ResponseWriter, r *http.Request) {
	if err := h.svc.ready(); err != nil {
		writeErrorCode(w, http.StatusServiceUnavailable, "not_ready", openReason(err, h.svc.Brief))
		return
	}
	_, _ = w.Write([]byte("ready\n"))
}
