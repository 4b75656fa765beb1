package client

import (
	"errors"
	"fmt"
)

var (
	// ErrUnavailable is returned when the buffer is empty and no server
	// could refill it within the retry bound: every server down, not
	// ready, or over its rate. Calls succeed again by themselves once a
	// server answers.
	ErrUnavailable = errors.New("client: no firn server could serve")

	// ErrUnknownTag is returned for a tag no server knows.
	ErrUnknownTag = errors.New("client: unknown tag")

	// ErrUnauthorized is returned when a server refuses the token: missing,
	// wrong, or without the scope the call needs.
	ErrUnauthorized = errors.New("client: unauthorized")

	// ErrInvalid is returned when a server refuses a request as malformed,
	// such as a batch larger than its limit (Config.MaxBatch above the
	// server's max_batch).
	ErrInvalid = errors.New("client: invalid request")

	// ErrClosed is returned by calls after Close.
	ErrClosed = errors.New("client: closed")
)

// Error is a server's answer that stopped a call, or the last of them when
// every server failed. Its Kind is one of the sentinels above, so
// errors.Is(err, client.ErrUnknownTag) works through it.
type Error struct {
	// Kind is the sentinel this error is (ErrUnavailable, ErrUnknownTag…).
	Kind error
	// Endpoint is the server that answered, or the last one tried.
	Endpoint string
	// Code is the server's error code ("unknown_tag", "not_serving"…), or
	// "transport" when no answer came.
	Code string
	// Message is the server's message, or the transport's error.
	Message string
}

func (e *Error) Error() string {
	return fmt.Sprintf("%v: %s: %s: %s", e.Kind, e.Endpoint, e.Code, e.Message)
}

// Unwrap returns Kind.
func (e *Error) Unwrap() error { return e.Kind }

// retryable reports whether another server may answer where this one did
// not: the service was unavailable, not the request wrong.
func retryable(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Kind == ErrUnavailable
}
