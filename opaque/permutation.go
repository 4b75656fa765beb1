package opaque

import (
	"bytes"
	"crypto/cipher"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"sync"
)

// The sizes of a binary ID space New accepts: 2^20 is the smallest binary
// domain SP 800-38G Rev. 1 allows (at least 1,000,000 values), and 63 bits is
// the largest ID firn issues.
const (
	MinBits = 20
	MaxBits = 63
)

// Permutation is FF1 of radix 2 over a space of 2^bits IDs, computed on
// 64-bit words: Encode(x) equals FF1.Encrypt of x's bits written most
// significant first. Each round costs one AES block: the CBC-MAC of the
// header and of the tweak's full blocks is computed once, in New. It is safe
// for concurrent use.
type Permutation struct {
	block cipher.Block
	bits  uint
	u, v  uint // the halves: u = bits/2, v = bits − u
	nb    int  // b: the bytes of NUM(B), ⌈v/8⌉
	// hi and lo are Q's last block XOR the CBC-MAC state before it, as two
	// big-endian words; the round number and NUM(B), left zero in that
	// block, are XORed into lo per round.
	hi, lo uint64
	fp     string // Fingerprint
}

// New returns the permutation of [0, 2^bits) under key (16, 24 or 32 bytes)
// and tweak (at most MaxTweak bytes; empty is allowed). bits is in [MinBits,
// MaxBits].
func New(key, tweak []byte, bits int) (*Permutation, error) {
	block, err := newBlock(key)
	if err != nil {
		return nil, err
	}
	if bits < MinBits || bits > MaxBits {
		return nil, ErrDomain
	}
	if len(tweak) > MaxTweak {
		return nil, ErrTweak
	}
	p := &Permutation{block: block, bits: uint(bits)}
	p.u = p.bits / 2
	p.v = p.bits - p.u
	p.nb = int(p.v+7) / 8
	hdr := header(2, int(p.u), bits, len(tweak))
	pad := mod(-len(tweak)-p.nb-1, 16)
	q := make([]byte, len(tweak)+pad+1+p.nb)
	copy(q, tweak)
	var h [16]byte
	block.Encrypt(h[:], hdr[:])
	for j := 0; j < len(q); j += 16 {
		for k := range 16 {
			h[k] ^= q[j+k]
		}
		if j+16 < len(q) {
			block.Encrypt(h[:], h[:])
		}
	}
	tw := sha256.Sum256(append([]byte("firn opaque tweak v1\x00"), tweak...))
	p.fp = "ff1:" + KeyFingerprint(key) + ":" + hex.EncodeToString(tw[:6])
	p.hi = binary.BigEndian.Uint64(h[:8])
	p.lo = binary.BigEndian.Uint64(h[8:])
	return p, nil
}

// Fingerprint names the permutation without revealing its key, in 33
// characters: the key's fingerprint and 6 bytes of SHA-256 over the tweak,
// such as "ff1:a625aaf7abba7733:5d1f0c3e9a21". Two permutations with one
// fingerprint and one Bits are, for any practical purpose, the same
// permutation. Record it with the ID space it permutes.
func (p *Permutation) Fingerprint() string { return p.fp }

// Bits returns the size of the permutation's domain in bits.
func (p *Permutation) Bits() int { return int(p.bits) }

// Encode returns the image of x, which must be below 2^Bits().
func (p *Permutation) Encode(x uint64) (uint64, error) {
	if x>>p.bits != 0 {
		return 0, ErrOutOfDomain
	}
	blocks := scratch.Get().(*[lanes][16]byte)
	buf := &blocks[0]
	mu, mv := uint64(1)<<p.u-1, uint64(1)<<p.v-1
	a, b := x>>p.v, x&mv
	// Two rounds a turn (rounds is even): round i adds to A under mod
	// 2^u, round i+1 to B under mod 2^v, and the halves then stand as
	// Algorithm 7's A and B would after both swaps.
	for i := 0; i < rounds; i += 2 {
		a = (a + p.round(buf, i, b)) & mu
		b = (b + p.round(buf, i+1, a)) & mv
	}
	scratch.Put(blocks)
	return a<<p.v | b, nil
}

// lanes is how many IDs EncodeN permutes side by side.
const lanes = 4

// scratch holds the blocks a round encrypts in place, one per lane: a block
// passed to cipher.Block escapes, and one taken from the pool costs less
// than one allocated per call.
var scratch = sync.Pool{New: func() any { return new([lanes][16]byte) }}

// EncodeN replaces each ID of ids, which must be below 2^Bits(), with its
// image. It is Encode for a batch, several IDs a round at a time: their
// AES blocks are independent, so the processor overlaps them. On an error
// (an ID out of the domain) ids is left unchanged.
func (p *Permutation) EncodeN(ids []int64) error {
	for _, id := range ids {
		if uint64(id)>>p.bits != 0 {
			return ErrOutOfDomain
		}
	}
	buf := scratch.Get().(*[lanes][16]byte)
	var a, b [lanes]uint64
	for len(ids) > 0 {
		k := min(len(ids), lanes)
		for j := range k {
			x := uint64(ids[j])
			a[j], b[j] = x>>p.v, x&(1<<p.v-1)
		}
		for i := range rounds {
			mask := uint64(1)<<p.u - 1
			if i%2 == 1 {
				mask = 1<<p.v - 1
			}
			// Every lane's block is stored, as two 8-byte words, before
			// the first is encrypted: each load then waits for its
			// stores to reach the cache (putBlock's single store, which
			// avoids that wait, costs a call per block), and the waits
			// overlap.
			for j := range k {
				hi, lo := p.words(i, b[j])
				storeWords(&buf[j], hi, lo)
			}
			for j := range k {
				p.block.Encrypt(buf[j][:], buf[j][:])
			}
			for j := range k {
				c := (a[j] + binary.BigEndian.Uint64(buf[j][:8])) & mask
				a[j], b[j] = b[j], c
			}
		}
		for j := range k {
			ids[j] = int64(a[j]<<p.v | b[j])
		}
		ids = ids[k:]
	}
	scratch.Put(buf)
	return nil
}

// Decode returns the x whose image is y, which must be below 2^Bits().
func (p *Permutation) Decode(y uint64) (uint64, error) {
	if y>>p.bits != 0 {
		return 0, ErrOutOfDomain
	}
	blocks := scratch.Get().(*[lanes][16]byte)
	buf := &blocks[0]
	mu, mv := uint64(1)<<p.u-1, uint64(1)<<p.v-1
	a, b := y>>p.v, y&mv
	// Encode's pairs of rounds undone, last first.
	for i := rounds - 2; i >= 0; i -= 2 {
		b = (b - p.round(buf, i+1, a)) & mv
		a = (a - p.round(buf, i, b)) & mu
	}
	scratch.Put(blocks)
	return a<<p.v | b, nil
}

// round is y of Algorithm 7, steps 6.i–iv, for round i and half x: one AES
// block over the CBC state XOR Q's last block, of which d = 8 bytes are used
// (b ≤ 4 bytes for v ≤ 32 bits makes d = 4·⌈b/4⌉+4 = 8). Q's last block ends
// with [i]^1 ‖ [NUM(x)]^b, both zero in p.lo.
func (p *Permutation) round(buf *[16]byte, i int, x uint64) uint64 {
	p.put(buf, i, x)
	p.block.Encrypt(buf[:], buf[:])
	return binary.BigEndian.Uint64(buf[:8])
}

// put writes round i's block for half x into buf: Q's last block XOR the
// CBC-MAC state.
func (p *Permutation) put(buf *[16]byte, i int, x uint64) {
	hi, lo := p.words(i, x)
	putBlock(buf, hi, lo)
}

// storeWords writes hi and lo into buf as big-endian words, in two
// 8-byte stores.
func storeWords(buf *[16]byte, hi, lo uint64) {
	binary.BigEndian.PutUint64(buf[:8], hi)
	binary.BigEndian.PutUint64(buf[8:], lo)
}

// words is round i's block for half x as two big-endian words.
func (p *Permutation) words(i int, x uint64) (hi, lo uint64) {
	return p.hi, p.lo ^ uint64(i)<<(8*p.nb) ^ x
}

// ParseKey reads a key written in hex (32, 48 or 64 digits for AES-128,
// -192 or -256), as in a key file: surrounding white space is ignored. The
// error never repeats the text, which may be a key.
func ParseKey(text []byte) ([]byte, error) {
	t := bytes.TrimSpace(text)
	key := make([]byte, hex.DecodedLen(len(t)))
	if _, err := hex.Decode(key, t); err != nil {
		return nil, fmt.Errorf("%w: want 32, 48 or 64 hex digits (such as the output of openssl rand -hex 32)", ErrKey)
	}
	if _, err := newBlock(key); err != nil {
		return nil, fmt.Errorf("%w: %d hex digits, want 32, 48 or 64", ErrKey, len(t))
	}
	return key, nil
}

// KeyFingerprint names a key without revealing it: the first 8 bytes of
// SHA-256 over a fixed label and the key, in hex. Two keys with one
// fingerprint are, for any practical purpose, one key; record it with the
// ID space the key permutes, never the key itself.
func KeyFingerprint(key []byte) string {
	h := sha256.New()
	h.Write([]byte("firn opaque key v1\x00"))
	h.Write(key)
	return hex.EncodeToString(h.Sum(nil)[:8])
}
