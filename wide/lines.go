package wide

// AppendLines appends each of ids in its text form (a UUID's hyphenated
// hex, a ULID's Crockford base32) and a newline to dst: a batch written
// one ID a line, as firn's text routes and its command line write it
// (idtext.Encoding.AppendLines for 64-bit IDs).
func AppendLines[T interface{ String() string }](dst []byte, ids []T) []byte {
	for _, id := range ids {
		dst = append(append(dst, id.String()...), '\n')
	}
	return dst
}
