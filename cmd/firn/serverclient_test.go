package main

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestTagAdvanceServerAnswersNull: a 200 whose JSON body is null or {}
// (a proxy's, or another service at the address), or whose next ID is
// below the one asked for, proves nothing moved: firn tag advance
// --server exits non-zero and prints nothing. It printed "next ID 0", a
// number the server never gave.
func TestTagAdvanceServerAnswersNull(t *testing.T) {
	for _, body := range []string{"null", "{}", `{"tag":"order","next":"5"}`} {
		hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(body))
		}))
		defer hs.Close()
		out, errOut, code := runCLI("tag", "advance", "order", "--to", "100", "--server", hs.URL)
		if code == 0 || out != "" {
			t.Errorf("advance on a 200 %s: exit %d, stdout %q, stderr %q; want an error and nothing printed", body, code, out, errOut)
		}
	}
}
