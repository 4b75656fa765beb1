package server_test

import (
	"net/http"
	"regexp"
	"testing"

	"github.com/firn-id/firn/segment/segmenttest"
	"github.com/firn-id/firn/server"
)

var scriptTag = regexp.MustCompile(`(?i)<script[^>]*>`)

// TestPage: the page and its files are open even with tokens configured,
// carry the Content-Security-Policy, hold no inline script or style, and
// weigh under 100 KB together.
func TestPage(t *testing.T) {
	auth, err := server.NewAuth([]server.Token{{Name: "status", Secret: "status-secret-01", Scopes: []string{"status"}}}, server.Anonymous{})
	if err != nil {
		t.Fatal(err)
	}
	h := statusServer(t, segmenttest.NewMemStore(), nil, auth)
	inline := []struct {
		name string
		re   *regexp.Regexp
	}{
		{"inline script", regexp.MustCompile(`(?i)<script(\s[^>]*)?>\s*[^<\s]`)},
		{"style element", regexp.MustCompile(`(?i)<style`)},
		{"style attribute", regexp.MustCompile(`(?i)\sstyle=`)},
		{"event handler attribute", regexp.MustCompile(`(?i)\son[a-z]+=`)},
		{"another origin", regexp.MustCompile(`(?i)(src|href)="(https?:)?//`)},
		{"innerHTML", regexp.MustCompile(`innerHTML|outerHTML|insertAdjacentHTML|document\.write`)},
	}
	total := 0
	for _, f := range []struct{ path, contentType string }{
		{"/", "text/html; charset=utf-8"},
		{"/status.css", "text/css; charset=utf-8"},
		{"/status.js", "text/javascript; charset=utf-8"},
		{"/favicon.svg", "image/svg+xml"},
	} {
		w := get(h, "GET", f.path)
		if w.Code != http.StatusOK {
			t.Fatalf("%s = %d %s", f.path, w.Code, w.Body)
		}
		if got := w.Header().Get("Content-Security-Policy"); got != server.PageCSP {
			t.Errorf("%s: Content-Security-Policy %q", f.path, got)
		}
		if got := w.Header().Get("Content-Type"); got != f.contentType {
			t.Errorf("%s: Content-Type %q, want %q", f.path, got, f.contentType)
		}
		for _, in := range inline {
			if loc := in.re.FindIndex(w.Body.Bytes()); loc != nil {
				t.Errorf("%s has an %s: %q", f.path, in.name, w.Body.Bytes()[loc[0]:min(loc[1]+40, w.Body.Len())])
			}
		}
		for _, tag := range scriptTag.FindAll(w.Body.Bytes(), -1) {
			if !regexp.MustCompile(`\ssrc="/[a-z]`).Match(tag) {
				t.Errorf("%s: %s loads no script of this origin", f.path, tag)
			}
		}
		total += w.Body.Len()
	}
	if total >= 100_000 {
		t.Errorf("the page weighs %d bytes, want under 100 KB", total)
	}
	t.Logf("page weight: %d bytes uncompressed", total)
	if w := get(h, "GET", "/nothing-here"); w.Code != http.StatusNotFound {
		t.Errorf("/nothing-here = %d, want 404: the page answers / alone", w.Code)
	}
}
