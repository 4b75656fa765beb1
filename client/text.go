package client

import (
	"bytes"
	"fmt"
	"strconv"
)

// AppendText appends to dst the IDs of a text answer of firn's HTTP API
// (?format=text): want decimal IDs, one a line, every line ending in a
// newline. Anything else is an *Error of kind ErrUnavailable and appends
// nothing: a body cut short where the framing cannot tell (HTTP/1.0, a
// proxy) ends in a prefix of an ID, which parses as another number, one
// the server never issued. Every HTTP answer of IDs the client reads
// passes here; firn bench reads the text routes with it too.
func AppendText(dst []int64, body []byte, want int) ([]int64, error) {
	lines, err := textLines(body, want)
	if err != nil {
		return dst, err
	}
	n := len(dst)
	for _, l := range lines {
		// Only the canonical form: a sign or a leading zero is not how
		// a server writes an ID.
		id, err := strconv.ParseInt(string(l), 10, 64)
		if err != nil || id < 0 || strconv.FormatInt(id, 10) != string(l) {
			return dst[:n], &Error{Kind: ErrUnavailable, Code: "bad_answer", Message: fmt.Sprintf("line %.40q: not an ID", l)}
		}
		dst = append(dst, id)
	}
	return dst, nil
}

// textLines splits a text answer into its want lines, refusing a body
// whose last line has no newline (cut short) or with another count.
func textLines(body []byte, want int) ([][]byte, error) {
	if len(body) == 0 || body[len(body)-1] != '\n' {
		return nil, &Error{Kind: ErrUnavailable, Code: "bad_answer", Message: "the answer does not end with a newline: cut short"}
	}
	lines := bytes.Split(body[:len(body)-1], []byte{'\n'})
	if len(lines) != want {
		return nil, &Error{Kind: ErrUnavailable, Code: "short_batch", Message: fmt.Sprintf("asked for %d IDs, got %d", want, len(lines))}
	}
	return lines, nil
}
