package server

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"

	"google.golang.org/grpc"
)

// A panic in a handler is a bug in firn. It must not stop the process,
// must not pass for an outage (503 makes a client fail over and retry,
// and hides the bug), and must leave a trace: the request gets 500 (gRPC:
// Internal) and the panic is logged at error level with its stack.

// logger is the service's logger.
func (s *service) logger() *slog.Logger {
	if s.Log != nil {
		return s.Log
	}
	return slog.Default()
}

// recovered logs a recovered panic v of the request named by what, with
// the stack, counts it, and returns the error the caller answers with.
func (s *service) recovered(protocol, what string, v any) error {
	s.logger().Error("panic serving a request", "protocol", protocol, "request", what,
		"panic", fmt.Sprint(v), "stack", string(debug.Stack()))
	s.panics.Add(1)
	return fmt.Errorf("%w: %s", ErrPanic, what)
}

// recoverHTTP answers a panicking HTTP request with 500 and logs it.
// http.ErrAbortHandler keeps its meaning (abort the response, quietly).
func (h *handler) recoverHTTP(w http.ResponseWriter, r *http.Request) {
	v := recover()
	if v == nil {
		return
	}
	if v == http.ErrAbortHandler {
		panic(v)
	}
	writeError(w, h.svc.recovered("http", r.Method+" "+r.URL.Path, v))
}

// unaryRecover answers a panicking unary call with Internal and logs it.
func (g *grpcService) unaryRecover(ctx context.Context, req any, info *grpc.UnaryServerInfo, next grpc.UnaryHandler) (resp any, err error) {
	defer func() {
		if v := recover(); v != nil {
			resp, err = nil, grpcError(g.svc.recovered("grpc", info.FullMethod, v))
		}
	}()
	return next(ctx, req)
}

// streamRecover answers a panicking stream with Internal and logs it.
func (g *grpcService) streamRecover(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, next grpc.StreamHandler) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = grpcError(g.svc.recovered("grpc", info.FullMethod, v))
		}
	}()
	return next(srv, ss)
}
