package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/firn-id/firn/server"
)

// shutdownBound bounds a stop's wait for the requests in flight, on both
// ports together; a variable so tests can hold a stop open.
var shutdownBound = 10 * time.Second

// ports are firn serve's HTTP and gRPC ports (server.Ports) and the catch
// of SIGHUP, from the moment they are bound: its default action would end
// the process.
type ports struct {
	*server.Ports
	hup chan os.Signal
}

// listenHints say which flag moves a port that cannot be bound.
var listenHints = map[string]string{"HTTP": "HTTP: choose another address with --http",
	"gRPC": "gRPC: choose another address with --grpc, or --grpc off"}

// listen binds both ports and answers on them with starting.
func listen(o serveOptions, starting *server.Starting) (*ports, error) {
	grpcAddr := o.cfg.GRPC.Listen
	if grpcAddr == "off" {
		grpcAddr = ""
	}
	sp, err := server.Listen(o.cfg.HTTP.Listen, grpcAddr, o.TLS, starting)
	var le *server.ListenError
	if errors.As(err, &le) {
		return nil, fmt.Errorf("listen on %s: %w (%s)", le.Addr, le.Err, listenHints[le.Port])
	}
	if err != nil {
		return nil, err
	}
	p := &ports{Ports: sp, hup: make(chan os.Signal, 1)}
	signal.Notify(p.hup, syscall.SIGHUP)
	return p, nil
}

// serve hands both ports to the service.
func (p *ports) serve(svc *server.Server, log *slog.Logger) {
	p.Serve(svc)
	if a := p.GRPCAddr(); a != nil {
		log.Info("serving gRPC", "addr", a.String())
	}
}

// wait serves until ctx ends or a server stops on its own (its error).
func (p *ports) wait(ctx context.Context, log *slog.Logger) error {
	for {
		select {
		case err := <-p.Done():
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

// close ends what is left on both ports and the catch of SIGHUP.
func (p *ports) close() {
	signal.Stop(p.hup)
	p.Close()
}
