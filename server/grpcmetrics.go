package server

import (
	"context"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	grpcstatus "google.golang.org/grpc/status"
)

// grpcMetrics counts gRPC calls in the same series as HTTP requests
// (firn_requests_total, firn_request_failures_total,
// firn_request_duration_seconds), the route label being the full method
// name; the series of every declared method are resolved once.
type grpcMetrics struct {
	m       *metrics
	methods map[string]*routeMetrics
	// snowflake counts snowflake IDs handed out, its series resolved once.
	snowflake prometheus.Counter
}

func newGRPCMetrics(m *metrics) *grpcMetrics {
	g := &grpcMetrics{m: m, methods: map[string]*routeMetrics{}, snowflake: m.issued.WithLabelValues("snowflake", "")}
	for method := range grpcScopes {
		g.methods[method] = m.route(method)
	}
	return g
}

// method returns the series of a method; one the server does not declare
// (refused by the token check) is counted under its name all the same.
func (g *grpcMetrics) method(name string) *routeMetrics {
	if rm, ok := g.methods[name]; ok {
		return rm
	}
	return g.m.route(name)
}

// issued counts n IDs handed out of a mode and tag.
func (g *grpcMetrics) issued(tag string, n int) {
	if tag == "" {
		g.snowflake.Add(float64(n))
		g.m.rate.add(modeSnowflake, n) // the status page's IDs/s, as HTTP's
		return
	}
	g.m.issuedAdd("segment", tag, n)
}

// grpcHTTPStatus is the HTTP status a gRPC call's error counts as: the
// inverse of grpcCodes (the lower status where two share a code), OK as
// 200, Unavailable as 503, Canceled as 499 (the client went away), and
// any other code as 500.
var grpcHTTPStatus = func() map[codes.Code]int {
	out := map[codes.Code]int{codes.OK: http.StatusOK, codes.Unavailable: http.StatusServiceUnavailable, codes.Canceled: 499}
	for status, code := range grpcCodes {
		if s, ok := out[code]; !ok || status < s {
			out[code] = status
		}
	}
	return out
}()

// httpStatusOf returns the HTTP status a call that ended with err counts
// as.
func httpStatusOf(err error) int {
	if s, ok := grpcHTTPStatus[grpcstatus.Code(err)]; ok {
		return s
	}
	return http.StatusInternalServerError
}

// unary counts a unary call, whatever stopped it: the token check, a
// recovered panic, the handler's error.
func (g *grpcMetrics) unary(ctx context.Context, req any, info *grpc.UnaryServerInfo, next grpc.UnaryHandler) (any, error) {
	start := time.Now()
	resp, err := next(ctx, req)
	g.method(info.FullMethod).done(httpStatusOf(err), time.Since(start))
	return resp, err
}

// stream counts a stream by how it ended, and observes the time it took
// to produce each message it sent: a stream's whole life is no latency.
func (g *grpcMetrics) stream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, next grpc.StreamHandler) error {
	rm := g.method(info.FullMethod)
	ms := &meteredStream{ServerStream: ss, latency: rm.latency, last: time.Now()}
	err := next(srv, ms)
	rm.countStatus(httpStatusOf(err))
	return err
}

// meteredStream observes the time between the end of one message sent
// (or the stream's start) and the sending of the next.
type meteredStream struct {
	grpc.ServerStream
	latency prometheus.Observer
	last    time.Time
}

func (s *meteredStream) SendMsg(m any) error {
	s.latency.Observe(time.Since(s.last).Seconds())
	err := s.ServerStream.SendMsg(m)
	s.last = time.Now()
	return err
}
