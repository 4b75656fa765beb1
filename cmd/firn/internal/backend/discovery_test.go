package backend_test

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/firn-id/firn/cmd/firn/internal/backend"
)

// TestDiscovery: the address a server writes is read back, a file that is
// not firn serve's is refused, and removing a missing file is fine.
func TestDiscovery(t *testing.T) {
	dir := t.TempDir()
	if err := backend.WriteDiscovery(dir, "http://127.0.0.1:8080"); err != nil {
		t.Fatal(err)
	}
	if base, err := backend.ReadDiscovery(dir); err != nil || base != "http://127.0.0.1:8080" {
		t.Fatalf("ReadDiscovery: %q, %v; want the address written", base, err)
	}
	if err := backend.RemoveDiscovery(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := backend.ReadDiscovery(dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("ReadDiscovery after RemoveDiscovery: %v; want not exist", err)
	}
	if err := backend.RemoveDiscovery(dir); err != nil {
		t.Fatalf("RemoveDiscovery of a missing file: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, backend.DiscoveryName), []byte(`{"other":1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := backend.ReadDiscovery(dir); err == nil {
		t.Fatal("ReadDiscovery of another program's file: no error")
	}
}

// TestDialAddr: an unspecified host is dialled on loopback, of its own
// family; any other address is as it is.
func TestDialAddr(t *testing.T) {
	for _, c := range []struct {
		addr *net.TCPAddr
		want string
	}{
		{&net.TCPAddr{IP: net.IPv4zero, Port: 8080}, "127.0.0.1:8080"},
		{&net.TCPAddr{IP: net.IPv6unspecified, Port: 9090}, "[::1]:9090"},
		{&net.TCPAddr{IP: net.IPv4(10, 0, 0, 1), Port: 80}, "10.0.0.1:80"},
	} {
		if got := backend.DialAddr(c.addr); got != c.want {
			t.Errorf("DialAddr(%v) = %q, want %q", c.addr, got, c.want)
		}
	}
}

// TestAnnounce: a server on every address of a TLS port is announced as
// https on loopback.
func TestAnnounce(t *testing.T) {
	dir := t.TempDir()
	if err := backend.Announce(dir, &net.TCPAddr{IP: net.IPv4zero, Port: 8443}, true); err != nil {
		t.Fatal(err)
	}
	if base, err := backend.ReadDiscovery(dir); err != nil || base != "https://127.0.0.1:8443" {
		t.Fatalf("ReadDiscovery: %q, %v; want https://127.0.0.1:8443", base, err)
	}
}
