package server

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/firn-id/firn/segment"
	"github.com/firn-id/firn/snowflake"
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
	switch {
	case errors.As(err, &ae):
		return ae.status, ae.code
	case errors.Is(err, segment.ErrUnknownTag):
		return http.StatusNotFound, "unknown_tag"
	case errors.Is(err, segment.ErrExhausted):
		return http.StatusServiceUnavailable, "tag_exhausted"
	case errors.Is(err, segment.ErrTagExists):
		return http.StatusConflict, "tag_exists"
	case errors.Is(err, snowflake.ErrNotServing):
		return http.StatusServiceUnavailable, "not_serving"
	case errors.Is(err, snowflake.ErrLayoutExhausted):
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

func writeError(w http.ResponseWriter, err error) {
	code, name := status(err)
	writeErrorCode(w, code, name, err.Error())
}

func writeErrorCode(w http.ResponseWriter, status int, code, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]string{"code": code, "message": message}})
}
