package migrate_test

import (
	"testing"

	"github.com/firn-id/firn/migrate"
)

func TestParseColumn(t *testing.T) {
	for in, want := range map[string]*migrate.Column{
		"orders.id": {Table: "orders", Column: "id"}, "s.t.c": {Table: "s", Column: "t.c"},
		"orders": nil, ".id": nil, "orders.": nil, "": nil,
	} {
		got, err := migrate.ParseColumn(in)
		switch {
		case want == nil && err == nil:
			t.Errorf("ParseColumn(%q) = %+v: want an error", in, got)
		case want != nil && (err != nil || got != *want):
			t.Errorf("ParseColumn(%q) = %+v, %v: want %+v", in, got, err, *want)
		}
	}
}

func TestParseFloor(t *testing.T) {
	for in, want := range map[string]uint64{"": 0, "1": 1, "9223372036854775807": 1<<63 - 1} {
		if got, err := migrate.ParseFloor(in); err != nil || got != want {
			t.Errorf("ParseFloor(%q) = %d, %v: want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"0", "-1", "9223372036854775808", "1e3", " 1"} {
		if got, err := migrate.ParseFloor(in); err == nil {
			t.Errorf("ParseFloor(%q) = %d: want an error", in, got)
		}
	}
}
