package server_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/firn-id/firn/idtext"
)

// TestEncodings: ?encoding= writes each ID at its fixed width, in the
// order of the numbers, on the snowflake and segment routes, as JSON
// strings and as text; the strings read back to the decimal IDs.
func TestEncodings(t *testing.T) {
	h := newHandler(t, nil)
	for _, route := range []string{"/v1/snowflake/batch?count=50", "/v1/segments/order/batch?count=50"} {
		for _, enc := range []idtext.Encoding{idtext.Base62, idtext.Base32} {
			w := get(h, "GET", route+"&encoding="+enc.String())
			var body struct{ IDs []string }
			if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil || w.Code != http.StatusOK || len(body.IDs) != 50 {
				t.Fatalf("%s as %s: %d %s", route, enc, w.Code, w.Body)
			}
			width := map[idtext.Encoding]int{idtext.Base62: idtext.Base62Width, idtext.Base32: idtext.Base32Width}[enc]
			var prev uint64
			for i, s := range body.IDs {
				id, err := enc.Parse(s)
				if err != nil || len(s) != width || (i > 0 && (id <= prev || s <= body.IDs[i-1])) {
					t.Fatalf("%s as %s: %q (%d) after %d: want %d characters, increasing as text and as numbers", route, enc, s, id, prev, width)
				}
				prev = id
			}
			text := get(h, "GET", route+"&format=text&encoding="+enc.String())
			for _, line := range strings.Fields(text.Body.String()) {
				if _, err := enc.Parse(line); err != nil {
					t.Fatalf("text %s: %q: %v", enc, line, err)
				}
			}
		}
	}
	for _, bad := range []string{"/v1/snowflake/next?encoding=base64", "/v1/snowflake/next?format=number&encoding=base62"} {
		if w := get(h, "GET", bad); w.Code != http.StatusBadRequest {
			t.Errorf("%s: %d, want 400", bad, w.Code)
		}
	}
}
