package server

import (
	"errors"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"strings"
)

// DefaultMaxBody is the largest request body the HTTP API reads, and the
// largest gRPC message it receives, unless Config.MaxBody says
// otherwise: 64 KiB, far above any request of the API (an admin JSON body,
// a Tinyid form). A body past it is refused with 413 (gRPC:
// ResourceExhausted) without being read.
const DefaultMaxBody = 64 << 10

// MaxTagBytes is the longest tag the server passes to the allocator or a
// store, in bytes: 128 characters of up to 4 bytes each, the widest tag
// column of any store (Leaf's biz_tag VARCHAR(128)). A longer tag is
// refused with 400 before it is looked up, so unknown tags the allocator
// remembers stay small (10,000 of them pin at most a few MB).
const MaxTagBytes = 512

// maxBody is the service's body limit.
func (s *service) maxBody() int64 { return s.MaxBody }

// limitBody caps r's body at limit: a declared length over it is refused
// at once, a longer body fails its reads with *http.MaxBytesError (and
// the connection is closed). It returns false when it answered.
func limitBody(w http.ResponseWriter, r *http.Request, limit int64) bool {
	if r.ContentLength > limit {
		writeError(w, fmt.Errorf("%w: %d bytes declared, at most %d", ErrBodyTooLarge, r.ContentLength, limit))
		return false
	}
	if r.Body != nil && r.Body != http.NoBody {
		r.Body = http.MaxBytesReader(w, r.Body, limit)
	}
	return true
}

// checkTag refuses a tag longer than MaxTagBytes.
func checkTag(tag string) error {
	if len(tag) > MaxTagBytes {
		return fmt.Errorf("%w: %d bytes, at most %d", ErrTagTooLong, len(tag), MaxTagBytes)
	}
	return nil
}

// maxTinyidForm bounds a Tinyid form body: it carries bizType, token and
// batchSize.
const maxTinyidForm = 64 << 10

// parseTinyidForm reads the parameters of a Tinyid request — bizType,
// token, batchSize — into r.Form, from the query string and, for a body,
// only from an application/x-www-form-urlencoded one of at most 64 KiB.
// Anything else (multipart above all, which r.FormValue would spool to
// disk) is refused before the token is checked.
func parseTinyidForm(w http.ResponseWriter, r *http.Request) error {
	if (r.Body == nil || r.Body == http.NoBody) && parseTinyidQuery(r) {
		return nil
	}
	if r.Body != nil && r.Body != http.NoBody && r.Header.Get("Content-Type") != "" {
		ct, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
		if err != nil || ct != "application/x-www-form-urlencoded" {
			return fmt.Errorf("%w, not %q", ErrUnsupportedBody, r.Header.Get("Content-Type"))
		}
		r.Body = http.MaxBytesReader(w, r.Body, maxTinyidForm)
	}
	if err := r.ParseForm(); err != nil {
		var mb *http.MaxBytesError
		if errors.As(err, &mb) {
			return fmt.Errorf("%w: the form is over %d bytes", ErrBodyTooLarge, mb.Limit)
		}
		return badRequest(fmt.Sprintf("the parameters: %v", err))
	}
	return nil
}

// tinyidKeys are the parameters of Tinyid's routes; no other is read.
var tinyidKeys = [...]string{"bizType", "token", "batchSize"}

// parseTinyidQuery reads the parameters of a Tinyid request without a
// body into r.Form, from the query string alone: the first value of each
// of tinyidKeys, as url.ParseQuery and Form.Get would give it, in two
// allocations rather than ParseForm's seven (a third of nextIdSimple's
// time, BenchmarkRoutes). A query ParseQuery would refuse (a semicolon,
// a bad escape) returns false, for ParseForm to say why.
func parseTinyidQuery(r *http.Request) bool {
	q := r.URL.RawQuery
	if strings.IndexByte(q, ';') >= 0 {
		return false
	}
	var vals [len(tinyidKeys)]string
	var seen [len(tinyidKeys)]bool
	for q != "" {
		var kv string
		kv, q, _ = strings.Cut(q, "&")
		if kv == "" {
			continue
		}
		k, v, _ := strings.Cut(kv, "=")
		k, err := url.QueryUnescape(k)
		if err != nil {
			return false
		}
		if v, err = url.QueryUnescape(v); err != nil {
			return false
		}
		for i, name := range tinyidKeys {
			if k == name && !seen[i] {
				vals[i], seen[i] = v, true
			}
		}
	}
	form := make(url.Values, len(tinyidKeys))
	for i, name := range tinyidKeys {
		if seen[i] {
			form[name] = vals[i : i+1 : i+1]
		}
	}
	r.Form = form
	return true
}
