package server

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	grpcstatus "google.golang.org/grpc/status"

	"github.com/firn-id/firn/internal/buildinfo"
)

// Starting is what a process's HTTP and gRPC ports answer before its
// Server exists, while it waits for its stores and a node: a client or
// probe meets a port that answers, and says why it does not serve yet,
// from the moment it is bound. Over HTTP, /healthz answers 200 (the
// process is up), /metrics the build, the Go runtime and the process with
// firn_lease_held 0 (so a dashboard and the shipped alerts see a waiting
// process rather than a scrape that fails), the status page its files and
// /v1/status (scope status, as on the Server) a document with ready false,
// the reason, the store and how long the process has waited — the page is
// most needed then — and every other route 503 not_ready with the reason.
// Over gRPC, the health service answers NOT_SERVING for every name a
// Server's answers for, and every other call fails with Unavailable and
// "not_ready: " and the same reason. Every route but /v1/status is open
// while starting, so they show the reason as Brief says it; /v1/status,
// like the Server's, shows its message, redacted (redactSecrets).
type Starting struct {
	cfg     StartingConfig
	since   time.Time
	metrics http.Handler
	page    map[string]http.Handler // the status page's files, by path
}

// StartingConfig is what the starting answers say and who may read them.
type StartingConfig struct {
	// Why says what the process waits for (nil, or a nil error: the
	// stores and a first node). It must do no I/O.
	Why func() error
	// Brief says Why's reason on the open routes, as Config.Brief; nil:
	// its message, redacted.
	Brief func(error) string
	// Store names the store the process waits for, as Config.Store: its
	// kind and namespace, never a DSN. Empty: not shown.
	Store string
	// Auth decides who reads /v1/status, as on the Server; nil or empty
	// allows every request.
	Auth *Auth
}

// NewStarting returns the starting answers, counting the wait from now.
// It does no I/O.
func NewStarting(cfg StartingConfig) *Starting {
	reg := prometheus.NewRegistry()
	held := prometheus.NewGauge(prometheus.GaugeOpts{Name: "firn_lease_held",
		Help: "1 while the node's lease is held, 0 once lost."})
	reg.MustRegister(buildInfo(), held,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	s := &Starting{cfg: cfg, since: time.Now(), metrics: promhttp.HandlerFor(reg, promhttp.HandlerOpts{}), page: map[string]http.Handler{}}
	for _, f := range pageFiles {
		if body, err := page.ReadFile(f.file); err == nil { // embedded: read by every Server's build too
			s.page[strings.TrimSuffix(strings.TrimPrefix(f.pattern, "GET "), "{$}")] = pageFile(f.contentType, body)
		}
	}
	return s
}

// reason says what the process waits for, on both ports: as the open
// routes show it, or with full true as /v1/status does, its message
// redacted.
func (s *Starting) reason(full bool) string {
	if s.cfg.Why != nil {
		if err := s.cfg.Why(); err != nil && full {
			return "starting: " + redactSecrets(err.Error())
		} else if err != nil {
			return "starting: " + openReason(err, s.cfg.Brief)
		}
	}
	return "starting: waiting for the store to answer and a node to be held"
}

// ServeHTTP answers the HTTP port while starting.
func (s *Starting) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/healthz":
		_, _ = w.Write([]byte("ok " + buildinfo.Read().String() + " (starting)\n"))
		return
	case "/metrics":
		s.metrics.ServeHTTP(w, r)
		return
	case "/v1/status":
		if r.Method == http.MethodGet || r.Method == http.MethodHead {
			s.status(w, r)
			return
		}
	}
	if f := s.page[r.URL.Path]; f != nil && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
		f.ServeHTTP(w, r)
		return
	}
	writeErrorCode(w, http.StatusServiceUnavailable, "not_ready", s.reason(false))
}

// status answers GET /v1/status while starting: the Server's document
// with ready false, its reason, and starting; no node, lease, rate or
// tags yet.
func (s *Starting) status(w http.ResponseWriter, r *http.Request) {
	if no, _ := s.cfg.Auth.check(needStatus, r); no != nil {
		refuse(w, no)
		return
	}
	now := time.Now()
	bi := buildinfo.Read()
	doc := statusDoc{Version: bi.Version, Commit: bi.Commit, GoVersion: bi.GoVersion, NowMS: now.UnixMilli(),
		StartedMS: s.since.UnixMilli(), UptimeMS: now.Sub(s.since).Milliseconds(), NotReady: s.reason(true),
		Starting: &startingState{Store: redactSecrets(s.cfg.Store), WaitingMS: now.Sub(s.since).Milliseconds()},
		Rate:     rateState{EndMS: now.UnixMilli(), PerSecond: map[string][]uint64{}}, Tags: []tagState{}, Errors: []recentError{}}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, doc)
}

// GRPC returns the gRPC server of the starting port, with opts (TLS
// credentials, say).
func (s *Starting) GRPC(opts ...grpc.ServerOption) *grpc.Server {
	opts = append(opts, grpc.UnknownServiceHandler(func(any, grpc.ServerStream) error {
		return grpcstatus.Error(codes.Unavailable, "not_ready: "+s.reason(false))
	}))
	srv := grpc.NewServer(opts...)
	healthpb.RegisterHealthServer(srv, startingHealth{})
	return srv
}

// startingHealth is the health service of Starting.GRPC.
type startingHealth struct {
	healthpb.UnimplementedHealthServer
}

func (startingHealth) Check(_ context.Context, req *healthpb.HealthCheckRequest) (*healthpb.HealthCheckResponse, error) {
	if err := checkHealthService(req.Service); err != nil {
		return nil, err
	}
	return healthOf(false), nil
}
