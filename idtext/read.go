package idtext

import (
	"bufio"
	"errors"
	"io"
)

// ErrTooMany is returned by ReadIDs for input that holds more IDs than
// its bound.
var ErrTooMany = errors.New("idtext: more IDs than the bound")

// ReadIDs reads the whitespace-separated words of r (IDs, one a line or
// several on one), at most max of them: a caller holds them all, so more
// is ErrTooMany, and nothing is returned. The words are not parsed; an
// error of r is returned as it is.
func ReadIDs(r io.Reader, max int) ([]string, error) {
	sc := bufio.NewScanner(r)
	sc.Split(bufio.ScanWords)
	var ids []string
	for sc.Scan() {
		if len(ids) == max {
			return nil, ErrTooMany
		}
		ids = append(ids, sc.Text())
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return ids, nil
}
