package opaque

import "errors"

var (
	// ErrKey is returned for a key that is not 16, 24 or 32 bytes (AES-128,
	// AES-192 or AES-256).
	ErrKey = errors.New("opaque: key must be 16, 24 or 32 bytes")

	// ErrDomain is returned by New for a number of bits outside [MinBits,
	// MaxBits], and by FF1 for a radix or length whose domain is smaller than
	// the standard allows or larger than this package accepts.
	ErrDomain = errors.New("opaque: domain outside the range the standard allows")

	// ErrNumeral is returned by FF1 for a numeral not below the radix.
	ErrNumeral = errors.New("opaque: numeral not below the radix")

	// ErrTweak is returned for a tweak longer than MaxTweak bytes.
	ErrTweak = errors.New("opaque: tweak too long")

	// ErrOutOfDomain is returned by Encode and Decode for a value that does
	// not fit the permutation's bits.
	ErrOutOfDomain = errors.New("opaque: value outside the permutation's domain")
)
