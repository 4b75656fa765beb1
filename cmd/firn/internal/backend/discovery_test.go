package backend_test

import (
	"errors"
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
