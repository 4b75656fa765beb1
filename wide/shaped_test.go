package wide_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/firn-id/firn/snowflake"
	"github.com/firn-id/firn/wide"
)

// FuzzShaped holds Shaped to Parse: a decimal number is never Shaped (a
// caller reads it as an ID of its layout), and whatever Parse reads, or
// refuses in a form it names by length, is Shaped unless it is all
// digits.
func FuzzShaped(f *testing.F) {
	for _, s := range []string{"017F22E2-79B0-7CC3-98C4-DC0C0C07398F", "01ARZ3NDEKTSV4RRFFQ69G5FAV", "507f1f77bcf86cd799439011",
		"0ujtsYcgvSTl8PAuAdqWYSMnLOv", "9m4e2mr0ui3e8a215n4g", "12345678901234567890", "1", "", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		digits := strings.Trim(s, "0123456789") == ""
		if digits && wide.Shaped(s) {
			t.Fatalf("Shaped(%q): a decimal number read as another form", s)
		}
		_, err := wide.Parse(s)
		byLength := err == nil || !strings.Contains(err.Error(), "characters): ")
		if !digits && byLength && !wide.Shaped(s) {
			t.Fatalf("Parse(%q) reads it in a form (err %v), but Shaped says no", s, err)
		}
		if err != nil && !errors.Is(err, wide.ErrUnknownForm) {
			t.Fatalf("Parse(%q): %v does not wrap ErrUnknownForm", s, err)
		}
	})
}

// TestSlot finds the slot of a UUIDv7 and a ULID a generator of the
// layout made, and reports no slot for other forms and versions.
func TestSlot(t *testing.T) {
	l, _ := snowflake.Preset("firn")
	g, err := snowflake.New(snowflake.Config{Layout: l, Node: 5, Reservation: snowflake.Unreserved()})
	if err != nil {
		t.Fatal(err)
	}
	w, err := wide.New(g)
	if err != nil {
		t.Fatal(err)
	}
	u, err := w.NextUUID(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	v, err := w.NextULID(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{u.String(), v.String()} {
		id, err := wide.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		p, ok, err := id.Slot(l)
		if err != nil || !ok {
			t.Fatalf("Slot(%s) = %v, %v: want the slot", s, ok, err)
		}
		if p.Node != 5 {
			t.Errorf("Slot(%s) node %d: want 5", s, p.Node)
		}
	}
	for _, s := range []string{uuid.Must(uuid.NewRandom()).String(), "507f1f77bcf86cd799439011"} {
		id, err := wide.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok, err := id.Slot(l); ok || err != nil {
			t.Errorf("Slot(%s) = %v, %v: want no slot and no error", s, ok, err)
		}
	}
}
