package idtext

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// Encoding is a way to write an ID as text: Decimal, Base62 or Base32.
// Its zero value is Decimal.
type Encoding int

// The encodings, by the names ParseEncoding reads.
const (
	Decimal Encoding = iota // "decimal": the number in base 10, variable width
	Base62                  // "base62": AppendBase62
	Base32                  // "base32": AppendBase32, Crockford's alphabet
)

// EncodingNames lists the names ParseEncoding accepts, for messages.
const EncodingNames = "decimal, base62 or base32"

// ErrEncoding is returned by ParseEncoding for a name it does not know.
var ErrEncoding = errors.New("idtext: unknown encoding")

// ParseEncoding returns the encoding of a name: decimal (or empty),
// base62 or base32.
func ParseEncoding(name string) (Encoding, error) {
	switch name {
	case "", "decimal":
		return Decimal, nil
	case "base62":
		return Base62, nil
	case "base32":
		return Base32, nil
	}
	return 0, fmt.Errorf("%w %q: want %s", ErrEncoding, name, EncodingNames)
}

// Valid reports whether e is one of Decimal, Base62 and Base32.
func (e Encoding) Valid() bool { return e >= Decimal && e <= Base32 }

// String returns the encoding's name; Encoding(N) for one that is not
// Valid.
func (e Encoding) String() string {
	switch e {
	case Decimal:
		return "decimal"
	case Base62:
		return "base62"
	case Base32:
		return "base32"
	}
	return "Encoding(" + strconv.Itoa(int(e)) + ")"
}

// Append appends id in the encoding to dst; in decimal for an encoding
// that is not Valid (Append has no error to return).
func (e Encoding) Append(dst []byte, id uint64) []byte {
	switch e {
	case Base62:
		return AppendBase62(dst, id)
	case Base32:
		return AppendBase32(dst, id)
	}
	return strconv.AppendUint(dst, id, 10)
}

// AppendLines appends each of ids in the encoding and a newline to
// dst: a batch written one ID a line, as firn's text routes and its
// command line write it.
func (e Encoding) AppendLines(dst []byte, ids []int64) []byte {
	for _, id := range ids {
		dst = append(e.Append(dst, uint64(id)), '\n')
	}
	return dst
}

// WriteLines writes n IDs that fill makes to w, each in the encoding and
// a newline, asking fill for at most batch IDs a call (a generator's or a
// tag's NextN). At fill's first error it writes the IDs that call made
// and returns the error.
func (e Encoding) WriteLines(ctx context.Context, w io.Writer, n, batch int, fill func(context.Context, []int64) (int, error)) error {
	dst := make([]int64, max(0, min(n, batch)))
	var out []byte
	for n > 0 {
		k, err := fill(ctx, dst[:min(n, len(dst))])
		out = e.AppendLines(out[:0], dst[:k])
		if _, werr := w.Write(out); werr != nil {
			return werr
		}
		if err != nil {
			return err
		}
		n -= k
	}
	return nil
}

// Parse reads an ID written in the encoding; an encoding that is not
// Valid reads nothing.
func (e Encoding) Parse(s string) (uint64, error) {
	switch e {
	case Base62:
		return ParseBase62(s)
	case Base32:
		return ParseBase32(s)
	}
	if !e.Valid() {
		return 0, fmt.Errorf("%w: %s, want %s", ErrEncoding, e, EncodingNames)
	}
	id, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		se := syntax("decimal", s, "want a non-negative decimal number of at most 64 bits").(*SyntaxError)
		if errors.Is(err, strconv.ErrRange) {
			se.Kind = OutOfRange
		}
		return 0, se
	}
	return id, nil
}
