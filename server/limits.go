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

// parseTinyidQuery checks the query string of a Tinyid request without a
// body and leaves r.Form unset: tinyidParam reads the query string then,
// with no map built (ParseForm's maps were a third of nextIdSimple's
// time, BenchmarkRoutes). A query url.ParseQuery would refuse (a
// semicolon, a bad escape) returns false, for ParseForm to say why.
func parseTinyidQuery(r *http.Request) bool {
	q := r.URL.RawQuery
	if strings.IndexByte(q, ';') >= 0 {
		return false
	}
	for q != "" {
		var kv string
		kv, q, _ = strings.Cut(q, "&")
		if strings.IndexByte(kv, '%') < 0 {
			continue
		}
		k, v, _ := strings.Cut(kv, "=")
		if _, err := url.QueryUnescape(k); err != nil {
			return false
		}
		if _, err := url.QueryUnescape(v); err != nil {
			return false
		}
	}
	return true
}

// tinyidParam returns the first value of a Tinyid parameter, as
// r.Form.Get would: from r.Form when parseTinyidForm read a body, else
// from the query string parseTinyidQuery checked.
func tinyidParam(r *http.Request, key string) string {
	if r.Form != nil {
		return r.Form.Get(key)
	}
	for q := r.URL.RawQuery; q != ""; {
		var kv string
		kv, q, _ = strings.Cut(q, "&")
		k, v, _ := strings.Cut(kv, "=")
		if kv == "" || unescape(k) != key {
			continue
		}
		return unescape(v)
	}
	return ""
}

// unescape is url.QueryUnescape of a part parseTinyidQuery checked.
func unescape(s string) string {
	if strings.IndexByte(s, '%') < 0 && strings.IndexByte(s, '+') < 0 {
		return s
	}
	u, _ := url.QueryUnescape(s)
	return u
}
