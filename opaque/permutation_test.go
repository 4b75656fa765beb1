package opaque_test

import (
	"crypto/aes"
	"errors"
	"math/bits"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/firn-id/firn/opaque"
)

func bitsOf(x uint64, n int) []uint16 {
	out := make([]uint16, n)
	for i := range n {
		out[n-1-i] = uint16(x >> i & 1)
	}
	return out
}

func valueOf(x []uint16) uint64 {
	var v uint64
	for _, d := range x {
		v = v<<1 | uint64(d)
	}
	return v
}

// TestPermutationMatchesFF1 checks the 64-bit fast path against the general
// FF1 at every length it accepts, with keys of every size and tweaks that end
// inside, at and past a block boundary.
func TestPermutationMatchesFF1(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	tweakLens := []int{0, 1, 10, 11, 15, 16, 17, 31, 40}
	for n := opaque.MinBits; n <= opaque.MaxBits; n++ {
		for k, keyLen := range []int{16, 24, 32} {
			key := make([]byte, keyLen)
			for i := range key {
				key[i] = byte(rng.Uint32())
			}
			tweak := make([]byte, tweakLens[(n+k)%len(tweakLens)])
			for i := range tweak {
				tweak[i] = byte(rng.Uint32())
			}
			p, err := opaque.New(key, tweak, n)
			if err != nil {
				t.Fatal(err)
			}
			f, err := opaque.NewFF1(key, 2)
			if err != nil {
				t.Fatal(err)
			}
			for range 8 {
				x := rng.Uint64() >> (64 - n)
				got, err := p.Encode(x)
				if err != nil {
					t.Fatal(err)
				}
				ct, err := f.Encrypt(bitsOf(x, n), tweak)
				if err != nil {
					t.Fatal(err)
				}
				if want := valueOf(ct); got != want {
					t.Fatalf("bits %d, key %d bytes, tweak %d bytes: Encode(%d) = %d, FF1 gives %d", n, keyLen, len(tweak), x, got, want)
				}
				back, err := p.Decode(got)
				if err != nil || back != x {
					t.Fatalf("bits %d: Decode(Encode(%d)) = %d, %v", n, x, back, err)
				}
			}
		}
	}
}

// TestPermutationBijective20 encodes the whole of the smallest domain New
// accepts and checks every image is distinct, in range and decodes back.
func TestPermutationBijective20(t *testing.T) {
	p, err := opaque.New(make([]byte, 16), []byte("firn"), 20)
	if err != nil {
		t.Fatal(err)
	}
	const n = 1 << 20
	seen := make([]bool, n)
	for x := range uint64(n) {
		y, err := p.Encode(x)
		if err != nil {
			t.Fatal(err)
		}
		if y >= n {
			t.Fatalf("Encode(%d) = %d, outside 20 bits", x, y)
		}
		if seen[y] {
			t.Fatalf("Encode(%d) = %d, an image already taken", x, y)
		}
		seen[y] = true
		if back, _ := p.Decode(y); back != x {
			t.Fatalf("Decode(Encode(%d)) = %d", x, back)
		}
	}
}

// TestPermutationLooksRandom63: over the full 63-bit space, fixed points are
// no more frequent than chance (expected 2^-63 per input: any is a failure),
// one flipped input bit flips each output bit about half the time
// (avalanche), and consecutive IDs — what a generator issues — come out in no
// order and with no shared high bits.
func TestPermutationLooksRandom63(t *testing.T) {
	p, err := opaque.New([]byte("0123456789abcdef"), nil, 63)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	const samples = 4000
	var flips [63][63]int
	for range samples {
		x := rng.Uint64() >> 1
		y, _ := p.Encode(x)
		if y == x {
			t.Fatalf("fixed point %d", x)
		}
		for i := range 63 {
			yi, _ := p.Encode(x ^ 1<<i)
			d := y ^ yi
			for j := range 63 {
				flips[i][j] += int(d >> j & 1)
			}
		}
	}
	// Each count is Binomial(4000, 1/2): mean 2000, σ ≈ 31.6. 6σ bounds over
	// 3969 cells leave a false alarm far below one in a million.
	for i := range 63 {
		for j := range 63 {
			if c := flips[i][j]; c < 2000-190 || c > 2000+190 {
				t.Errorf("input bit %d flips output bit %d in %d of %d samples, want about half", i, j, c, samples)
			}
		}
	}
	base := uint64(1) << 62
	prev, _ := p.Encode(base)
	up, sameTop := 0, 0
	const run = 10000
	for x := base + 1; x <= base+run; x++ {
		y, _ := p.Encode(x)
		if y > prev {
			up++
		}
		if bits.LeadingZeros64(y^prev) >= 1+16 {
			sameTop++
		}
		prev = y
	}
	if up < run/2-300 || up > run/2+300 {
		t.Errorf("%d of %d consecutive IDs came out increasing, want about half", up, run)
	}
	if sameTop > 5 {
		t.Errorf("%d of %d consecutive IDs share their top 16 bits with the previous, want about %d", sameTop, run, run>>16)
	}
}

func TestPermutationRefuses(t *testing.T) {
	key := make([]byte, 32)
	for _, tc := range []struct {
		name  string
		key   []byte
		tweak []byte
		bits  int
		want  error
	}{
		{"19 bits", key, nil, 19, opaque.ErrDomain},
		{"64 bits", key, nil, 64, opaque.ErrDomain},
		{"no key", nil, nil, 40, opaque.ErrKey},
		{"tweak too long", key, make([]byte, opaque.MaxTweak+1), 40, opaque.ErrTweak},
	} {
		if _, err := opaque.New(tc.key, tc.tweak, tc.bits); !errors.Is(err, tc.want) {
			t.Errorf("%s: err = %v, want %v", tc.name, err, tc.want)
		}
	}
	p, err := opaque.New(key, nil, 40)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Encode(1 << 40); !errors.Is(err, opaque.ErrOutOfDomain) {
		t.Errorf("Encode(2^40) on 40 bits: err = %v", err)
	}
	if _, err := p.Decode(1 << 40); !errors.Is(err, opaque.ErrOutOfDomain) {
		t.Errorf("Decode(2^40) on 40 bits: err = %v", err)
	}
}

func TestParseKey(t *testing.T) {
	const k32 = "000102030405060708090a0b0c0d0e0f"
	for _, tc := range []struct {
		in   string
		size int
	}{
		{k32, 16}, {" " + k32 + "\n", 16}, {k32 + "1011121314151617", 24}, {k32 + k32, 32},
	} {
		key, err := opaque.ParseKey([]byte(tc.in))
		if err != nil || len(key) != tc.size || key[1] != 1 {
			t.Errorf("ParseKey(%q) = %x, %v; want %d bytes", tc.in, key, err, tc.size)
		}
	}
	for _, bad := range []string{"", "00", k32[:30], k32 + "00", "zz" + k32[2:], "secret-key-in-plain-text!"} {
		_, err := opaque.ParseKey([]byte(bad))
		if !errors.Is(err, opaque.ErrKey) {
			t.Errorf("ParseKey(%q): err = %v, want ErrKey", bad, err)
		}
		if err != nil && len(bad) > 4 && strings.Contains(err.Error(), bad) {
			t.Errorf("ParseKey's error repeats its input: %v", err)
		}
	}
}

func TestPermutationFingerprint(t *testing.T) {
	key := make([]byte, 16)
	a, _ := opaque.New(key, []byte("a"), 40)
	b, _ := opaque.New(key, []byte("b"), 40)
	key[0] = 1
	c, _ := opaque.New(key, []byte("a"), 40)
	if a.Fingerprint() == b.Fingerprint() || a.Fingerprint() == c.Fingerprint() {
		t.Fatalf("fingerprints do not tell tweak or key apart: %s %s %s", a.Fingerprint(), b.Fingerprint(), c.Fingerprint())
	}
	long, _ := opaque.New(key, make([]byte, opaque.MaxTweak), 40)
	for _, p := range []*opaque.Permutation{a, b, c, long} {
		if len(p.Fingerprint()) != 33 {
			t.Fatalf("fingerprint %q: %d characters, want 33 whatever the tweak", p.Fingerprint(), len(p.Fingerprint()))
		}
	}
	if strings.Contains(a.Fingerprint(), "00000000000000000000000000000000") {
		t.Fatalf("fingerprint %s shows the key", a.Fingerprint())
	}
}

func TestKeyFingerprint(t *testing.T) {
	a, b := make([]byte, 16), make([]byte, 16)
	b[15] = 1
	fa, fb := opaque.KeyFingerprint(a), opaque.KeyFingerprint(b)
	if fa == fb {
		t.Fatalf("two keys, one fingerprint %s", fa)
	}
	if len(fa) != 16 || fa != opaque.KeyFingerprint(a) {
		t.Fatalf("fingerprint %q: want 16 hex digits, stable", fa)
	}
}

var sink uint64

// BenchmarkEncode63 is opaque mode's cost per ID; BenchmarkAESBlock, one AES
// block under the same key size, is its unit: a permutation costs ten.
func BenchmarkEncode63(b *testing.B) {
	p, err := opaque.New(make([]byte, 16), []byte("tag"), 63)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	var x uint64
	for b.Loop() {
		y, _ := p.Encode(x)
		sink += y
		x++
	}
}

func BenchmarkDecode63(b *testing.B) {
	p, err := opaque.New(make([]byte, 16), []byte("tag"), 63)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	var x uint64
	for b.Loop() {
		y, _ := p.Decode(x)
		sink += y
		x++
	}
}

func BenchmarkAESBlock(b *testing.B) {
	block, err := aes.NewCipher(make([]byte, 16))
	if err != nil {
		b.Fatal(err)
	}
	var buf [16]byte
	b.ReportAllocs()
	for b.Loop() {
		block.Encrypt(buf[:], buf[:])
	}
	sink += uint64(buf[0])
}
