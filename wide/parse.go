package wide

import (
	"fmt"
	"strings"
	"time"
)

// Form names a kind of ID that Parse reads.
type Form string

// The forms Parse knows, told apart by length and alphabet.
const (
	// FormUUID: RFC 9562, 36 characters 8-4-4-4-12 (also 32 hex digits,
	// braces or urn:uuid:), any version.
	FormUUID Form = "uuid"
	// FormULID: 26 characters of Crockford's base32, 48-bit millisecond
	// time and 80 bits.
	FormULID Form = "ulid"
	// FormObjectID: MongoDB's 12 bytes as 24 hex digits: 4-byte seconds,
	// 5-byte random per process, 3-byte counter.
	FormObjectID Form = "objectid"
	// FormKSUID: Segment's 20 bytes as 27 base62 characters: 4-byte
	// seconds since 1400000000 (2014-05-13T16:53:20Z), 16-byte payload.
	FormKSUID Form = "ksuid"
	// FormXID: rs/xid's 12 bytes as 20 base32hex characters: 4-byte
	// seconds, 3-byte machine, 2-byte process ID, 3-byte counter.
	FormXID Form = "xid"
)

// Field is one named part of a parsed ID, in the form's own terms.
type Field struct {
	Name  string
	Value string // decimal for counts, hex for bytes
}

// ID is a UUID, ULID, ObjectId, KSUID or xid taken apart.
type ID struct {
	Form  Form
	Bytes []byte // the binary value, big-endian
	// Time is the ID's timestamp, UTC; zero for forms and versions that
	// carry none (UUID versions other than 1, 6 and 7).
	Time time.Time
	// Fields are the parts of the ID below its time, in order.
	Fields []Field
}

// Parse reads a UUID, ULID, ObjectId, KSUID or xid, telling them apart by
// form: length first (36/32/38/45, 26, 24, 27, 20), then alphabet. A
// string of no form, or of a form's length but not valid in it, gets an
// error that wraps ErrUnknownForm and, where one fits, names the form.
func Parse(s string) (ID, error) {
	switch formOf(s) {
	case FormUUID:
		return parseUUID(s)
	case FormULID:
		return parseULID(s)
	case FormObjectID:
		return parseObjectID(s)
	case FormKSUID:
		return parseKSUID(s)
	case FormXID:
		return parseXID(s)
	}
	return ID{}, fmt.Errorf("%q (%d characters): %w", s, len(s), ErrUnknownForm)
}

// formOf is the form Parse reads s as, by its length (and, for 24
// characters, its alphabet); the empty Form when none has its length.
func formOf(s string) Form {
	switch n := len(s); {
	case n == 36 || n == 32 || n == 38 || n == 45:
		return FormUUID
	case n == 26:
		return FormULID
	case n == 24 && isHex(s):
		return FormObjectID
	case n == 27:
		return FormKSUID
	case n == 20:
		return FormXID
	}
	return ""
}

// Shaped reports whether s is to be read by Parse rather than as a
// decimal number: a form Parse reads has its length, and s holds a
// character that is not a decimal digit. An invalid string of a form's
// length is Shaped: Parse then says what is wrong in that form.
func Shaped(s string) bool {
	return strings.Trim(s, "0123456789") != "" && (formOf(s) != "" || len(s) == 24)
}

// Forms describes the forms Parse reads, one per line, for help texts.
func Forms() string {
	return strings.Join([]string{
		"UUID      36 characters 8-4-4-4-12 (RFC 9562; any version, time for 1, 6 and 7)",
		"ULID      26 characters of Crockford base32",
		"ObjectId  24 hex digits (MongoDB)",
		"KSUID     27 base62 characters (Segment)",
		"xid       20 base32hex characters (rs/xid)",
	}, "\n")
}

func isHex(s string) bool {
	for i := range len(s) {
		switch c := s[i] | 0x20; { // lower case; digits have the bit already
		case '0' <= c && c <= '9', 'a' <= c && c <= 'f':
		default:
			return false
		}
	}
	return true
}
