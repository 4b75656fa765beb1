package localstore

import (
	"errors"
	"os"
	"path/filepath"
)

// DefaultDir returns the per-user data directory: $XDG_STATE_HOME/firn,
// or ~/.local/state/firn when XDG_STATE_HOME is unset or relative.
func DefaultDir() (string, error) {
	if x := os.Getenv("XDG_STATE_HOME"); filepath.IsAbs(x) {
		return filepath.Join(x, "firn"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", errors.New("localstore: no home directory for the default data directory: set XDG_STATE_HOME or name a directory")
	}
	return filepath.Join(home, ".local", "state", "firn"), nil
}

// writeFile replaces path with data durably: a temporary file, fsync,
// rename over path, fsync of the directory.
func writeFile(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	return syncDir(filepath.Dir(path))
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
