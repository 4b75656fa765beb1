package server

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"google.golang.org/grpc"

	"github.com/firn-id/firn/opaque"
	"github.com/firn-id/firn/segment"
	"github.com/firn-id/firn/snowflake"
)

// The limits and defaults of the API, in the one place they are typed;
// configuration and flags read them from here.
const (
	// DefaultMaxBatch is the largest count of a batch request unless
	// Config.MaxBatch says otherwise.
	DefaultMaxBatch = 10_000
	// MaxBatchLimit is the largest MaxBatch a server accepts.
	MaxBatchLimit = 1_000_000
	// DefaultTimeout bounds one request's wait for IDs from a store.
	DefaultTimeout = 5 * time.Second
)

// Config is what a Server serves. Its zero value is not usable: Snowflake
// or Segments is required. Every other field's zero value means its
// default.
type Config struct {
	// Snowflake issues snowflake IDs; nil serves segments only (snowflake
	// routes answer 503 snowflake_off). Snowflake or Segments is required.
	Snowflake *snowflake.Generator
	// Layout, if set, is the layout the decode routes read while no
	// generator runs (Snowflake nil, or no node held yet): decoding
	// needs no node. It must be Snowflake's layout when both are set.
	Layout *snowflake.Layout
	// Lease, if set, is the node's lease: readiness and metrics read it.
	Lease Lease
	// Store names where the node's lease lives, for /v1/status: its kind
	// and namespace (`etcd namespace "/firn/default/"`), never a DSN or
	// an endpoint's credentials. Empty: not shown.
	Store string
	// Ready reports why the node may not serve (nil: ready), besides the
	// lease. It must do no I/O.
	Ready func() error
	// Site names the site the node belongs to ("" for none) and Revoked,
	// when both are set, reports why the node stopped issuing for good —
	// the site's value released or taken (node.Holder.Revoked) — or nil:
	// firn_site_revoked{site} reads it. It must do no I/O.
	Site    string
	Revoked func() error
	// Brief says a reason not to serve (Ready's, the lease's) without
	// the store's own words, for /readyz, which anyone may ask: a
	// driver's message may quote a setting, password and all. It returns
	// "" for a reason whose message quotes no store, which /readyz then
	// shows redacted; /v1/status shows every message, redacted. Nil:
	// every message, redacted. It must do no I/O.
	Brief func(error) string
	// Segments serves segment IDs per tag; nil serves none.
	Segments *segment.Allocator
	// SegmentsOff, when Segments is nil, is why this server serves no
	// segments (firn serve's "off loopback on the local data directory",
	// a ZooKeeper registry without a segment database): every segment
	// route, the admin routes included, answers 503 segments_off with it,
	// so a client learns what to change. With it set, a server without a
	// snowflake generator may start: it answers every ID route 503.
	SegmentsOff string
	// SegmentStore is the allocator's store: the admin API and Tinyid's
	// segment routes use it.
	SegmentStore segment.Store
	// Auth checks bearer tokens; nil or empty allows every request.
	Auth *Auth
	// TinyidTokens, if set, are Tinyid's tokens: on Tinyid's routes a
	// request passes with its token= parameter for its bizType, or with
	// what Auth allows (a bearer token with tag:BIZTYPE, an anonymous
	// grant); with no firn tokens configured, only these. Nil: Tinyid's
	// routes are checked by Auth alone.
	TinyidTokens TinyidTokens
	// MaxBatch bounds count in batch requests: 1 to MaxBatchLimit.
	// Default DefaultMaxBatch.
	MaxBatch int
	// MaxBody bounds every request body (HTTP) and received message
	// (gRPC), in bytes; past it the request gets 413 (ResourceExhausted).
	// Default DefaultMaxBody.
	MaxBody int64
	// Timeout bounds one request's wait for IDs. Default DefaultTimeout.
	Timeout time.Duration
	// Opaque, if set, permutes every snowflake ID on the way out (opaque
	// mode): its Bits must be the layout's. Two permutations over one ID
	// space collide: the caller records Opaque.Fingerprint with the
	// namespace's layout (firn serve appends it to the fingerprint its
	// node store checks) and refuses another. The decode routes then refuse
	// (the IDs are opaque), and GET /v1/snowflake/reveal/{id}, scope
	// reveal, undoes the permutation and decodes.
	Opaque *opaque.Permutation
	// Log receives what the server logs: panics recovered in handlers,
	// with their stacks, and metrics that could not be gathered. Default
	// slog.Default().
	Log *slog.Logger
}

// ErrConfig is matched by the errors of a Config that New refuses.
var ErrConfig = errors.New("server: invalid configuration")

// validate fills the defaults of c and refuses what cannot serve.
func (c Config) validate() (Config, error) {
	fail := func(format string, args ...any) (Config, error) {
		return c, fmt.Errorf("%w: %s", ErrConfig, fmt.Sprintf(format, args...))
	}
	if c.MaxBatch == 0 {
		c.MaxBatch = DefaultMaxBatch
	}
	if c.MaxBody == 0 {
		c.MaxBody = DefaultMaxBody
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	switch {
	case c.Snowflake == nil && c.Segments == nil && c.SegmentsOff == "":
		return fail("nothing to serve: no snowflake generator and no segments")
	case c.Segments != nil && c.SegmentsOff != "":
		return fail("segments served and off at once (%s)", c.SegmentsOff)
	case c.Snowflake == nil && c.Lease != nil:
		return fail("a lease without a snowflake generator")
	case c.Snowflake != nil && c.Layout != nil && c.Layout.Fingerprint() != c.Snowflake.Layout().Fingerprint():
		return fail("the layout to decode with (%s) is not the generator's (%s)", c.Layout, c.Snowflake.Layout())
	case c.MaxBatch < 1 || c.MaxBatch > MaxBatchLimit:
		return fail("max batch %d: want 1 to %d", c.MaxBatch, MaxBatchLimit)
	case c.MaxBody < 1:
		return fail("max body %d: want at least 1 byte", c.MaxBody)
	case c.Timeout < 0:
		return fail("timeout %s is negative", c.Timeout)
	case (c.Segments == nil) != (c.SegmentStore == nil):
		return fail("segments and their store go together")
	case c.Opaque != nil && c.Snowflake == nil:
		return fail("opaque mode without a snowflake generator")
	case c.Opaque != nil && c.Opaque.Bits() != c.Snowflake.Layout().Bits():
		return fail("opaque permutation of %d bits over a %d-bit layout", c.Opaque.Bits(), c.Snowflake.Layout().Bits())
	}
	return c, nil
}

// Server serves one node's generators over HTTP and gRPC.
type Server struct {
	svc  *service
	http *handler
}

// New validates cfg and returns a server. It does no I/O and starts no
// goroutines. Every route and gRPC method declares its scope; one that
// does not is refused here.
func New(cfg Config) (*Server, error) {
	cfg, err := cfg.validate()
	if err != nil {
		return nil, err
	}
	now := time.Now()
	svc := &service{Config: cfg, order: snowflakeOrder(cfg), started: now, rate: newThroughputRing(now), lookups: newClientLimits(RevealLookupRate)}
	h, err := newHandler(svc)
	if err != nil {
		return nil, err
	}
	return &Server{svc: svc, http: h}, nil
}

// Handler returns the HTTP API.
func (s *Server) Handler() http.Handler { return s.http }

// GRPC returns a gRPC server of the firn.v1.Firn service and the standard
// health service, with the same tokens and scopes as HTTP (metadata
// "authorization: Bearer …"), counted in the same metrics as HTTP
// (GET /metrics on Handler). A received message is at most MaxBody; a
// panicking handler answers Internal and is logged with its stack. opts
// come after these (a grpc.MaxRecvMsgSize among them wins); interceptors
// chained in opts run inside the recovery and the token check.
func (s *Server) GRPC(opts ...grpc.ServerOption) *grpc.Server {
	return newGRPC(s.svc, s.http.metrics, opts...)
}

// Replace installs a generator and its lease in place of the current ones,
// after the node's lease was lost and a node acquired again. Requests in
// flight on the old generator finish on it; it stops at its HWM, which the
// new lease starts past (or it holds another node).
func (s *Server) Replace(g *snowflake.Generator, l Lease) { s.svc.Replace(g, l) }
