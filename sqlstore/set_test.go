package sqlstore_test

import (
	"testing"

	"github.com/firn-id/firn/segment"
	"github.com/firn-id/firn/sqlstore"
)

// TestSetStoreKeepsTinyidsInterfaces: SetStore wraps Tinyid, and segment
// finds its optional methods by type assertion: one the wrapper forgot to
// forward would be skipped without an error — the table's column limits,
// a collation that takes "Order" for "order", a residue class or a
// permutation recorded with a new row, a row moved to another class.
func TestSetStoreKeepsTinyidsInterfaces(t *testing.T) {
	var s any = &sqlstore.SetStore{}
	for name, ok := range map[string]bool{
		"segment.Limiter":        is[segment.Limiter](s),
		"segment.Collider":       is[segment.Collider](s),
		"segment.ResidueCreator": is[segment.ResidueCreator](s),
		"segment.OpaqueCreator":  is[segment.OpaqueCreator](s),
		"segment.Reclasser":      is[segment.Reclasser](s),
	} {
		if !ok {
			t.Errorf("*sqlstore.SetStore is not a %s, as *sqlstore.Tinyid is", name)
		}
	}
}

func is[T any](v any) bool { _, ok := v.(T); return ok }
