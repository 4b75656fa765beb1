package backend

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
)

// A firn serve on the local store holds its data directory's lock, so
// firn next and firn tag cannot open the directory beside it. The server
// writes its address into the directory (the discovery file, never a
// token); the commands then ask the server instead.

// DiscoveryName is the discovery file in the data directory.
const DiscoveryName = "serve.json"

// discovery is the discovery file's content: the address only.
type discovery struct {
	HTTP string `json:"http"` // base URL, such as http://127.0.0.1:8080
}

// WriteDiscovery records where the server listens, replacing the file
// atomically.
func WriteDiscovery(dir, base string) error {
	b, err := json.Marshal(discovery{HTTP: base})
	if err != nil {
		return err
	}
	tmp := filepath.Join(dir, DiscoveryName+".tmp")
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("write discovery file: %w", err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, DiscoveryName)); err != nil {
		return fmt.Errorf("write discovery file: %w", err)
	}
	return nil
}

// Announce records that a server listens at addr (a listener's
// address; TLS when tls is set) as a client dials it (DialAddr).
func Announce(dir string, addr net.Addr, tls bool) error {
	scheme := "http"
	if tls {
		scheme = "https"
	}
	return WriteDiscovery(dir, scheme+"://"+DialAddr(addr))
}

// DialAddr is a listener's address as a client dials it: an unspecified
// host (0.0.0.0, ::) becomes loopback.
func DialAddr(a net.Addr) string {
	t, ok := a.(*net.TCPAddr)
	if !ok || !t.IP.IsUnspecified() {
		return a.String()
	}
	if t.IP.To4() != nil {
		return net.JoinHostPort("127.0.0.1", strconv.Itoa(t.Port))
	}
	return net.JoinHostPort("::1", strconv.Itoa(t.Port))
}

// RemoveDiscovery removes the discovery file; a missing one is fine.
func RemoveDiscovery(dir string) error {
	if err := os.Remove(filepath.Join(dir, DiscoveryName)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove discovery file: %w", err)
	}
	return nil
}

// ReadDiscovery returns the base URL of the server holding dir.
func ReadDiscovery(dir string) (string, error) {
	b, err := os.ReadFile(filepath.Join(dir, DiscoveryName))
	if err != nil {
		return "", err
	}
	var d discovery
	if err := json.Unmarshal(b, &d); err != nil || d.HTTP == "" {
		return "", fmt.Errorf("discovery file %s: not firn serve's", filepath.Join(dir, DiscoveryName))
	}
	return d.HTTP, nil
}
