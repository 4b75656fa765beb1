package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// A firn serve on the local store holds its data directory's lock, so
// firn next and firn tag cannot open the directory beside it. The server
// writes its address into the directory (the discovery file, never a
// token); the commands then ask the server instead.

// discoveryName is the discovery file in the data directory.
const discoveryName = "serve.json"

// discovery is the discovery file's content: the address only.
type discovery struct {
	HTTP string `json:"http"` // base URL, such as http://127.0.0.1:8080
}

// writeDiscovery records where the server listens, replacing the file
// atomically.
func writeDiscovery(dir, base string) error {
	b, err := json.Marshal(discovery{HTTP: base})
	if err != nil {
		return err
	}
	tmp := filepath.Join(dir, discoveryName+".tmp")
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("write discovery file: %w", err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, discoveryName)); err != nil {
		return fmt.Errorf("write discovery file: %w", err)
	}
	return nil
}

// removeDiscovery removes the discovery file; a missing one is fine.
func removeDiscovery(dir string) error {
	if err := os.Remove(filepath.Join(dir, discoveryName)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove discovery file: %w", err)
	}
	return nil
}

// readDiscovery returns the base URL of the server holding dir.
func readDiscovery(dir string) (string, error) {
	b, err := os.ReadFile(filepath.Join(dir, discoveryName))
	if err != nil {
		return "", err
	}
	var d discovery
	if err := json.Unmarshal(b, &d); err != nil || d.HTTP == "" {
		return "", fmt.Errorf("discovery file %s: not firn serve's", filepath.Join(dir, discoveryName))
	}
	return d.HTTP, nil
}
