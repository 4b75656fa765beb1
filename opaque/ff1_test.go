package opaque_test

import (
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	"github.com/firn-id/firn/opaque"
)

// The nine FF1 samples of NIST's "FF1samples.pdf" (Cryptographic Standards
// and Guidelines, examples for SP 800-38G): AES-128, -192 and -256, each
// with radix 10 and no tweak, radix 10 with a 10-byte tweak, and radix 36
// with an 11-byte tweak.
var nistSamples = []struct {
	name, key, tweak string
	radix            int
	pt, ct           string
}{
	{"sample 1", "2B7E151628AED2A6ABF7158809CF4F3C", "", 10, "0123456789", "2433477484"},
	{"sample 2", "2B7E151628AED2A6ABF7158809CF4F3C", "39383736353433323130", 10, "0123456789", "6124200773"},
	{"sample 3", "2B7E151628AED2A6ABF7158809CF4F3C", "3737373770717273373737", 36, "0123456789abcdefghi", "a9tv40mll9kdu509eum"},
	{"sample 4", "2B7E151628AED2A6ABF7158809CF4F3CEF4359D8D580AA4F", "", 10, "0123456789", "2830668132"},
	{"sample 5", "2B7E151628AED2A6ABF7158809CF4F3CEF4359D8D580AA4F", "39383736353433323130", 10, "0123456789", "2496655549"},
	{"sample 6", "2B7E151628AED2A6ABF7158809CF4F3CEF4359D8D580AA4F", "3737373770717273373737", 36, "0123456789abcdefghi", "xbj3kv35jrawxv32ysr"},
	{"sample 7", "2B7E151628AED2A6ABF7158809CF4F3CEF4359D8D580AA4F7F036D6F04FC6A94", "", 10, "0123456789", "6657667009"},
	{"sample 8", "2B7E151628AED2A6ABF7158809CF4F3CEF4359D8D580AA4F7F036D6F04FC6A94", "39383736353433323130", 10, "0123456789", "1001623463"},
	{"sample 9", "2B7E151628AED2A6ABF7158809CF4F3CEF4359D8D580AA4F7F036D6F04FC6A94", "3737373770717273373737", 36, "0123456789abcdefghi", "xs8a0azh2avyalyzuwd"},
}

const digits36 = "0123456789abcdefghijklmnopqrstuvwxyz"

func numerals(s string) []uint16 {
	out := make([]uint16, len(s))
	for i, c := range s {
		out[i] = uint16(strings.IndexRune(digits36, c))
	}
	return out
}

func text(x []uint16) string {
	var b strings.Builder
	for _, d := range x {
		b.WriteByte(digits36[d])
	}
	return b.String()
}

func mustHex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestFF1NISTSamples(t *testing.T) {
	for _, s := range nistSamples {
		t.Run(s.name, func(t *testing.T) {
			f, err := opaque.NewFF1(mustHex(t, s.key), s.radix)
			if err != nil {
				t.Fatal(err)
			}
			tweak := mustHex(t, s.tweak)
			ct, err := f.Encrypt(numerals(s.pt), tweak)
			if err != nil {
				t.Fatal(err)
			}
			if got := text(ct); got != s.ct {
				t.Errorf("Encrypt(%s) = %s, want %s", s.pt, got, s.ct)
			}
			pt, err := f.Decrypt(numerals(s.ct), tweak)
			if err != nil {
				t.Fatal(err)
			}
			if got := text(pt); got != s.pt {
				t.Errorf("Decrypt(%s) = %s, want %s", s.ct, got, s.pt)
			}
		})
	}
}

func TestFF1Refuses(t *testing.T) {
	key := make([]byte, 16)
	tests := []struct {
		name  string
		key   []byte
		radix int
		x     []uint16
		tweak []byte
		want  error
	}{
		{name: "short key", key: make([]byte, 15), radix: 10, want: opaque.ErrKey},
		{name: "radix 1", key: key, radix: 1, want: opaque.ErrDomain},
		{name: "radix above 2^16", key: key, radix: 1<<16 + 1, want: opaque.ErrDomain},
		{name: "domain below a million", key: key, radix: 10, x: make([]uint16, 5), want: opaque.ErrDomain},
		{name: "19 bits", key: key, radix: 2, x: make([]uint16, 19), want: opaque.ErrDomain},
		{name: "too long", key: key, radix: 10, x: make([]uint16, opaque.MaxLen+1), want: opaque.ErrDomain},
		{name: "numeral not below radix", key: key, radix: 10, x: []uint16{0, 1, 2, 3, 4, 5, 10}, want: opaque.ErrNumeral},
		{name: "tweak too long", key: key, radix: 10, x: make([]uint16, 6), tweak: make([]byte, opaque.MaxTweak+1), want: opaque.ErrTweak},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, err := opaque.NewFF1(tc.key, tc.radix)
			if err == nil {
				_, err = f.Encrypt(tc.x, tc.tweak)
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
		})
	}
	f, err := opaque.NewFF1(key, 2)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Encrypt(make([]uint16, 20), nil); err != nil {
		t.Fatalf("20 bits, the smallest binary domain the standard allows: %v", err)
	}
}
