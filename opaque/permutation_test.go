package opaque_test

import (
	"crypto/aes"
	"errors"
	"fmt"
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

// TestEncodeNIsEncode: the batch path gives every ID's Encode image, for
// every batch length around its lanes, and refuses a batch with an ID out
// of the domain, leaving it unchanged.
func TestEncodeNIsEncode(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, bits := range []int{20, 41, 53, 63} {
		p, err := opaque.New([]byte("0123456789abcdef"), []byte("n"), bits)
		if err != nil {
			t.Fatal(err)
		}
		for n := range 11 {
			ids := make([]int64, n)
			for i := range ids {
				ids[i] = int64(rng.Uint64() >> (64 - bits))
			}
			want := make([]int64, n)
			for i, id := range ids {
				y, _ := p.Encode(uint64(id))
				want[i] = int64(y)
			}
			if err := p.EncodeN(ids); err != nil {
				t.Fatal(err)
			}
			for i := range ids {
				if ids[i] != want[i] {
					t.Fatalf("bits %d, batch of %d: EncodeN gave %d at %d, Encode %d", bits, n, ids[i], i, want[i])
				}
			}
		}
		bad := []int64{1, int64(1) << bits, 2}
		if bits < 63 {
			if err := p.EncodeN(bad); !errors.Is(err, opaque.ErrOutOfDomain) || bad[0] != 1 || bad[2] != 2 {
				t.Fatalf("bits %d: EncodeN of an ID out of the domain: %v, %v", bits, err, bad)
			}
		}
	}
}

// TestConcurrentCallsShareNoBlock: Encode, Decode and EncodeN from many
// goroutines at once, over two permutations, give what one goroutine
// computed alone. Their scratch blocks come from one pool, and a block
// handed back while in use would mix two IDs' rounds; AES-NI and the
// 16-byte store write the blocks in assembly, which the race detector
// does not watch, so the answers are checked here (make test also runs
// this package under -race -tags purego, where the detector sees them).
func TestConcurrentCallsShareNoBlock(t *testing.T) {
	const n = 2000
	var perms [2]*opaque.Permutation
	for i, bits := range []int{63, 41} {
		p, err := opaque.New([]byte("0123456789abcdef0123456789abcdef")[:16*(i+1)], []byte("c"), bits)
		if err != nil {
			t.Fatal(err)
		}
		perms[i] = p
	}
	var want [2][n]uint64
	for i, p := range perms {
		for x := range uint64(n) {
			want[i][x], _ = p.Encode(x * 7919)
		}
	}
	errs := make(chan error, 8)
	for g := range 8 {
		go func() {
			errs <- hammer(perms, &want, g)
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

// hammer is one goroutine of TestConcurrentCallsShareNoBlock; g picks
// its mix of calls.
func hammer(perms [2]*opaque.Permutation, want *[2][2000]uint64, g int) error {
	batch := make([]int64, 1+g)
	for r := range 3 {
		for i, p := range perms {
			for x := range uint64(len(want[i])) {
				in := x * 7919
				switch (g + r + int(x)) % 3 {
				case 0:
					if y, err := p.Encode(in); err != nil || y != want[i][x] {
						return fmt.Errorf("goroutine %d: Encode(%d) = %d, %v; want %d", g, in, y, err, want[i][x])
					}
				case 1:
					if y, err := p.Decode(want[i][x]); err != nil || y != in {
						return fmt.Errorf("goroutine %d: Decode(%d) = %d, %v; want %d", g, want[i][x], y, err, in)
					}
				default:
					for k := range batch {
						batch[k] = int64((x + uint64(k)) % uint64(len(want[i])) * 7919)
					}
					if err := p.EncodeN(batch); err != nil {
						return err
					}
					for k := range batch {
						if j := (x + uint64(k)) % uint64(len(want[i])); uint64(batch[k]) != want[i][j] {
							return fmt.Errorf("goroutine %d: EncodeN gave %d for %d; want %d", g, batch[k], j*7919, want[i][j])
						}
					}
				}
			}
		}
	}
	return nil
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
// Both run under an AES-128 key and, as Key256, under an AES-256 key (the
// 64 hex digits of `openssl rand -hex 32`), whose blocks take 14 rounds.
func BenchmarkEncode63(b *testing.B) {
	b.Run("Key128", func(b *testing.B) { benchEncode63(b, 16) })
	b.Run("Key256", func(b *testing.B) { benchEncode63(b, 32) })
}

func benchEncode63(b *testing.B, keySize int) {
	p, err := opaque.New(make([]byte, keySize), []byte("tag"), 63)
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

// BenchmarkEncodeN63 is the cost per ID of a server's batch in opaque
// mode: 1,000 IDs per call.
func BenchmarkEncodeN63(b *testing.B) {
	b.Run("Key128", func(b *testing.B) { benchEncodeN63(b, 16) })
	b.Run("Key256", func(b *testing.B) { benchEncodeN63(b, 32) })
}

func benchEncodeN63(b *testing.B, keySize int) {
	p, err := opaque.New(make([]byte, keySize), []byte("tag"), 63)
	if err != nil {
		b.Fatal(err)
	}
	ids := make([]int64, 1000)
	b.ReportAllocs()
	var x int64
	for b.Loop() {
		for i := range ids {
			ids[i] = x
			x++
		}
		if err := p.EncodeN(ids); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(ids)), "ns/id")
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
	b.Run("Key128", func(b *testing.B) { benchAESBlock(b, 16) })
	b.Run("Key256", func(b *testing.B) { benchAESBlock(b, 32) })
}

func benchAESBlock(b *testing.B, keySize int) {
	block, err := aes.NewCipher(make([]byte, keySize))
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
