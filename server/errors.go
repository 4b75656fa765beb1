package server

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"

	"google.golang.org/grpc/codes"
	grpcstatus "google.golang.org/grpc/status"

	"github.com/firn-id/firn/api"
	"github.com/firn-id/firn/segment"
	"github.com/firn-id/firn/snowflake"
	"github.com/firn-id/firn/wide"
)

var (
	// ErrPanic is what a request whose handler panicked fails with: 500
	// over HTTP, Internal over gRPC, and the panic and its stack logged.
	// It is a bug in firn, never the caller's fault.
	ErrPanic = errors.New("server: internal error: the request's handler panicked (logged with its stack)")

	// ErrBodyTooLarge is returned for a request whose body is larger than
	// Service.MaxBody: 413.
	ErrBodyTooLarge = errors.New("server: request body too large")

	// ErrUnsupportedBody is returned for a Tinyid request whose body is
	// not application/x-www-form-urlencoded (multipart above all, which
	// would be spooled before the token is checked): 415.
	ErrUnsupportedBody = errors.New("server: unsupported request body: want application/x-www-form-urlencoded or the query string")

	// ErrSnowflakeOff is returned for a snowflake request to a server that
	// serves segments only: 503, so that a client tries another server.
	ErrSnowflakeOff = errors.New("server: snowflake mode is off on this server (it serves segments only)")

	// ErrSegmentsOff is returned for a segment request to a server with no
	// segment store: 503.
	ErrSegmentsOff = errors.New("server: segment mode is off on this server")

	// ErrOpaqueIDs is returned by the decode routes of a server in opaque
	// mode: its IDs decode only through the reveal route. 400.
	ErrOpaqueIDs = errors.New("server: this server's IDs are opaque: decode them with GET /v1/snowflake/reveal/{id} (scope reveal) or firn parse with the key")

	// ErrOpaqueWide is returned by the UUIDv7 and ULID routes of a server
	// in opaque mode: those forms carry their time and sequence in plain,
	// which opaque mode hides. 400.
	ErrOpaqueWide = errors.New("server: this server's IDs are opaque: a UUIDv7 or ULID would carry its time and sequence in plain; draw snowflake IDs")

	// ErrSiteStopped is returned for a snowflake or segment request to a
	// site's process that stopped issuing for good (its site's value
	// released or taken: Config.Revoked): 503 not_serving.
	ErrSiteStopped = errors.New("server: this site's process stopped issuing for good")

	// ErrTagTooLong is returned for a tag longer than MaxTagBytes, before
	// it reaches the allocator or a store: 400.
	ErrTagTooLong = errors.New("server: tag too long")
)

// apiError is an error with its HTTP status and code.
type apiError struct {
	status  int
	code    string
	message string
}

func (e *apiError) Error() string { return e.message }

func badRequest(msg string) error {
	return &apiError{status: http.StatusBadRequest, code: "bad_request", message: msg}
}

// status maps an error to its HTTP status and code. This is the one place
// errors become statuses.
func status(err error) (int, string) {
	var ae *apiError
	var cb *snowflake.ClockBehindError
	var re *segment.ResidueError
	var mb *http.MaxBytesError
	switch {
	case errors.As(err, &ae):
		return ae.status, ae.code
	case errors.Is(err, ErrPanic):
		return http.StatusInternalServerError, "internal"
	case errors.Is(err, ErrSnowflakeOff):
		return http.StatusServiceUnavailable, "snowflake_off"
	case errors.Is(err, ErrSegmentsOff):
		return http.StatusServiceUnavailable, "segments_off"
	case errors.Is(err, ErrBodyTooLarge), errors.As(err, &mb):
		return http.StatusRequestEntityTooLarge, "body_too_large"
	case errors.Is(err, ErrUnsupportedBody):
		return http.StatusUnsupportedMediaType, "unsupported_body"
	case errors.Is(err, ErrTagTooLong):
		return http.StatusBadRequest, "bad_request"
	case errors.Is(err, ErrOpaqueIDs), errors.Is(err, ErrOpaqueWide):
		return http.StatusBadRequest, "opaque_ids"
	case errors.Is(err, segment.ErrOpaqueRange):
		return http.StatusBadRequest, "opaque_ids"
	case errors.Is(err, segment.ErrPermutation):
		return http.StatusServiceUnavailable, "opaque_mismatch"
	case errors.Is(err, segment.ErrOpaqueUnsupported):
		return http.StatusServiceUnavailable, "opaque_unsupported"
	case errors.Is(err, segment.ErrUnknownTag):
		return http.StatusNotFound, "unknown_tag"
	case errors.Is(err, segment.ErrExhausted):
		return http.StatusServiceUnavailable, "tag_exhausted"
	case errors.Is(err, segment.ErrTagExists):
		return http.StatusConflict, "tag_exists"
	case errors.Is(err, snowflake.ErrNotServing), errors.Is(err, ErrSiteStopped):
		return http.StatusServiceUnavailable, "not_serving"
	case errors.Is(err, wide.ErrUnknownForm):
		return http.StatusBadRequest, "bad_request"
	case errors.Is(err, snowflake.ErrLayoutExhausted), errors.Is(err, wide.ErrTimeRange):
		return http.StatusServiceUnavailable, "layout_exhausted"
	case errors.As(err, &cb):
		return http.StatusServiceUnavailable, "clock_behind"
	case errors.Is(err, segment.ErrUnavailable), errors.As(err, &re):
		return http.StatusServiceUnavailable, "unavailable"
	case errors.Is(err, segment.ErrInvalid):
		return http.StatusBadRequest, "invalid"
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return http.StatusServiceUnavailable, "timeout"
	}
	return http.StatusServiceUnavailable, "unavailable"
}

// grpcCodes are the gRPC codes of the HTTP statuses status returns;
// every other status is Unavailable.
var grpcCodes = map[int]codes.Code{
	http.StatusBadRequest: codes.InvalidArgument, http.StatusUnauthorized: codes.Unauthenticated,
	http.StatusForbidden: codes.PermissionDenied, http.StatusNotFound: codes.NotFound,
	http.StatusConflict: codes.AlreadyExists, http.StatusTooManyRequests: codes.ResourceExhausted,
	http.StatusRequestEntityTooLarge: codes.ResourceExhausted, http.StatusUnsupportedMediaType: codes.InvalidArgument,
	http.StatusInternalServerError: codes.Internal,
}

// grpcError turns an error into a gRPC status, using the HTTP mapping's
// codes: this and status are the one place errors become statuses.
func grpcError(err error) error {
	code, name := status(err)
	c, ok := grpcCodes[code]
	if !ok {
		c = codes.Unavailable
	}
	return grpcstatus.Errorf(c, "%s: %s", name, message(name, err))
}

func writeError(w http.ResponseWriter, err error) {
	code, name := status(err)
	writeErrorCode(w, code, name, message(name, err))
}

func writeErrorCode(w http.ResponseWriter, status int, code, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(api.ErrorBody{Error: api.ErrorDetail{Code: code, Message: message}})
}

// message is the text of an error answer: the error, and for an unknown
// tag how to make one, since a tag is created before its first ID.
func message(name string, err error) string {
	if name == "unknown_tag" {
		return err.Error() + "; create it with POST /v1/segments (scope admin) or firn tag create"
	}
	return err.Error()
}
