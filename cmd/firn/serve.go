package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"runtime/debug"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/firn-id/firn/internal/backend"
	"github.com/firn-id/firn/internal/buildinfo"
	"github.com/firn-id/firn/internal/config"
	"github.com/firn-id/firn/internal/secret"
	"github.com/firn-id/firn/node"
	"github.com/firn-id/firn/nodeid"
	"github.com/firn-id/firn/opaque"
	"github.com/firn-id/firn/segment"
	"github.com/firn-id/firn/server"
	"github.com/firn-id/firn/snowflake"
	"github.com/firn-id/firn/sqlstore"
)

var serveUsage = `Usage: firn serve [--config FILE] [--http ADDR] [--grpc ADDR|off] [--node N]
                  [store flags] [layout flags]

Serves snowflake and segment IDs over HTTP and gRPC until SIGINT or
SIGTERM, then stops accepting, finishes requests in flight, and releases
its node (the HWM stays). SIGHUP is logged and ignored: nothing reloads in
a running process (a reloaded layout, namespace, node or store could
repeat IDs). A node whose lease is lost stops at its HWM, reports not
ready, and is released and acquired again with a new claim (perhaps
another node). While its store does not answer, no node is free, or the
one asked for is held, it waits, not ready, claiming again every 75-150
ms; /readyz says why, and so does the status page at /, with the store
and how long it has waited.
With no flags it needs no outside service: the local data directory holds
its node's HWM and its segment tags, and it listens on loopback only
(HTTP 127.0.0.1:8080, gRPC 127.0.0.1:9090). Listening on another address
needs a store named explicitly (--store): two machines that both fell
back to the local default would issue the same IDs.

` + ownFlags([2]string{"--config FILE", "a YAML file of these settings (docs/config.md); FIRN_… environment variables override it, flags override both"}) +
	config.Usage(serveOwnUses...) + `
Tokens and scopes (auth.tokens) come from the configuration file, as
does a set of segment databases serving every tag together
(segments.stores: store i issues the IDs congruent to i modulo their
number). Without tokens every request is allowed, so firn serve stays on
loopback, unless auth.anonymous opens the HTTP ID routes of chosen
scopes (snowflake, tag:NAME, tag:*, range:NAME for Tinyid's
nextSegmentId) to clients that send no credentials, such as Leaf's and
Tinyid's, at auth.anonymous_rate requests per second per client address
(logged at start); admin then needs a token that holds it (403
otherwise), and gRPC off loopback still needs tokens.

Routes: GET /v1/snowflake/next, /v1/snowflake/batch?count=N,
/v1/snowflake/decode/{id}, /v1/snowflake/guess/{id} (as firn parse
--guess), /v1/snowflake/info, /v1/snowflake/reveal/{id} (opaque mode,
scope reveal), /v1/segments/{tag}/next, /v1/segments/{tag}/batch?count=N,
/v1/segments/{tag}/reveal/{id} (opaque tags, scope reveal),
/v1/uuid/next, /v1/uuid/batch, /v1/ulid/next, /v1/ulid/batch,
/v1/wide/decode/{id}, the segment admin routes under /v1/segments (scope
admin), /healthz, /readyz, /metrics, the OpenAPI
document at /v1/openapi.json, and a status page at / that reads
/v1/status (scope status, which also decodes; auth.status_anonymous_on_loopback
grants it to loopback callers without credentials). IDs are JSON strings;
?format=number for numbers, Accept: text/plain for one per line. Leaf's
routes (/api/segment/get/{key}, /api/snowflake/get/{key},
/decodeSnowflakeId) and Tinyid's (/tinyid/id/nextId, nextIdSimple,
nextSegmentId, nextSegmentIdSimple) answer as the originals do on success;
docs/migration.md lists how failures differ.

` + storeFlagsUsage + "\n" + layoutHelp()

// serveOwnUses are the settings of firn serve that no other block of its
// help (store and layout flags) lists; opaque.key and auth are the file's
// only.
var serveOwnUses = []string{"http", "grpc", "registry.node", "registry.accept_collision_risk", "registry.reserved_nodes",
	"registry.start_ahead", "registry.lease_ttl", "snowflake", "segments.local", "segments.token_table",
	"segments.check_tokens", "segments.javascript_safe", "opaque", "log"}

func runServe(args []string, stdout io.Writer) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	tuneGC(os.Getenv("GOGC"), os.Getenv("GOMEMLIMIT"))
	return serve(ctx, args, stdout)
}

// tuneGC sets the collector for a server whose live heap is a few
// megabytes and whose requests are short: at Go's default (GOGC=100) it
// collects several times a second under load, and on a small machine each
// mark phase takes a core from the requests (p99 at 10,000 requests/s on
// 2 cores: 2.5 ms, against 0.7 ms at 400). A soft memory limit keeps the
// resident size bounded. GOGC and GOMEMLIMIT, when set, win.
func tuneGC(gogc, memlimit string) {
	if gogc == "" {
		debug.SetGCPercent(400)
	}
	if memlimit == "" {
		debug.SetMemoryLimit(24 << 20)
	}
}

// serveOptions is firn serve's parsed command line and configuration.
type serveOptions struct {
	addr     string
	grpcAddr string
	maxBatch int
	layout   snowflake.Layout
	stores   backend.Options
	lease    nodeid.Config
	floor    uint64
	// gen is the generator's configuration but its node and reservation.
	gen snowflake.Config
	// auth checks the tokens and anonymous scopes of the configuration.
	auth *server.Auth
	// snowflake is false when the server serves segments only.
	snowflake bool
	// logLevel and logFormat say how to log (newLogger).
	logLevel, logFormat string
	// tls is the loaded certificate and key, or nil.
	tls *tls.Config
	// anonymous are the scopes open to requests without credentials.
	anonymous []string
	// maxID bounds the IDs of the tags listed in segments.javascript_safe.
	maxID func(tag string) int64
	// opaque, in opaque mode, permutes every snowflake ID served.
	opaque *opaque.Permutation
	// tagOpaque returns the permutation of an opaque tag (opaque.tags),
	// nil for a plain one; nil when no tag is opaque.
	tagOpaque func(tag string) segment.Permutation
	// segmentsOff, when set, is why segment mode is refused.
	segmentsOff string
	// cfg is the configuration the options came from: defaults, file,
	// environment and flags.
	cfg *config.Config
}

// serve runs the service until ctx ends. The ports answer from the
// moment they are bound (server.Starting) while the stores are opened and
// a node is taken; then the service serves on them, a node.Holder keeping
// its node. A stop finishes the requests in flight on both ports before
// the node is released and the stores are closed.
func serve(ctx context.Context, args []string, stdout io.Writer) (err error) {
	o, err := checkServe(args)
	if err != nil {
		return err
	}
	log := newLogger(o.logLevel, o.logFormat)
	var holder atomic.Pointer[node.Holder] // set once the node store is open
	var storeDown atomic.Pointer[error]    // why the stores did not open yet
	starting := server.NewStarting(server.StartingConfig{Why: func() error { return notReady(holder.Load(), storeDown.Load()) },
		Brief: o.brief, Store: o.stores.Describe(), Auth: o.auth})
	p, err := listen(o, starting)
	if err != nil {
		return err
	}
	// The last line of a stop, after every deferred step below: requests
	// finished, the node released, the stores closed.
	defer func() {
		if err == nil && ctx.Err() != nil {
			log.Info("stopped")
		}
	}()
	defer p.close()
	sf := &o.stores
	sf.Log = log
	stores, err := sf.OpenRetrying(ctx, log, func(err error) { storeDown.Store(&err) })
	if err != nil {
		return stoppedOr(ctx, err)
	}
	storeDown.Store(nil)
	defer func() { err = errors.Join(err, stores.Close()) }()
	warnExposed(ctx, stores.Nodes, sf.Registry.DialTimeout, log)
	nodes, err := recordNodes(stores.Nodes)
	if err != nil {
		return err
	}
	segs := stores.Segments
	if o.segmentsOff != "" {
		segs = refusedSegments{reason: o.segmentsOff}
	}
	tokens, err := startTinyidTokens(ctx, stores.Tokens, sf.Registry.DialTimeout)
	if err != nil {
		return err
	}
	if tokens != nil {
		defer func() { err = errors.Join(err, tokens.Close(context.Background())) }()
		log.Info("tinyid tokens: token= is checked on Tinyid's routes", "table", tokens.Table())
	} else if sf.Segments.Format == "tinyid" && !sf.Tokens {
		log.Warn("tinyid tokens off (segments.check_tokens false): Tinyid's token= is not checked")
	}
	// The tags are read while a node is acquired, so the check below
	// costs a start no time.
	storedTags := readTags(ctx, segs, o.segmentsOff == "")
	h, g, lease, err := takeNode(ctx, o, nodes, log, &holder)
	if err != nil {
		// A stop while no node is held ends here: with neither node nor
		// error, the service below would serve as if snowflake mode
		// were off.
		return stoppedOr(ctx, err)
	}
	if h != nil {
		// Registered before the servers' stop below, so it runs after
		// it: the lease is released only once nothing issues from it.
		defer func() { err = errors.Join(err, h.Close(context.Background())) }()
	}
	svc, alloc, err := newService(o, log, segs, tokens, storedTags, g, lease, h)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, alloc.Close(context.Background())) }()
	// Announced before serving: whoever sees /readyz answer 200 finds the
	// discovery file too. A client that reads the file a moment earlier
	// is answered not_ready (503), which it retries.
	if d, ok := stores.Nodes.(interface{ Dir() string }); ok {
		announce(d.Dir(), p.ln, o.tls != nil, log)
		defer func() { err = errors.Join(err, backend.RemoveDiscovery(d.Dir())) }()
	}
	p.serve(svc, log)
	logServing(o, log, p, lease, stdout)
	defer func() { err = errors.Join(err, p.shutdown()) }()
	if h != nil {
		if err := h.Watch(ctx, func(g *snowflake.Generator, l *nodeid.Lease) { svc.Replace(g, l) }); err != nil {
			return err
		}
	}
	return p.wait(ctx, log)
}

// brief is a reason not to serve as the open /readyz shows it: the
// store and the kind of failure, without the store's own words
// (backend.Brief), which the log keeps.
func (o serveOptions) brief(err error) string { return backend.Brief(o.stores.Describe(), err) }

// notReady is why no node is held yet: the holder's reason; before the
// node store is open, why it did not open, or nil before the first try
// ended (Starting then says it waits for both).
func notReady(h *node.Holder, storeDown *error) error {
	switch {
	case h != nil:
		return h.NotReady()
	case storeDown != nil:
		return *storeDown
	}
	return nil
}

// takeNode takes firn serve's node, waiting while none can be taken
// (/readyz says why), and returns its holder, generator and lease; all
// nil with snowflake mode off (no node is taken, no node table used).
// Every generator, this one and each after a lost lease, passes the
// migration floor before it serves.
func takeNode(ctx context.Context, o serveOptions, nodes nodeid.Store, log *slog.Logger, slot *atomic.Pointer[node.Holder]) (*node.Holder, *snowflake.Generator, *nodeid.Lease, error) {
	if !o.snowflake {
		return nil, nil, nil, nil
	}
	h, err := node.New(node.Config{Store: nodes, Lease: o.lease, Generator: o.gen,
		Check:   func(g *snowflake.Generator) error { return config.CheckFloor(g, o.floor, o.opaque) },
		Attempt: 2 * o.stores.Registry.DialTimeout, StoreName: o.stores.Describe(), Log: log})
	if err != nil {
		return nil, nil, nil, err
	}
	slot.Store(h)
	g, lease, err := h.Acquire(ctx)
	if errors.Is(err, nodeid.ErrLayoutMismatch) {
		return nil, nil, nil, layoutRefused(err, &o.stores, o.lease.Layout)
	}
	if err != nil {
		return nil, nil, nil, err
	}
	return h, g, lease, nil
}

// newService builds the allocator and the server over the node taken (g
// and lease nil with snowflake mode off).
func newService(o serveOptions, log *slog.Logger, segs segment.Store, tokens *sqlstore.TinyidTokens, storedTags <-chan storedTags,
	g *snowflake.Generator, lease *nodeid.Lease, h *node.Holder) (*server.Server, *segment.Allocator, error) {
	alloc, err := segment.NewAllocator(segs, segment.Config{MaxID: o.maxID, Opaque: o.tagOpaque})
	if err != nil {
		return nil, nil, err
	}
	if err := checkTagPermutations(storedTags, alloc, log); err != nil {
		return nil, nil, errors.Join(err, alloc.Close(context.Background()))
	}
	if o.tagOpaque != nil {
		log.Info("opaque tags: their IDs are a keyed permutation of the plain ones, recorded with each tag when it is created; reveal them with firn tag reveal or GET /v1/segments/{tag}/reveal/{id}",
			"tags", strings.Join(o.cfg.Opaque.Tags, ","))
	}
	scfg := server.Config{Snowflake: g, Layout: &o.layout, Segments: alloc, SegmentStore: segs, Auth: o.auth, MaxBatch: o.maxBatch, Log: log,
		Opaque: o.opaque, Store: o.stores.Describe(), Brief: o.brief}
	if h != nil {
		scfg.Lease, scfg.Ready = lease, h.NotReady
	}
	if o.opaque != nil {
		log.Info("opaque IDs: every snowflake ID is a keyed permutation of the layout's; decode them with firn parse --opaque or GET /v1/snowflake/reveal/{id}",
			"permutation", o.opaque.Fingerprint())
	}
	if tokens != nil {
		scfg.TinyidTokens = tokens
	}
	svc, err := server.New(scfg)
	if err != nil {
		return nil, nil, errors.Join(err, alloc.Close(context.Background()))
	}
	return svc, alloc, nil
}

// logServing says that the service serves, where, on which node and
// layout, and what is open to whom.
func logServing(o serveOptions, log *slog.Logger, p *ports, lease *nodeid.Lease, stdout io.Writer) {
	scheme := "http"
	if o.tls != nil {
		scheme = "https"
	}
	var held any = "off (snowflake mode off)"
	if lease != nil {
		held = lease.Node()
	}
	attrs := []any{"url", scheme + "://" + p.ln.Addr().String(), "store", o.stores.Describe(), "node", held,
		"layout", o.layout.String(), "version", buildinfo.Read().String()}
	if lease != nil {
		attrs = append(attrs, "lease", lease.Token(), "ttl_granted", lease.TTL().String())
	}
	log.Info("serving", attrs...)
	auth := o.auth
	if len(o.anonymous) > 0 {
		log.Warn("ANONYMOUS ACCESS: requests without credentials may use the HTTP ID routes of these scopes (auth.anonymous)",
			"scopes", strings.Join(o.anonymous, ","), "rate_per_client", auth.AnonymousRate(), "url", scheme+"://"+p.ln.Addr().String(),
			"admin", adminState(auth))
	}
	if auth.StatusOnLoopback() {
		log.Warn("requests without credentials from loopback hold the scope status: /v1/status and decoding (auth.status_anonymous_on_loopback)")
	}
	if !auth.Enabled() {
		log.Warn("auth off: no tokens configured, serving loopback only")
	}
	fmt.Fprintf(stdout, "firn serving on %s://%s (node %v)\n", scheme, p.ln.Addr(), held)
}

// announce writes where this server listens into the local store's data
// directory, so that firn next and firn tag, finding the directory
// locked, ask the server instead. The address only, never a token.
func announce(dir string, ln net.Listener, tls bool, log *slog.Logger) {
	scheme := "http"
	if tls {
		scheme = "https"
	}
	if err := backend.WriteDiscovery(dir, scheme+"://"+dialable(ln.Addr())); err != nil {
		log.Warn("firn next and firn tag will not find this server", "err", err)
	}
}

// adminState says who may use the admin routes, for the log.
func adminState(auth *server.Auth) string {
	if !auth.Enabled() {
		return "anyone on loopback"
	}
	return "tokens with the scope admin only (403 when none is configured)"
}

// startTinyidTokens reads Tinyid's token table of the segment store just
// opened, if it is checked, and keeps it fresh until Close. A table that
// cannot be read refuses to start: serving without it would let every
// token through, or none.
func startTinyidTokens(ctx context.Context, tokens *sqlstore.TinyidTokens, timeout time.Duration) (*sqlstore.TinyidTokens, error) {
	if tokens == nil {
		return nil, nil
	}
	sctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := tokens.Start(sctx); err != nil {
		if errors.Is(err, sqlstore.ErrDenied) { // the table is there; the account may not read it
			return nil, usagef("segments.token_table %s: %s", tokens.Table(), err)
		}
		return nil, usagef("segments.token_table %s: %s; create Tinyid's table (its tinyid-server/db.sql) "+
			"or set segments.check_tokens false (--check-tokens=false) to leave Tinyid's routes to auth.tokens and auth.anonymous",
			tokens.Table(), err)
	}
	return tokens, nil
}

// stoppedOr returns nil when ctx ended (a stop while starting is a
// normal stop), and err otherwise.
func stoppedOr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// dialable is a listener's address as a client dials it: an unspecified
// host (0.0.0.0, ::) becomes loopback.
func dialable(a net.Addr) string {
	t, ok := a.(*net.TCPAddr)
	if !ok || !t.IP.IsUnspecified() {
		return a.String()
	}
	if t.IP.To4() != nil {
		return net.JoinHostPort("127.0.0.1", strconv.Itoa(t.Port))
	}
	return net.JoinHostPort("::1", strconv.Itoa(t.Port))
}

// refusedSegments is the segment store of a server that may not serve
// segments: every call says why, and it lists no tags (readiness does
// not depend on it).
type refusedSegments struct{ reason string }

func (r refusedSegments) err() error { return fmt.Errorf("%w: %s", segment.ErrUnavailable, r.reason) }
func (r refusedSegments) Reserve(context.Context, string, int64) (segment.Range, error) {
	return segment.Range{}, r.err()
}
func (r refusedSegments) Tag(context.Context, string) (segment.TagInfo, error) {
	return segment.TagInfo{}, r.err()
}
func (r refusedSegments) Tags(context.Context) ([]segment.TagInfo, error) { return nil, nil }
func (r refusedSegments) CreateTag(context.Context, string, int64, int64, string) error {
	return r.err()
}
func (r refusedSegments) SetStep(context.Context, string, int64) error { return r.err() }
func (r refusedSegments) Advance(context.Context, string, int64) (int64, error) {
	return 0, r.err()
}

// logOutput is where firn serve logs and the other commands write their
// warnings; tests replace it.
var logOutput io.Writer = os.Stderr

// newLogger logs at level (debug, info, warn, error) in format: text,
// JSON, or auto (text to a terminal, JSON otherwise), with every password
// the command has seen scrubbed. config.Validate checked both values.
func newLogger(level, format string) *slog.Logger {
	var lv slog.Level
	_ = lv.UnmarshalText([]byte(level)) // valid: config.Validate
	opts := &slog.HandlerOptions{Level: lv, ReplaceAttr: secret.ScrubAttr}
	text := format == "text"
	if f, ok := logOutput.(*os.File); ok && format == "auto" {
		fi, err := f.Stat()
		text = err == nil && fi.Mode()&os.ModeCharDevice != 0
	}
	if text {
		return slog.New(slog.NewTextHandler(logOutput, opts))
	}
	return slog.New(slog.NewJSONHandler(logOutput, opts))
}

// storedTags is the store's tags as read at start, or why they were not.
type storedTags struct {
	tags []segment.TagInfo
	err  error
}

// tagReadBound bounds the start's read of the tags: a store that does
// not answer by then has its tags checked on first use instead.
const tagReadBound = time.Second

// readTags reads the store's tags in the background, when on.
func readTags(ctx context.Context, segs segment.Store, on bool) <-chan storedTags {
	out := make(chan storedTags, 1)
	if !on {
		out <- storedTags{err: errors.New("segment mode is off")}
		return out
	}
	go func() {
		rctx, cancel := context.WithTimeout(ctx, tagReadBound)
		defer cancel()
		tags, err := segs.Tags(rctx)
		out <- storedTags{tags, err}
	}()
	return out
}

// checkTagPermutations refuses to start while a tag the store holds
// records another permutation than this configuration gives it (opaque
// where opaque.tags leaves it plain, plain where it lists it, another key
// or tweak): serving it would mix two permutations in one ID space. The
// allocator checks every range as well, so tags a store could not list
// in time are checked on first use instead, and that is said.
func checkTagPermutations(read <-chan storedTags, alloc *segment.Allocator, log *slog.Logger) error {
	st := <-read
	if st.err != nil {
		if alloc.OpaqueTags() {
			log.Warn("tags not checked against opaque.tags at start: each is checked on first use", "err", st.err)
		}
		return nil
	}
	var errs []error
	for _, t := range st.tags {
		if err := alloc.CheckPermutation(t.Tag, t.Opaque); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return usagef("%s", errors.Join(errs...))
	}
	return nil
}
