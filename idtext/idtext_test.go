package idtext_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/firn-id/firn/idtext"
)

func ExampleAppendBase62() {
	fmt.Println(string(idtext.AppendBase62(nil, 1234567890123456789)))
	fmt.Println(string(idtext.AppendBase32(nil, 1234567890123456789)))
	// Output:
	// 1TCKi1nFuNh
	// 128GGYHYYK08N
}

// reference62 and reference32 encode with math/big, mapping its digits onto
// the packages' alphabets: an implementation that shares no code with
// idtext's.
func reference62(id uint64) string {
	s := new(big.Int).SetUint64(id).Text(62) // 0-9a-zA-Z
	swapped := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z':
			return r - 'a' + 'A'
		case r >= 'A' && r <= 'Z':
			return r - 'A' + 'a'
		}
		return r
	}, s)
	return strings.Repeat("0", idtext.Base62Width-len(s)) + swapped
}

func reference32(id uint64) string {
	const crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
	s := new(big.Int).SetUint64(id).Text(32) // 0-9a-v
	var b strings.Builder
	for _, r := range s {
		v := strings.IndexRune("0123456789abcdefghijklmnopqrstuv", r)
		b.WriteByte(crockford[v])
	}
	return strings.Repeat("0", idtext.Base32Width-len(s)) + b.String()
}

func samples() []uint64 {
	out := []uint64{0, 1, 61, 62, 63, 31, 32, 1<<53 - 1, 1 << 53, math.MaxInt64, math.MaxInt64 + 1, math.MaxUint64 - 1, math.MaxUint64}
	rng := rand.New(rand.NewPCG(5, 6))
	for range 2000 {
		out = append(out, rng.Uint64()>>rng.IntN(64))
	}
	return out
}

func TestAgainstReference(t *testing.T) {
	for _, id := range samples() {
		if got, want := string(idtext.AppendBase62(nil, id)), reference62(id); got != want {
			t.Fatalf("AppendBase62(%d) = %s, want %s", id, got, want)
		}
		if got, want := string(idtext.AppendBase32(nil, id)), reference32(id); got != want {
			t.Fatalf("AppendBase32(%d) = %s, want %s", id, got, want)
		}
		if back, err := idtext.ParseBase62(reference62(id)); err != nil || back != id {
			t.Fatalf("ParseBase62(%s) = %d, %v; want %d", reference62(id), back, err, id)
		}
		if back, err := idtext.ParseBase32(strings.ToLower(reference32(id))); err != nil || back != id {
			t.Fatalf("ParseBase32(lower %s) = %d, %v; want %d", reference32(id), back, err, id)
		}
	}
}

// TestSortsAsNumbers: fixed width makes byte order the numeric order.
func TestSortsAsNumbers(t *testing.T) {
	ids := samples()
	for i := 1; i < len(ids); i++ {
		a, b := ids[i-1], ids[i]
		for _, enc := range []func([]byte, uint64) []byte{idtext.AppendBase62, idtext.AppendBase32} {
			sa, sb := string(enc(nil, a)), string(enc(nil, b))
			if (a < b) != (sa < sb) || (a == b) != (sa == sb) {
				t.Fatalf("%d vs %d encode as %s vs %s: order differs", a, b, sa, sb)
			}
		}
	}
}

func TestCrockfordAliases(t *testing.T) {
	want, err := idtext.ParseBase32("0000000000011")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"OOOOOOOOOOOIL", "ooooooooooo1l", "00000000000i1"} {
		if got, err := idtext.ParseBase32(s); err != nil || got != want {
			t.Errorf("ParseBase32(%s) = %d, %v; want %d", s, got, err, want)
		}
	}
}

func TestParseRefuses(t *testing.T) {
	tests := []struct {
		name  string
		parse func(string) (uint64, error)
		in    string
	}{
		{"base62 short", idtext.ParseBase62, "1TCKi1nFuN"},
		{"base62 long", idtext.ParseBase62, "01TCKi1nFuNh"},
		{"base62 empty", idtext.ParseBase62, ""},
		{"base62 symbol", idtext.ParseBase62, "1TCKi1nFu-h"},
		{"base62 past 2^64-1", idtext.ParseBase62, "LygHa16AHYG"},
		{"base62 max string", idtext.ParseBase62, "zzzzzzzzzzz"},
		{"base32 short", idtext.ParseBase32, "128GGYHYYK08"},
		{"base32 U", idtext.ParseBase32, "128GGYHYYK08U"},
		{"base32 hyphen", idtext.ParseBase32, "128GGYHY-K08N"},
		{"base32 past 2^64-1", idtext.ParseBase32, "G000000000000"},
		{"base32 non-ASCII", idtext.ParseBase32, "128GGYHYYK0é"},
	}
	for _, tc := range tests {
		if got, err := tc.parse(tc.in); !errors.Is(err, idtext.ErrSyntax) {
			t.Errorf("%s: Parse(%q) = %d, %v; want ErrSyntax", tc.name, tc.in, got, err)
		}
	}
	if got, err := idtext.ParseBase62("LygHa16AHYF"); err != nil || got != math.MaxUint64 {
		t.Errorf("ParseBase62 of 2^64-1 = %d, %v", got, err)
	}
	if got, err := idtext.ParseBase32("FZZZZZZZZZZZZ"); err != nil || got != math.MaxUint64 {
		t.Errorf("ParseBase32 of 2^64-1 = %d, %v", got, err)
	}
}

func FuzzBase62(f *testing.F) {
	f.Add("1TCKi1nFuNh")
	f.Add("zzzzzzzzzzz")
	f.Fuzz(func(t *testing.T, s string) {
		id, err := idtext.ParseBase62(s)
		if err != nil {
			return
		}
		if back := string(idtext.AppendBase62(nil, id)); back != s {
			t.Fatalf("ParseBase62(%q) = %d, which encodes as %q", s, id, back)
		}
	})
}

func FuzzBase32(f *testing.F) {
	f.Add("128GGYHYYK08N")
	f.Add("oooooooooooil")
	f.Fuzz(func(t *testing.T, s string) {
		id, err := idtext.ParseBase32(s)
		if err != nil {
			return
		}
		canon := strings.NewReplacer("O", "0", "I", "1", "L", "1").Replace(strings.ToUpper(s))
		if back := string(idtext.AppendBase32(nil, id)); back != canon {
			t.Fatalf("ParseBase32(%q) = %d, which encodes as %q, want %q", s, id, back, canon)
		}
	})
}

func FuzzRoundTrip(f *testing.F) {
	f.Add(uint64(0))
	f.Add(uint64(math.MaxUint64))
	f.Fuzz(func(t *testing.T, id uint64) {
		if back, err := idtext.ParseBase62(string(idtext.AppendBase62(nil, id))); err != nil || back != id {
			t.Fatalf("base62 round trip of %d: %d, %v", id, back, err)
		}
		if back, err := idtext.ParseBase32(string(idtext.AppendBase32(nil, id))); err != nil || back != id {
			t.Fatalf("base32 round trip of %d: %d, %v", id, back, err)
		}
	})
}

var sink []byte

func BenchmarkAppendBase62(b *testing.B) {
	buf := make([]byte, 0, 16)
	b.ReportAllocs()
	var id uint64 = 1 << 62
	for b.Loop() {
		sink = idtext.AppendBase62(buf[:0], id)
		id++
	}
}

func BenchmarkAppendBase32(b *testing.B) {
	buf := make([]byte, 0, 16)
	b.ReportAllocs()
	var id uint64 = 1 << 62
	for b.Loop() {
		sink = idtext.AppendBase32(buf[:0], id)
		id++
	}
}

func TestEncodings(t *testing.T) {
	for _, name := range []string{"decimal", "base62", "base32"} {
		e, err := idtext.ParseEncoding(name)
		if err != nil || e.String() != name {
			t.Fatalf("ParseEncoding(%s) = %v, %v", name, e, err)
		}
		for _, id := range samples() {
			s := string(e.Append(nil, id))
			if back, err := e.Parse(s); err != nil || back != id {
				t.Fatalf("%s: Parse(Append(%d)) = %d, %v", name, id, back, err)
			}
		}
		if _, err := e.Parse("not an id!"); !errors.Is(err, idtext.ErrSyntax) {
			t.Fatalf("%s: Parse of garbage: %v", name, err)
		}
	}
	if e, err := idtext.ParseEncoding(""); err != nil || e != idtext.Decimal {
		t.Fatalf(`ParseEncoding("") = %v, %v; want decimal`, e, err)
	}
	if _, err := idtext.ParseEncoding("base64"); !errors.Is(err, idtext.ErrEncoding) {
		t.Fatalf("ParseEncoding(base64): %v", err)
	}
	bad := idtext.Encoding(9)
	if _, err := bad.Parse("12"); bad.Valid() || bad.String() != "Encoding(9)" || !errors.Is(err, idtext.ErrEncoding) {
		t.Fatalf("Encoding(9): valid %v, %q, Parse: %v; want not valid, named as such, refusing to parse", bad.Valid(), bad, err)
	}
}

func ExampleEncoding_AppendLines() {
	fmt.Printf("%s", idtext.Base62.AppendLines(nil, []int64{1, 175928847299117063}))
	// Output:
	// 00000000001
	// 0Czks0tP37X
}

// Five IDs from a counting source, asked for two at a time.
func ExampleEncoding_WriteLines() {
	next := int64(0)
	fill := func(_ context.Context, dst []int64) (int, error) {
		for i := range dst {
			next++
			dst[i] = next * 1000
		}
		return len(dst), nil
	}
	if err := idtext.Base32.WriteLines(context.Background(), os.Stdout, 5, 2, fill); err != nil {
		fmt.Println(err)
	}
	// Output:
	// 00000000000Z8
	// 00000000001YG
	// 00000000002XR
	// 00000000003X0
	// 00000000004W8
}

// A failing source: the IDs of the failing call are written, then the
// error is returned.
func TestWriteLinesError(t *testing.T) {
	boom := errors.New("boom")
	var b strings.Builder
	err := idtext.Decimal.WriteLines(context.Background(), &b, 10, 4, func(_ context.Context, dst []int64) (int, error) {
		dst[0] = 7
		return 1, boom
	})
	if !errors.Is(err, boom) || b.String() != "7\n" {
		t.Fatalf("WriteLines: %q, %v; want 7 then boom", b.String(), err)
	}
}
