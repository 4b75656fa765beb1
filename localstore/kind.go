package localstore

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/firn-id/firn/segment"
	"github.com/firn-id/firn/store"
)

// kind is the local store's row of the store table, registered by this
// package: node IDs and segments in a data directory of one machine.
var kind = store.Kind{
	Name:     "local",
	Title:    "local",
	Summary:  "the data directory (the default), one machine",
	Rank:     0,
	Default:  true,
	DataDir:  true,
	Segments: true,
	Check:    check,
	Open:     open,
	Describe: describe,
}

func init() { store.Register(kind) }

// DirOf is the data directory the settings name: theirs, or the user's
// default.
func DirOf(s store.Settings) (string, error) {
	if s.DataDir != "" {
		return s.DataDir, nil
	}
	return DefaultDir(s.StateHome, s.Home)
}

// check refuses a DSN given to the local store.
func check(s store.Settings) error {
	if s.DSN != "" {
		return store.Fieldf(s.Field("dsn"), "%s is for %s %s", s.Flag("dsn"), s.Flag("store"), store.Names(store.IsDatabase))
	}
	return nil
}

// describe names the local store by its data directory's path, where
// its state lives.
func describe(s store.Settings) string {
	if dir, err := DirOf(s); err == nil {
		return "local data directory " + dir
	}
	return "local data directory"
}

// open opens the data directory, with the user's node directory.
func open(_ context.Context, s store.Settings) (*store.Conn, error) {
	dir, err := DirOf(s)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(dir); s.MustExist && err != nil {
		return nil, store.Fieldf(s.Field("data_dir"), "data directory %s: %s: nothing to advance there (firn next and firn serve create it; --data-dir names another)", dir, errors.Unwrap(err))
	}
	nodeDir, err := DefaultNodeDir(s.StateHome, s.Home)
	if err != nil {
		return nil, err
	}
	st, err := Open(Config{Dir: dir, NodeDir: nodeDir})
	if errors.Is(err, ErrLocked) {
		// Another directory would not help: the node directory is shared.
		return nil, fmt.Errorf("%w: stop it, or ask it for IDs (firn next and firn tag find a firn serve there on their own, "+
			"or name one with --server URL); several servers share a registry (--store %s)", err,
			store.Names(func(k store.Kind) bool { return !k.DataDir }))
	}
	if err != nil {
		return nil, err
	}
	return &store.Conn{Nodes: st, Segments: func() (segment.Store, error) { return st.Segments(), nil }, Close: st.Close}, nil
}
