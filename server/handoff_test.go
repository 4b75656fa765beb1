package server_test

import (
	"errors"
	"net"
	"testing"

	"github.com/firn-id/firn/server"
)

// TestHandoff: a phase's Close ends that phase alone; the next phase
// accepts the port's later connections; Close ends every phase and the
// port.
func TestHandoff(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h := server.NewHandoff(ln)
	accept := func(l net.Listener) {
		t.Helper()
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		got, err := l.Accept()
		if err != nil {
			t.Fatalf("accept: %v", err)
		}
		if got.RemoteAddr().String() != c.LocalAddr().String() {
			t.Fatalf("accepted %s, dialled from %s", got.RemoteAddr(), c.LocalAddr())
		}
		got.Close()
	}
	first := h.Phase()
	accept(first)
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := first.Accept(); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("a closed phase accepted: %v", err)
	}
	second := h.Phase()
	if second.Addr().String() != ln.Addr().String() || h.Addr().String() != ln.Addr().String() {
		t.Fatalf("phase address %s, the port's %s", second.Addr(), ln.Addr())
	}
	accept(second)
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := second.Accept(); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("after close, a phase accepted: %v", err)
	}
	if c, err := net.Dial("tcp", ln.Addr().String()); err == nil {
		c.Close()
		t.Fatal("the port still accepts connections after close")
	}
}

// TestHandoffClosedUnused: a hand-off closed before any phase closes the
// port and returns.
func TestHandoffClosedUnused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if err := server.NewHandoff(ln).Close(); err != nil {
		t.Fatal(err)
	}
	if c, err := net.Dial("tcp", ln.Addr().String()); err == nil {
		c.Close()
		t.Fatal("the port still accepts connections after Close")
	}
}
