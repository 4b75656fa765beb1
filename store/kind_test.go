package store_test

import (
	"context"
	"errors"
	"testing"

	"github.com/firn-id/firn/store"
)

func row(name string, rank int, database bool) store.Kind {
	return store.Kind{Name: name, Rank: rank, Database: database,
		Check: func(store.Settings) error { return nil },
		Open:  func(context.Context, store.Settings) (*store.Conn, error) { return nil, errors.New("not dialed") }}
}

// TestTable: rows list in rank order whatever order they register in,
// a second row of one name panics, and an unknown kind is a field error
// naming the registered ones.
func TestTable(t *testing.T) {
	store.Register(row("test-b", 1001, true))
	store.Register(row("test-a", 1000, false))
	if got := store.Names(func(k store.Kind) bool { return k.Rank >= 1000 }); got != "test-a or test-b" {
		t.Fatalf("Names = %q; want rank order", got)
	}
	if got := store.Names(func(k store.Kind) bool { return k.Rank >= 1000 && k.Database }); got != "test-b" {
		t.Fatalf("Names of databases = %q", got)
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Fatal("a second row named test-a registered")
			}
		}()
		store.Register(row("test-a", 0, false))
	}()
	err := store.Check(store.Settings{Store: "nope"})
	var fe *store.FieldError
	if !errors.As(err, &fe) || fe.Field != "registry.store" || !errors.Is(err, store.ErrConfig) || err.Error() != `--store "nope": want test-a or test-b` {
		t.Fatalf("Check of an unknown kind: %v; want a field error of registry.store", err)
	}
	if err := store.Check(store.Settings{Store: "test-b", DataDir: "/var/lib/firn", Section: "segments"}); !errors.As(err, &fe) || fe.Field != "segments.data_dir" {
		t.Fatalf("a data directory beside a store that keeps none: %v", err)
	}
}
