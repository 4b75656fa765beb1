package localstore

import (
	"errors"
	"os"
	"path/filepath"
)

// DefaultDir returns the per-user data directory given the values of
// XDG_STATE_HOME and the home directory: $XDG_STATE_HOME/firn, or
// ~/.local/state/firn when XDG_STATE_HOME is unset or relative.
func DefaultDir(xdgStateHome, home string) (string, error) {
	if filepath.IsAbs(xdgStateHome) {
		return filepath.Join(xdgStateHome, "firn"), nil
	}
	if !filepath.IsAbs(home) {
		return "", errors.New("localstore: no home directory for the default data directory: set XDG_STATE_HOME or name a directory")
	}
	return filepath.Join(home, ".local", "state", "firn"), nil
}

// DefaultNodeDir returns the user's node directory, which every data
// directory of the user shares and which holds a node directory per
// layout (Config.NodeDir), given the same values as DefaultDir: nodes/ in
// the default data directory.
func DefaultNodeDir(xdgStateHome, home string) (string, error) {
	dir, err := DefaultDir(xdgStateHome, home)
	if err != nil {
		return "", errors.New("localstore: no home directory for the node directory every data directory shares: set XDG_STATE_HOME or HOME")
	}
	return filepath.Join(dir, "nodes"), nil
}

// writeFile replaces path with data durably: a temporary file, fsync,
// rename over path, fsync of the directory.
func writeFile(path string, data []byte) error { return publish(path, data, os.Rename) }

// publish writes data to a temporary file beside path, fsyncs it, moves it
// to path with place (os.Rename replaces; os.Link refuses an existing
// path) and fsyncs the directory.
func publish(path string, data []byte, place func(tmp, path string) error) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	defer func() { _ = os.Remove(tmp.Name()) }() // gone after a rename; a link leaves path
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
	if err := place(tmp.Name(), path); err != nil {
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

// createFile writes path durably only if it does not exist (an error
// matching os.ErrExist if it does): a temporary file, fsync, a hard link
// to path, fsync of the directory.
func createFile(path string, data []byte) error { return publish(path, data, os.Link) }

// UserDirs returns the user's $XDG_STATE_HOME and home directory, the
// values DefaultDir and DefaultNodeDir take, as every program of firn's
// reads them: firn's commands and a program embedding package ids share
// the user's node directory only if they read them alike.
func UserDirs() (xdgStateHome, home string) {
	home, _ = os.UserHomeDir()
	return os.Getenv("XDG_STATE_HOME"), home
}
