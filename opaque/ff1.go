package opaque

import (
	"crypto/aes"
	"crypto/cipher"
	"encoding/binary"
	"math/big"
)

// The limits this package puts on FF1's parameters. SP 800-38G Rev. 1 asks
// radix^minlen ≥ 1,000,000 and allows lengths up to 2^32−1; firn permutes IDs
// of at most 64 bits, and a general-radix caller gets up to MaxLen numerals.
const (
	// MinDomain is the smallest domain the revised standard allows.
	MinDomain = 1_000_000
	// MaxRadix is the largest radix FF1 defines.
	MaxRadix = 1 << 16
	// MaxLen is the longest numeral string FF1 here accepts.
	MaxLen = 1 << 12
	// MaxTweak is the longest tweak, in bytes.
	MaxTweak = 1 << 10
)

// rounds is FF1's number of Feistel rounds.
const rounds = 10

// FF1 is the FF1 mode of NIST SP 800-38G over AES, for any radix from 2 to
// 2^16. It is safe for concurrent use.
type FF1 struct {
	block cipher.Block
	radix int
}

// NewFF1 returns FF1 under key (16, 24 or 32 bytes) for numerals of radix.
func NewFF1(key []byte, radix int) (*FF1, error) {
	block, err := newBlock(key)
	if err != nil {
		return nil, err
	}
	if radix < 2 || radix > MaxRadix {
		return nil, ErrDomain
	}
	return &FF1{block: block, radix: radix}, nil
}

func newBlock(key []byte) (cipher.Block, error) {
	switch len(key) {
	case 16, 24, 32:
		return aes.NewCipher(key)
	}
	return nil, ErrKey
}

// Encrypt returns FF1.Encrypt(K, tweak, x): a numeral string of x's length.
func (f *FF1) Encrypt(x []uint16, tweak []byte) ([]uint16, error) {
	return f.crypt(x, tweak, true)
}

// Decrypt returns FF1.Decrypt(K, tweak, x), the inverse of Encrypt.
func (f *FF1) Decrypt(x []uint16, tweak []byte) ([]uint16, error) {
	return f.crypt(x, tweak, false)
}

// check validates a numeral string and tweak against the standard's limits.
func (f *FF1) check(x []uint16, tweak []byte) error {
	n := len(x)
	if n < 2 || n > MaxLen || domainBelowMin(f.radix, n) {
		return ErrDomain
	}
	if len(tweak) > MaxTweak {
		return ErrTweak
	}
	for _, d := range x {
		if int(d) >= f.radix {
			return ErrNumeral
		}
	}
	return nil
}

// domainBelowMin reports whether radix^n < MinDomain.
func domainBelowMin(radix, n int) bool {
	v := 1
	for range n {
		v *= radix
		if v >= MinDomain {
			return false
		}
	}
	return true
}

// crypt runs the ten rounds of Algorithm 7 (encrypt) or 8 (decrypt).
func (f *FF1) crypt(x []uint16, tweak []byte, encrypt bool) ([]uint16, error) {
	if err := f.check(x, tweak); err != nil {
		return nil, err
	}
	n := len(x)
	u, v := n/2, n-n/2
	radix := big.NewInt(int64(f.radix))
	a, b := f.num(x[:u]), f.num(x[u:])
	nb := numBytes(f.radix, v)
	d := 4*((nb+3)/4) + 4
	p := header(f.radix, u, n, len(tweak))
	modU := new(big.Int).Exp(radix, big.NewInt(int64(u)), nil)
	modV := new(big.Int).Exp(radix, big.NewInt(int64(v)), nil)
	pad := mod(-len(tweak)-nb-1, 16)
	q := make([]byte, len(tweak)+pad+1+nb)
	copy(q, tweak)
	for r := range rounds {
		i := r
		if !encrypt {
			i = rounds - 1 - r
		}
		in := b
		if !encrypt {
			in = a
		}
		q[len(tweak)+pad] = byte(i)
		in.FillBytes(q[len(q)-nb:])
		y := new(big.Int).SetBytes(f.expand(f.prf(p[:], q), d))
		m := modU
		if i%2 == 1 {
			m = modV
		}
		c := new(big.Int)
		if encrypt {
			c.Add(a, y).Mod(c, m)
			a, b = b, c
		} else {
			c.Sub(b, y).Mod(c, m)
			a, b = c, a
		}
	}
	out := make([]uint16, n)
	f.str(a, out[:u])
	f.str(b, out[u:])
	return out, nil
}

// numBytes is b = ⌈⌈v·log2(radix)⌉/8⌉, computed exactly: ⌈log2 N⌉ is the bit
// length of N−1.
func numBytes(radix, v int) int {
	n := new(big.Int).Exp(big.NewInt(int64(radix)), big.NewInt(int64(v)), nil)
	bits := n.Sub(n, big.NewInt(1)).BitLen()
	return (bits + 7) / 8
}

// header is the block P of Algorithm 7, step 5.
func header(radix, u, n, t int) [16]byte {
	var p [16]byte
	p[0], p[1], p[2] = 1, 2, 1
	p[3], p[4], p[5] = byte(radix>>16), byte(radix>>8), byte(radix)
	p[6] = 10
	p[7] = byte(u % 256)
	binary.BigEndian.PutUint32(p[8:], uint32(n))
	binary.BigEndian.PutUint32(p[12:], uint32(t))
	return p
}

// prf is the CBC-MAC of p‖q under the key, with a zero IV (Algorithm 6).
func (f *FF1) prf(p, q []byte) []byte {
	var y [16]byte
	for _, blk := range [][]byte{p, q} {
		for j := 0; j < len(blk); j += 16 {
			for k := range 16 {
				y[k] ^= blk[j+k]
			}
			f.block.Encrypt(y[:], y[:])
		}
	}
	return y[:]
}

// expand is S of Algorithm 7, step 6.iii: the first d bytes of
// R ‖ CIPH(R ⊕ [1]^16) ‖ CIPH(R ⊕ [2]^16) ‖ ….
func (f *FF1) expand(r []byte, d int) []byte {
	s := append([]byte(nil), r...)
	for j := 1; len(s) < d; j++ {
		var blk [16]byte
		copy(blk[:], r)
		var ctr [16]byte
		binary.BigEndian.PutUint64(ctr[8:], uint64(j))
		for k := range 16 {
			blk[k] ^= ctr[k]
		}
		f.block.Encrypt(blk[:], blk[:])
		s = append(s, blk[:]...)
	}
	return s[:d]
}

// num is NUM_radix(x), most significant numeral first.
func (f *FF1) num(x []uint16) *big.Int {
	radix := big.NewInt(int64(f.radix))
	n := new(big.Int)
	for _, d := range x {
		n.Mul(n, radix).Add(n, big.NewInt(int64(d)))
	}
	return n
}

// str writes STR^len(out)_radix(n) into out.
func (f *FF1) str(n *big.Int, out []uint16) {
	radix := big.NewInt(int64(f.radix))
	n = new(big.Int).Set(n)
	d := new(big.Int)
	for i := len(out) - 1; i >= 0; i-- {
		n.DivMod(n, radix, d)
		out[i] = uint16(d.Int64())
	}
}

func mod(a, m int) int {
	return ((a % m) + m) % m
}
