package client

import (
	"errors"
	"fmt"
	"strings"
)

var (
	// ErrUnavailable is returned when the buffer is empty and no server
	// could refill it within the retry bound: every server down, not
	// ready, over its rate, or too slow (snowflake answers as old as
	// Config.MaxAge). Its *Error names each server tried and why
	// (Error.Tried). Calls succeed again by themselves once a server
	// answers.
	ErrUnavailable = errors.New("client: no firn server could serve")

	// ErrUnknownTag is returned for a tag no server knows.
	ErrUnknownTag = errors.New("client: unknown tag")

	// ErrTagExists is returned by CreateTag for a tag the store already
	// holds.
	ErrTagExists = errors.New("client: tag exists")

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
	// Code is the server's error code ("unknown_tag", "not_serving"…),
	// "transport" when no answer came, "too_slow" for snowflake IDs that
	// arrived as old as Config.MaxAge, or "bad_answer" for an answer no
	// server sends (cut short, not of the route's shape, a batch with an
	// ID twice or out of order).
	Code string
	// Message is the server's message, or the transport's error.
	Message string
	// Tried is, when every server failed a refill, each server's failure
	// in the order they were tried (this error's own fields are the
	// last); nil otherwise.
	Tried []*Error
}

func (e *Error) Error() string {
	s := fmt.Sprintf("%v: %s: %s: %s", e.Kind, e.Endpoint, e.Code, e.Message)
	if e.Endpoint == "" { // refused before any request
		s = fmt.Sprintf("%v: %s: %s", e.Kind, e.Code, e.Message)
	}
	if len(e.Tried) < 2 {
		return s
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%v: %d requests failed:", e.Kind, len(e.Tried))
	// A failure repeated by the next attempt is written once, with its
	// count: three tries of one refusing server read as one refusal.
	for i := 0; i < len(e.Tried); {
		t, n := e.Tried[i], 1
		for i+n < len(e.Tried) && sameFailure(t, e.Tried[i+n]) {
			n++
		}
		if i > 0 {
			b.WriteByte(';')
		}
		fmt.Fprintf(&b, " %s: %s: %s", t.Endpoint, t.Code, t.Message)
		if n > 1 {
			fmt.Fprintf(&b, " (%d times)", n)
		}
		i += n
	}
	return b.String()
}

// sameFailure reports whether a and b say the same of the same server.
func sameFailure(a, b *Error) bool {
	return a.Endpoint == b.Endpoint && a.Code == b.Code && a.Message == b.Message
}

// Unwrap returns Kind.
func (e *Error) Unwrap() error { return e.Kind }

// EndpointError is an endpoint of Config.Endpoints that can never work,
// returned by New.
type EndpointError struct {
	// Endpoint is the endpoint as given, with what could be a secret
	// (a password, a query's values) replaced.
	Endpoint string
	// Reason is what is wrong with it and what to write instead.
	Reason string
	// Credentials is true for a URL that carries user information: the
	// token belongs in Config.Token, which Reason names.
	Credentials bool
}

func (e *EndpointError) Error() string {
	return fmt.Sprintf("client: endpoint %q: %s", e.Endpoint, e.Reason)
}

// retryable reports whether another server may answer where this one did
// not: the service was unavailable, not the request wrong.
func retryable(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Kind == ErrUnavailable
}
