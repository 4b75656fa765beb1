package idtext_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/firn-id/firn/idtext"
)

func ExampleReadIDs() {
	ids, err := idtext.ReadIDs(strings.NewReader("1 2\n  3\n"), 10)
	fmt.Println(ids, err)
	_, err = idtext.ReadIDs(strings.NewReader("1 2 3"), 2)
	fmt.Println(err)
	// Output:
	// [1 2 3] <nil>
	// idtext: more IDs than the bound
}

func TestReadIDsBound(t *testing.T) {
	if ids, err := idtext.ReadIDs(strings.NewReader("a b\tc"), 3); err != nil || !slices.Equal(ids, []string{"a", "b", "c"}) {
		t.Errorf("ReadIDs at the bound = %q, %v; want all three", ids, err)
	}
	if ids, err := idtext.ReadIDs(strings.NewReader("a b c d"), 3); !errors.Is(err, idtext.ErrTooMany) || ids != nil {
		t.Errorf("ReadIDs past the bound = %q, %v; want nil, ErrTooMany", ids, err)
	}
}

func TestSyntaxKind(t *testing.T) {
	for _, tc := range []struct {
		enc  idtext.Encoding
		in   string
		want idtext.SyntaxKind
	}{
		{idtext.Decimal, "18446744073709551616", idtext.OutOfRange},
		{idtext.Decimal, "-1", idtext.Malformed},
		{idtext.Decimal, "12a", idtext.Malformed},
		{idtext.Base62, "zzzzzzzzzzz", idtext.OutOfRange},
		{idtext.Base62, "zzzz", idtext.Malformed},
		{idtext.Base32, "ZZZZZZZZZZZZZ", idtext.OutOfRange},
		{idtext.Base32, "U000000000000", idtext.Malformed},
	} {
		_, err := tc.enc.Parse(tc.in)
		var se *idtext.SyntaxError
		if !errors.As(err, &se) || se.Kind != tc.want {
			t.Errorf("%s.Parse(%q) = %v; want a SyntaxError of kind %d", tc.enc, tc.in, err, tc.want)
		}
	}
}
