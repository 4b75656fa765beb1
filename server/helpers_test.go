package server_test

import (
	"net/http"
	"testing"

	"google.golang.org/grpc"

	"github.com/firn-id/firn/server"
	"github.com/firn-id/firn/snowflake"
)

// newServer builds a server of cfg or fails the test.
func newServer(t testing.TB, cfg *server.Config) *server.Server {
	t.Helper()
	s, err := server.New(*cfg)
	if err != nil {
		t.Fatalf("server.New: %v", err)
	}
	return s
}

// handlerOf is the HTTP API of a server of cfg.
func handlerOf(t testing.TB, cfg *server.Config) http.Handler { return newServer(t, cfg).Handler() }

// newGRPCServer is the gRPC server of a server of cfg.
func newGRPCServer(t testing.TB, cfg *server.Config, opts ...grpc.ServerOption) *grpc.Server {
	return newServer(t, cfg).GRPC(opts...)
}

// unreservedGenerator is a generator of the default layout that needs no
// store.
func unreservedGenerator(t testing.TB) *snowflake.Generator {
	t.Helper()
	g, err := snowflake.New(snowflake.Config{Reservation: snowflake.Unreserved()})
	if err != nil {
		t.Fatal(err)
	}
	return g
}
