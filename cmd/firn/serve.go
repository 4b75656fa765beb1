package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/firn-id/firn/cmd/firn/internal/backend"
	"github.com/firn-id/firn/cmd/firn/internal/config"
	"github.com/firn-id/firn/internal/buildinfo"
	"github.com/firn-id/firn/node"
	"github.com/firn-id/firn/nodeid"
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
	"segments.check_tokens", "segments.javascript_safe", "opaque", "log", "ledger"}

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

// serveOptions is what firn serve runs with: the configuration, and the
// values derived from it (read, parsed, loaded from the files it names).
// A plain setting is read from cfg, never copied here.
type serveOptions struct {
	// cfg is the configuration: defaults, file, environment and flags.
	cfg *config.Config
	config.Serving
	stores backend.Options
	// segmentsOff, when set, is why segment mode is off
	// (server.Config.SegmentsOff).
	segmentsOff string
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
	log := o.cfg.Log.Logger(logOutput)
	var holder atomic.Pointer[node.Holder] // set once the node store is open
	var storeDown atomic.Pointer[error]    // why the stores did not open yet
	starting := server.NewStarting(server.StartingConfig{Why: func() error { return notReady(holder.Load(), storeDown.Load()) },
		Brief: o.brief, Store: o.stores.Describe(), Auth: o.Auth})
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
	stores, nodes, err := openStores(ctx, &o, log, &storeDown)
	if err != nil {
		return stoppedOr(ctx, err)
	}
	defer func() { err = errors.Join(err, stores.Close()) }()
	tokens, err := startTinyidTokens(ctx, stores.Tokens, o.cfg.Segments, log)
	if err != nil {
		return err
	}
	if tokens != nil {
		defer func() { err = errors.Join(err, tokens.Close(context.Background())) }()
	}
	alloc, checked, err := segmentsOf(ctx, o, stores.Segments)
	if err != nil {
		return err
	}
	if alloc != nil {
		defer func() { err = errors.Join(err, alloc.Close(context.Background())) }()
	}
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
	if err := tagsChecked(checked, alloc, log); err != nil {
		return err
	}
	stop := backend.NewSiteStop(h, log)
	svc, err := newService(o, log, alloc, stores.Segments, tokens, g, lease, h, stop)
	if err != nil {
		return err
	}
	// Announced before serving: whoever sees /readyz answer 200 finds the
	// discovery file too. A client that reads the file a moment earlier
	// is answered not_ready (503), which it retries.
	if d, ok := stores.Nodes.(interface{ Dir() string }); ok {
		announce(d.Dir(), p.Addr(), o.TLS != nil, log)
		defer func() { err = errors.Join(err, backend.RemoveDiscovery(d.Dir())) }()
	}
	p.serve(svc, log)
	logServing(o, log, p, lease, stdout)
	defer func() { err = errors.Join(err, p.Shutdown(shutdownBound)) }()
	if h != nil {
		if err := h.Watch(ctx, func(g *snowflake.Generator, l *nodeid.Lease) { svc.Replace(g, l) }); err != nil {
			return err
		}
	}
	go o.stores.WatchSite(ctx, o.cfg.Ledger, o.Lease.Layout, o.Lease.Site, o.cfg.Segments.SiteStores(), nodes, stop, log)
	return p.wait(ctx, log)
}

// openStores opens the stores, waiting while they do not answer
// (storeDown says why meanwhile), warns when anyone may rewrite the node
// store's records, and returns them with the node store to claim from.
func openStores(ctx context.Context, o *serveOptions, log *slog.Logger, storeDown *atomic.Pointer[error]) (*backend.Stores, nodeid.Store, error) {
	o.stores.Log = log
	stores, err := o.stores.OpenRetrying(ctx, log, func(err error) { storeDown.Store(&err) })
	if err != nil {
		return nil, nil, err
	}
	storeDown.Store(nil)
	o.segmentsOff = cmp.Or(o.segmentsOff, stores.Off) // a site's record may say so
	warnExposed(ctx, stores.Nodes, o.stores.Registry.DialTimeout, log)
	nodes, err := recordNodes(stores.Nodes)
	if err != nil {
		return nil, nil, errors.Join(err, stores.Close())
	}
	return stores, nodes, nil
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
	if !o.cfg.Snowflake.Enabled {
		return nil, nil, nil, nil
	}
	h, err := node.New(node.Config{Store: nodes, Lease: o.Lease, Generator: o.Gen,
		Check:   func(g *snowflake.Generator) error { return config.CheckFloor(g, o.cfg.Snowflake.Floor, o.Opaque) },
		Attempt: 2 * o.stores.Registry.DialTimeout, StoreName: o.stores.Describe(), Log: log})
	if err != nil {
		return nil, nil, nil, err
	}
	slot.Store(h)
	g, lease, err := h.Acquire(ctx)
	if errors.Is(err, nodeid.ErrLayoutMismatch) {
		return nil, nil, nil, layoutRefused(err, &o.stores, o.Lease.Layout)
	}
	if err != nil {
		return nil, nil, nil, err
	}
	return h, g, lease, nil
}

// newService builds the server over the node taken (g and lease nil with
// snowflake mode off) and the allocator (nil with segment mode off).
func newService(o serveOptions, log *slog.Logger, alloc *segment.Allocator, segs segment.Store, tokens *sqlstore.TinyidTokens,
	g *snowflake.Generator, lease *nodeid.Lease, h *node.Holder, stop *backend.SiteStop) (*server.Server, error) {
	if o.TagOpaque != nil {
		log.Info("opaque tags: their IDs are a keyed permutation of the plain ones, recorded with each tag when it is created; reveal them with firn tag reveal or GET /v1/segments/{tag}/reveal/{id}",
			"tags", strings.Join(o.cfg.Opaque.Tags, ","))
	}
	scfg := server.Config{Snowflake: g, Layout: &o.Layout, SegmentsOff: o.segmentsOff, Auth: o.Auth, MaxBatch: o.cfg.HTTP.MaxBatch, Log: log,
		Opaque: o.Opaque, Store: o.stores.Describe(), Brief: o.brief}
	if alloc != nil {
		scfg.Segments, scfg.SegmentStore = alloc, segs
	}
	if h != nil {
		scfg.Lease, scfg.Ready = lease, h.NotReady
	}
	scfg.Site, scfg.Revoked = o.Lease.Site.Name, stop.Revoked
	if o.Opaque != nil {
		log.Info("opaque IDs: every snowflake ID is a keyed permutation of the layout's; decode them with firn parse --opaque or GET /v1/snowflake/reveal/{id}",
			"permutation", o.Opaque.Fingerprint())
	}
	if tokens != nil {
		scfg.TinyidTokens = tokens
	}
	return server.New(scfg)
}

// logServing says that the service serves, where, on which node and
// layout, and what is open to whom.
func logServing(o serveOptions, log *slog.Logger, p *ports, lease *nodeid.Lease, stdout io.Writer) {
	var held any = "off (snowflake mode off)"
	if lease != nil {
		held = lease.Node()
	}
	attrs := []any{"url", p.URL(), "store", o.stores.Describe(), "node", held,
		"layout", o.Layout.String(), "version", buildinfo.Read().String()}
	if lease != nil {
		attrs = append(attrs, "lease", lease.Token(), "ttl_granted", lease.TTL().String())
	}
	log.Info("serving", attrs...)
	auth := o.Auth
	if anon := o.cfg.Auth.Anonymous; len(anon) > 0 {
		log.Warn("ANONYMOUS ACCESS: requests without credentials may use the HTTP ID routes of these scopes (auth.anonymous)",
			"scopes", strings.Join(anon, ","), "rate_per_client", auth.AnonymousRate(), "url", p.URL(),
			"admin", adminState(auth))
	}
	if auth.StatusOnLoopback() {
		log.Warn("requests without credentials from loopback hold the scope status: /v1/status and decoding (auth.status_anonymous_on_loopback)")
	}
	if !auth.Enabled() {
		log.Warn("auth off: no tokens configured, serving loopback only")
	}
	fmt.Fprintf(stdout, "firn serving on %s (node %v)\n", p.URL(), held)
}

// announce writes where this server listens into the local store's data
// directory, so that firn next and firn tag, finding the directory
// locked, ask the server instead. The address only, never a token.
func announce(dir string, addr net.Addr, tls bool, log *slog.Logger) {
	if err := backend.Announce(dir, addr, tls); err != nil {
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

// startTinyidTokens starts the reader of Tinyid's token table of the
// segment store just opened, if it is checked (segments.check_tokens),
// and says so. A table that cannot be read refuses to start
// (sqlstore.TinyidTokens.Start says why); the message names the settings.
func startTinyidTokens(ctx context.Context, tokens *sqlstore.TinyidTokens, sg config.Segments, log *slog.Logger) (*sqlstore.TinyidTokens, error) {
	if tokens == nil {
		if sg.Format == "tinyid" && !sg.CheckTokens {
			log.Warn("tinyid tokens off (segments.check_tokens false): Tinyid's token= is not checked")
		}
		return nil, nil
	}
	switch err := tokens.Start(ctx); {
	case errors.Is(err, sqlstore.ErrDenied):
		return nil, usagef("segments.token_table %s: %s", tokens.Table(), err)
	case err != nil:
		return nil, usagef("segments.token_table %s: %s or set segments.check_tokens false (--check-tokens=false) "+
			"to leave Tinyid's routes to auth.tokens and auth.anonymous", tokens.Table(), err)
	}
	log.Info("tinyid tokens: token= is checked on Tinyid's routes", "table", tokens.Table())
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

// logOutput is where firn serve logs and the other commands write their
// warnings; tests replace it.
var logOutput io.Writer = os.Stderr

// tagReadBound bounds the start's check of the store's tags: a store
// that does not list them by then has each checked on first use instead.
const tagReadBound = time.Second

// segmentsOf is the allocator firn serve serves segments with, and the
// check of the store's tags against it (segment.Allocator.CheckTags),
// started now so that it runs while a node is taken; both nil with
// segment mode off (o.segmentsOff says why).
func segmentsOf(ctx context.Context, o serveOptions, segs segment.Store) (*segment.Allocator, <-chan error, error) {
	if o.segmentsOff != "" {
		return nil, nil, nil
	}
	alloc, err := segment.NewAllocator(segs, segment.Config{MaxID: o.MaxID, Opaque: o.TagOpaque})
	if err != nil {
		return nil, nil, err
	}
	return alloc, alloc.StartCheckTags(ctx, tagReadBound), nil
}

// tagsChecked waits for the check segmentsOf started: a tag that records
// another permutation than this configuration gives it refuses the start
// (serving it would mix two permutations in one ID space); tags a store
// could not list in time are checked on first use instead, and that is
// said.
func tagsChecked(checked <-chan error, alloc *segment.Allocator, log *slog.Logger) error {
	if checked == nil {
		return nil
	}
	switch err := <-checked; {
	case errors.Is(err, segment.ErrPermutation):
		return usagef("%s", err)
	case err != nil && alloc.OpaqueTags():
		log.Warn("tags not checked against opaque.tags at start: each is checked on first use", "err", err)
	}
	return nil
}
