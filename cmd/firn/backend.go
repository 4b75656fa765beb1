package main

import (
	"errors"
	"slices"
	"strings"

	"github.com/firn-id/firn/nodeid"
	"github.com/firn-id/firn/segment"
	"github.com/firn-id/firn/sqlstore"
)

// A backend is one kind of store that can hold node IDs with their HWMs
// and segment counters. The table below is the one list of them: flags,
// configuration checks, help and messages read it. Adding a backend is
// its own package (a nodeid.Store and a segment.Store) and one line here
// with the function that opens it.
type backend struct {
	name    string
	summary string // for --store's help
	open    func(f *storeFlags) (*opened, error)
}

// opened is one open connection to a store: its node store, its segment
// store (over the same connection, sharing the local directory's lock or
// the etcd client), and what closes it.
type opened struct {
	nodes    nodeid.Store
	segments func() (segment.Store, error)
	close    func() error
}

var backends = []backend{
	{"local", "the data directory (the default), one machine", openLocal},
	{"etcd", "node IDs on etcd leases, a key prefix per namespace", openEtcd},
	{"postgres", "PostgreSQL: firn_nodes, and Leaf's or Tinyid's segment table", openSQL(sqlstore.Postgres)},
	{"mysql", "MySQL or MariaDB, as postgres", openSQL(sqlstore.MySQL)},
}

// backendNames lists the backends, for messages: "local, etcd, postgres or mysql".
func backendNames() string {
	names := make([]string, len(backends))
	for i, b := range backends {
		names[i] = b.name
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// backendHelp is one line per backend for --store's help.
func backendHelp() string {
	var b strings.Builder
	for _, be := range backends {
		b.WriteString("                        " + be.name + ": " + be.summary + "\n")
	}
	return b.String()
}

// backendKinds lists the backends' names.
func backendKinds() []string {
	kinds := make([]string, len(backends))
	for i, b := range backends {
		kinds[i] = b.name
	}
	return kinds
}

// lookupBackend returns the backend named kind, or a usage error naming
// the choices.
func lookupBackend(kind string) (backend, error) {
	if i := slices.IndexFunc(backends, func(b backend) bool { return b.name == kind }); i >= 0 {
		return backends[i], nil
	}
	return backend{}, usagef("--store %q: want %s", kind, backendNames())
}

// openBackend opens the store of kind with f's settings.
func (f *storeFlags) openBackend(kind string) (*opened, error) {
	b, err := lookupBackend(kind)
	if err != nil {
		return nil, err
	}
	if err := f.checkDataDir(); err != nil {
		return nil, err
	}
	return b.open(f)
}

// closeAll closes what opened, in reverse order, joining the errors.
func closeAll(closers ...func() error) func() error {
	return func() error {
		var errs []error
		for i := len(closers) - 1; i >= 0; i-- {
			if closers[i] != nil {
				errs = append(errs, closers[i]())
			}
		}
		return errors.Join(errs...)
	}
}
