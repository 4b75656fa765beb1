package server

import (
	"embed"
	"net/http"
	"strconv"
)

// page holds the status page: HTML, CSS and JavaScript served as they are
// (no build step, nothing from another origin). The files carry no data:
// the page reads it from /v1/status with the caller's token.
//
//go:embed page
var page embed.FS

// PageCSP is the Content-Security-Policy of the status page and its
// files: nothing but this origin, no inline script or style, no framing.
const PageCSP = "default-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"

// pageFiles are the page's files: the route, the embedded file and its
// Content-Type.
var pageFiles = []struct{ pattern, file, contentType string }{
	{"GET /{$}", "page/index.html", "text/html; charset=utf-8"},
	{"GET /status.css", "page/status.css", "text/css; charset=utf-8"},
	{"GET /status.js", "page/status.js", "text/javascript; charset=utf-8"},
	{"GET /favicon.svg", "page/favicon.svg", "image/svg+xml"},
}

// pageRoutes serves the status page's files, open to anyone.
func (h *handler) pageRoutes() {
	for _, f := range pageFiles {
		body, err := page.ReadFile(f.file)
		if err != nil {
			h.errs = append(h.errs, err)
			continue
		}
		h.route(f.pattern, open, pageFile(f.contentType, body))
	}
}

// pageFile answers with one of the page's files and its security headers.
func pageFile(contentType string, body []byte) http.HandlerFunc {
	length := strconv.Itoa(len(body))
	return func(w http.ResponseWriter, _ *http.Request) {
		hd := w.Header()
		hd.Set("Content-Type", contentType)
		hd.Set("Content-Length", length)
		hd.Set("Content-Security-Policy", PageCSP)
		hd.Set("X-Content-Type-Options", "nosniff")
		hd.Set("Referrer-Policy", "no-referrer")
		hd.Set("Cache-Control", "no-cache")
		_, _ = w.Write(body)
	}
}
