package server

import (
	"fmt"
	"net/http"
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
// remembers stay small (segment.MaxUnknownTags of them pin at most a few MB).
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
