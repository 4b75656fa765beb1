package client_test

import (
	"testing"

	"github.com/firn-id/firn/client"
)

// TestAppendTextRefusesOtherForms: a text answer is read only in the form
// a server writes; a sign, a leading zero, a carriage return, a blank or
// extra line, or a number past int64 is refused, and nothing is appended.
func TestAppendTextRefusesOtherForms(t *testing.T) {
	for _, body := range []string{"\n", "+5\n", "05\n", "-0\n", "-5\n", "5\r\n", " 5\n", "9223372036854775808\n", "5\n\n", "5\n6\n"} {
		dst := []int64{1}
		if got, err := client.AppendText(dst, []byte(body), 1); err == nil || len(got) != 1 {
			t.Errorf("AppendText(%q) = %v, %v; want [1] and an error", body, got, err)
		}
	}
}
