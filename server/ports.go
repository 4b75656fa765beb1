package server

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
)

// ListenError is returned by Listen when a port cannot be bound.
type ListenError struct {
	Port string // "HTTP" or "gRPC"
	Addr string // the address asked for
	Err  error  // net.Listen's error
}

func (e *ListenError) Error() string {
	return "server: listen on " + e.Addr + " (" + e.Port + "): " + e.Err.Error()
}

func (e *ListenError) Unwrap() error { return e.Err }

// Ports are a server's HTTP and gRPC ports, bound before the service can
// serve. Each answers from the moment it is bound — /healthz, /metrics,
// the status page and /v1/status at once, everything else 503 not_ready
// (Starting) — until Serve hands both to the service.
type Ports struct {
	ln       net.Listener
	http     *http.Server
	tls      bool
	current  atomic.Pointer[http.Handler]
	grpc     *Handoff // nil with gRPC off
	grpcOpts []grpc.ServerOption
	starting *grpc.Server // on grpc until Serve
	service  *grpc.Server // on grpc from Serve
	stopOnce sync.Once    // stops starting
	done     chan error   // a server that stopped serving on its own
}

// Listen binds the HTTP port at httpAddr and, unless grpcAddr is empty,
// the gRPC port, serving TLS on both when tlsc is set, and answers on
// them with starting. A port that cannot be bound is a *ListenError.
func Listen(httpAddr, grpcAddr string, tlsc *tls.Config, starting *Starting) (*Ports, error) {
	ln, err := net.Listen("tcp", httpAddr)
	if err != nil {
		return nil, &ListenError{Port: "HTTP", Addr: httpAddr, Err: err}
	}
	p := &Ports{ln: ln, tls: tlsc != nil, done: make(chan error, 2)}
	if tlsc != nil {
		p.grpcOpts = append(p.grpcOpts, grpc.Creds(credentials.NewTLS(tlsc)))
	}
	if grpcAddr != "" {
		gln, err := net.Listen("tcp", grpcAddr)
		if err != nil {
			_ = ln.Close()
			return nil, &ListenError{Port: "gRPC", Addr: grpcAddr, Err: err}
		}
		// The gRPC port, like the HTTP port, answers from the moment it is
		// bound: health NOT_SERVING and not_ready until the service serves
		// it on the same port (Handoff).
		p.grpc = NewHandoff(gln)
		p.starting = starting.GRPC(p.grpcOpts...)
		go func() { _ = p.starting.Serve(p.grpc.Phase()) }()
	}
	var h http.Handler = starting
	p.current.Store(&h)
	// Each server gets its own copy of the TLS configuration: net/http
	// adds its protocols to the one it is given.
	p.http = &http.Server{ReadHeaderTimeout: 5 * time.Second, TLSConfig: tlsc.Clone(),
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { (*p.current.Load()).ServeHTTP(w, r) })}
	go func() {
		if tlsc != nil {
			p.done <- p.http.ServeTLS(ln, "", "")
			return
		}
		p.done <- p.http.Serve(ln)
	}()
	return p, nil
}

// Addr is the HTTP port's address.
func (p *Ports) Addr() net.Addr { return p.ln.Addr() }

// URL is the HTTP port's address with its scheme, http or https.
func (p *Ports) URL() string {
	if p.tls {
		return "https://" + p.ln.Addr().String()
	}
	return "http://" + p.ln.Addr().String()
}

// GRPCAddr is the gRPC port's address, nil with gRPC off.
func (p *Ports) GRPCAddr() net.Addr {
	if p.grpc == nil {
		return nil
	}
	return p.grpc.Addr()
}

// Serve hands both ports to svc.
func (p *Ports) Serve(svc *Server) {
	h := svc.Handler()
	p.current.Store(&h)
	if p.grpc == nil {
		return
	}
	p.stopOnce.Do(p.starting.Stop)
	p.service = svc.GRPC(p.grpcOpts...)
	go func() { p.done <- p.service.Serve(p.grpc.Phase()) }()
}

// Done delivers the error of a port's server that stopped serving on its
// own.
func (p *Ports) Done() <-chan error { return p.done }

// Shutdown stops both ports' service: they accept nothing more, and the
// requests in flight finish within bound; gRPC calls still running then
// are cut off.
func (p *Ports) Shutdown(bound time.Duration) error {
	sctx, cancel := context.WithTimeout(context.Background(), bound)
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

// Close ends what is left on both ports: the starting gRPC server, the
// HTTP server (after Shutdown, or on an early return) and the ports.
// Their errors say nothing new.
func (p *Ports) Close() {
	if p.grpc != nil {
		p.stopOnce.Do(p.starting.Stop)
		_ = p.grpc.Close()
	}
	_ = p.http.Close()
	_ = p.ln.Close()
}
