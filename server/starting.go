package server

import (
	"context"
	"net/http"

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
// process rather than a scrape that fails), and every other route 503
// not_ready with the reason. Over gRPC, the health service answers
// NOT_SERVING for every name a Server's answers for, and every other call
// fails with Unavailable and "not_ready: " and the same reason.
type Starting struct {
	why     func() error
	brief   func(error) string
	metrics http.Handler
}

// NewStarting returns the starting answers; why says what the process
// waits for (nil: the stores and a first node) and must do no I/O. Every
// route is open while starting: the reason is shown as brief says it
// (as Config.Brief; nil: its message, redacted). It does no I/O itself.
func NewStarting(why func() error, brief func(error) string) *Starting {
	reg := prometheus.NewRegistry()
	held := prometheus.NewGauge(prometheus.GaugeOpts{Name: "firn_lease_held",
		Help: "1 while the node's lease is held, 0 once lost."})
	reg.MustRegister(buildInfo(), held,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return &Starting{why: why, brief: brief, metrics: promhttp.HandlerFor(reg, promhttp.HandlerOpts{})}
}

// reason says what the process waits for, on both ports.
func (s *Starting) reason() string {
	if s.why != nil {
		if err := s.why(); err != nil {
			return "starting: " + openReason(err, s.brief)
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
	}
	writeErrorCode(w, http.StatusServiceUnavailable, "not_ready", s.reason())
}

// GRPC returns the gRPC server of the starting port, with opts (TLS
// credentials, say).
func (s *Starting) GRPC(opts ...grpc.ServerOption) *grpc.Server {
	opts = append(opts, grpc.UnknownServiceHandler(func(any, grpc.ServerStream) error {
		return grpcstatus.Error(codes.Unavailable, "not_ready: "+s.reason())
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
