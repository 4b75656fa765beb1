package idtext

import (
	"errors"
	"fmt"
	"math/bits"
)

// The widths of the encodings: the fewest characters that hold any uint64.
const (
	Base62Width = 11 // 62^11 > 2^64
	Base32Width = 13 // 32^13 = 2^65
)

const (
	base62Alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	base32Alphabet = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
)

// ErrSyntax is returned for a string that is not one encoded ID: a wrong
// length, a character outside the alphabet, or a value past 2^64−1; the
// error is a *SyntaxError.
var ErrSyntax = errors.New("idtext: not an encoded ID")

var base62Value, base32Value = decodeTables()

func decodeTables() (b62, b32 [256]byte) {
	for i := range 256 {
		b62[i], b32[i] = 0xff, 0xff
	}
	for i := range len(base62Alphabet) {
		b62[base62Alphabet[i]] = byte(i)
	}
	for i := range len(base32Alphabet) {
		c := base32Alphabet[i]
		b32[c] = byte(i)
		if c >= 'A' && c <= 'Z' {
			b32[c+'a'-'A'] = byte(i)
		}
	}
	for _, alias := range []struct {
		c byte
		v byte
	}{{'O', 0}, {'o', 0}, {'I', 1}, {'i', 1}, {'L', 1}, {'l', 1}} {
		b32[alias.c] = alias.v
	}
	return b62, b32
}

// AppendBase62 appends id in base62, 11 characters, to dst.
func AppendBase62(dst []byte, id uint64) []byte {
	// Three independent parts of 4, 4 and 3 digits, in 32-bit arithmetic.
	const p4 = 62 * 62 * 62 * 62
	var buf [Base62Width]byte
	lo := uint32(id % p4)
	id /= p4
	put62(buf[7:], lo)
	put62(buf[3:7], uint32(id%p4))
	put62(buf[:3], uint32(id/p4))
	return append(dst, buf[:]...)
}

// put62 writes x in base62 into all of b, most significant digit first.
func put62(b []byte, x uint32) {
	for i := len(b) - 1; i >= 0; i-- {
		b[i] = base62Alphabet[x%62]
		x /= 62
	}
}

// AppendBase32 appends id in Crockford's base32, 13 upper-case characters,
// to dst.
func AppendBase32(dst []byte, id uint64) []byte {
	var buf [Base32Width]byte
	for i := Base32Width - 1; i >= 0; i-- {
		buf[i] = base32Alphabet[id&31]
		id >>= 5
	}
	return append(dst, buf[:]...)
}

// ParseBase62 reads an ID written by AppendBase62.
func ParseBase62(s string) (uint64, error) {
	if len(s) != Base62Width {
		return 0, syntax("base62", s, fmt.Sprintf("%d characters, want %d", len(s), Base62Width))
	}
	var id uint64
	for i := range len(s) {
		d := base62Value[s[i]]
		if d == 0xff {
			return 0, syntax("base62", s, fmt.Sprintf("%q is not in 0-9A-Za-z", s[i]))
		}
		hi, lo := bits.Mul64(id, 62)
		if hi != 0 || lo+uint64(d) < lo {
			return 0, past("base62", s)
		}
		id = lo + uint64(d)
	}
	return id, nil
}

// ParseBase32 reads an ID in Crockford's base32, in either case, reading I
// and L as 1 and O as 0.
func ParseBase32(s string) (uint64, error) {
	if len(s) != Base32Width {
		return 0, syntax("base32", s, fmt.Sprintf("%d characters, want %d", len(s), Base32Width))
	}
	first := base32Value[s[0]]
	if first > 15 {
		if first == 0xff {
			return 0, syntax("base32", s, fmt.Sprintf("%q is not in Crockford's alphabet", s[0]))
		}
		return 0, past("base32", s)
	}
	id := uint64(first)
	for i := 1; i < len(s); i++ {
		d := base32Value[s[i]]
		if d == 0xff {
			return 0, syntax("base32", s, fmt.Sprintf("%q is not in Crockford's alphabet", s[i]))
		}
		id = id<<5 | uint64(d)
	}
	return id, nil
}

// SyntaxError is a string that is not an ID in its encoding. It matches
// ErrSyntax.
type SyntaxError struct {
	Encoding string // "base62", "base32", "decimal"
	Text     string // the input, or a printable prefix of it
	Why      string // what is wrong with it
	Kind     SyntaxKind
}

// SyntaxKind tells a SyntaxError's two kinds apart, so that a caller can
// word them itself.
type SyntaxKind int

const (
	// Malformed is a string of the wrong length or with a character
	// outside the encoding's alphabet.
	Malformed SyntaxKind = iota
	// OutOfRange is a well-formed number past 2^64−1.
	OutOfRange
)

func (e *SyntaxError) Error() string { return "idtext: " + e.Reason() }

// Reason is the message without the package's name, for a caller that
// prints its own prefix.
func (e *SyntaxError) Reason() string {
	return fmt.Sprintf("not an encoded ID: %s %q: %s", e.Encoding, e.Text, e.Why)
}

// Is reports whether target is ErrSyntax.
func (e *SyntaxError) Is(target error) bool { return target == ErrSyntax }

// syntax returns a *SyntaxError of the encoding, a printable prefix of the
// input and the reason.
func syntax(enc, s, reason string) error {
	if len(s) > 32 {
		s = s[:32] + "…"
	}
	return &SyntaxError{Encoding: enc, Text: s, Why: reason}
}

// past returns the *SyntaxError of a well-formed number past 2^64−1.
func past(enc, s string) error {
	err := syntax(enc, s, "past 2^64-1").(*SyntaxError)
	err.Kind = OutOfRange
	return err
}
