package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"github.com/firn-id/firn/server"
)

// shutdownBound bounds a stop's wait for the requests in flight, on both
// ports together; a variable so tests can hold a stop open.
var shutdownBound = 10 * time.Second

// ports are firn serve's HTTP and gRPC ports. Each answers from the
// moment it is bound — /healthz, /metrics, the status page and
// /v1/status at once, everything else 503 not_ready (server.Starting) —
// until the service takes them over (serve).
type ports struct {
	ln       net.Listener
	http     *http.Server
	current  atomic.Pointer[http.Handler]
	grpc     *server.Handoff // nil with gRPC off
	grpcOpts []grpc.ServerOption
	starting *grpc.Server // on grpc until serve
	service  *grpc.Server // on grpc from serve
	stopOnce sync.Once    // stops starting
	done     chan error   // a server that stopped serving on its own
	// hup catches SIGHUP from the moment the ports are bound: its default
	// action would end the process.
	hup chan os.Signal
}

// listen binds both ports and answers on them with starting.
func listen(o serveOptions, starting *server.Starting) (*ports, error) {
	ln, err := net.Listen("tcp", o.cfg.HTTP.Listen)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w (HTTP: choose another address with --http)", o.cfg.HTTP.Listen, err)
	}
	p := &ports{ln: ln, done: make(chan error, 2), hup: make(chan os.Signal, 1)}
	if o.tls != nil {
		p.grpcOpts = append(p.grpcOpts, grpc.Creds(credentials.NewTLS(o.tls)))
	}
	if o.cfg.GRPC.Listen != "off" {
		gln, err := net.Listen("tcp", o.cfg.GRPC.Listen)
		if err != nil {
			_ = ln.Close()
			return nil, fmt.Errorf("listen on %s: %w (gRPC: choose another address with --grpc, or --grpc off)", o.cfg.GRPC.Listen, err)
		}
		// The gRPC port, like the HTTP port, answers from the moment it is
		// bound: health NOT_SERVING and not_ready until the service serves
		// it on the same port (server.Handoff).
		p.grpc = server.NewHandoff(gln)
		p.starting = starting.GRPC(p.grpcOpts...)
		go func() { _ = p.starting.Serve(p.grpc.Phase()) }()
	}
	signal.Notify(p.hup, syscall.SIGHUP)
	var h http.Handler = starting
	p.current.Store(&h)
	// Each server gets its own copy of the TLS configuration: net/http
	// adds its protocols to the one it is given.
	p.http = &http.Server{ReadHeaderTimeout: 5 * time.Second, TLSConfig: o.tls.Clone(),
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { (*p.current.Load()).ServeHTTP(w, r) })}
	go func() {
		if o.tls != nil {
			p.done <- p.http.ServeTLS(ln, "", "")
			return
		}
		p.done <- p.http.Serve(ln)
	}()
	return p, nil
}

// serve hands both ports to the service.
func (p *ports) serve(svc *server.Server, log *slog.Logger) {
	h := svc.Handler()
	p.current.Store(&h)
	if p.grpc == nil {
		return
	}
	p.stopOnce.Do(p.starting.Stop)
	p.service = svc.GRPC(p.grpcOpts...)
	go func() { p.done <- p.service.Serve(p.grpc.Phase()) }()
	log.Info("serving gRPC", "addr", p.grpc.Addr().String())
}

// wait serves until ctx ends or a server stops on its own (its error).
func (p *ports) wait(ctx context.Context, log *slog.Logger) error {
	for {
		select {
		case err := <-p.done:
			return err
		case <-p.hup:
			// Nothing reloads in a running process: a reloaded layout,
			// namespace, node or store would be a path to duplicates.
			log.Warn("SIGHUP ignored: firn serve reloads nothing; restart it to change its configuration")
		case <-ctx.Done():
			log.Info("stopping: finishing requests in flight")
			return nil
		}
	}
}

// shutdown stops both ports' service: they accept nothing more, and the
// requests in flight finish within shutdownBound; gRPC calls still running
// then are cut off.
func (p *ports) shutdown() error {
	sctx, cancel := context.WithTimeout(context.Background(), shutdownBound)
	defer cancel()
	err := p.http.Shutdown(sctx)
	if p.service == nil {
		return err
	}
	stopped := make(chan struct{})
	go func() { p.service.GracefulStop(); close(stopped) }()
	select {
	case <-stopped:
	case <-sctx.Done():
		p.service.Stop()
		<-stopped
	}
	return err
}

// close ends what is left on both ports: the starting gRPC server, the
// HTTP server (after shutdown, or on an early return), the ports, and the
// catch of SIGHUP. Their errors say nothing new.
func (p *ports) close() {
	signal.Stop(p.hup)
	if p.grpc != nil {
		p.stopOnce.Do(p.starting.Stop)
		_ = p.grpc.Close()
	}
	_ = p.http.Close()
	_ = p.ln.Close()
}
