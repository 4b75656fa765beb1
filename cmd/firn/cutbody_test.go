package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/firn-id/firn/snowflake"
)

// cutServer answers as firn serve does, except that every batch of IDs
// ends in the middle of its last ID, as a body cut short where the framing
// cannot tell (HTTP/1.0, a proxy) arrives.
func cutServer(t *testing.T) *httptest.Server {
	t.Helper()
	l := snowflake.DefaultLayout()
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/v1/snowflake/info":
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(map[string]any{"layout": l.String(), "fingerprint": l.Fingerprint(), "node": 0, "max_batch": 1000})
		case strings.HasSuffix(r.URL.Path, "/batch"):
			// Two whole IDs asked for: the second arrives as its first
			// five digits, a number of its own that firn never issued.
			_, _ = w.Write([]byte("7205759403792793600\n72057"))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(hs.Close)
	return hs
}

// TestServerBodyCutMidID: a body cut in the middle of an ID makes firn
// next --server and firn tag next --server fail and print nothing: the
// prefix of an ID is a number the server never issued to this caller.
func TestServerBodyCutMidID(t *testing.T) {
	hs := cutServer(t)
	for _, args := range [][]string{
		{"next", "-n", "2", "--server", hs.URL},
		{"tag", "next", "order", "-n", "2", "--server", hs.URL},
	} {
		t.Run(args[0], func(t *testing.T) {
			out, errOut, code := runCLI(args...)
			if code == 0 || out != "" {
				t.Fatalf("%v on a body cut mid-ID: exit %d, stdout %q, stderr %q; want a non-zero exit and nothing printed", args, code, out, errOut)
			}
			if !strings.Contains(errOut, hs.URL) {
				t.Errorf("stderr %q does not name the server %s", errOut, hs.URL)
			}
		})
	}
}
