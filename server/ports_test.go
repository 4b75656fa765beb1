package server_test

import (
	"errors"
	"net"
	"testing"

	"github.com/firn-id/firn/server"
)

// A port already held is a *server.ListenError naming the port and the
// address, wrapping net.Listen's error.
func TestListenBusy(t *testing.T) {
	held, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	_, err = server.Listen(held.Addr().String(), "", nil, nil)
	var le *server.ListenError
	if !errors.As(err, &le) || le.Port != "HTTP" || le.Addr != held.Addr().String() || le.Err == nil {
		t.Fatalf("Listen on a held port: %v, want a *server.ListenError for HTTP at %s", err, held.Addr())
	}
}
