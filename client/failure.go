package client

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// A Failure says why a call got no answer of firn's from an endpoint, in
// terms of what its caller changes: the endpoint's scheme or port, the
// token, the trusted certificates, or nothing (the server is down).
type Failure int

const (
	// FailureOther is an answer firn's API gave (its Code says which
	// error), or a failure of no kind below.
	FailureOther Failure = iota
	// PlainHTTP is a server that speaks plain HTTP to an https:// endpoint.
	PlainHTTP
	// HTTPSOnly is a server that speaks HTTPS to an http:// endpoint.
	HTTPSOnly
	// NotHTTP is a port that answers, but not in HTTP (a gRPC port).
	NotHTTP
	// TokenNotSendable is a token that holds a character a header cannot carry
	// (a newline, another control character).
	TokenNotSendable
	// UntrustedCertificate is a server certificate signed by an
	// authority this machine does not trust (Config.TLS's roots).
	UntrustedCertificate
	// Refused is an endpoint at which nothing listens.
	Refused
	// Closed is a connection closed before any answer, as a gRPC port
	// may close an HTTP/1.1 connection, or a server that stopped.
	Closed
	// NoAnswer is any other failure to get an answer (Code "transport").
	NoAnswer
)

// Failure says why e's call got no answer of firn's. net/http and
// crypto/tls say most of these in their messages only, which the client
// carries in Message: it is read here, where they are made, so a caller
// branches on the Failure.
func (e *Error) Failure() Failure {
	msg := e.Message
	switch {
	case strings.Contains(msg, "server gave HTTP response to HTTPS client"):
		return PlainHTTP
	case strings.Contains(msg, "Client sent an HTTP request to an HTTPS server"):
		return HTTPSOnly
	case strings.Contains(msg, "malformed HTTP response"), strings.Contains(msg, "malformed HTTP status code"):
		return NotHTTP
	case strings.Contains(msg, "invalid header field value"):
		return TokenNotSendable
	case strings.Contains(msg, "x509: "):
		return UntrustedCertificate
	case e.Kind == ErrUnauthorized || e.Kind == ErrInvalid:
		return FailureOther
	case strings.Contains(msg, "connection refused"):
		return Refused
	case strings.Contains(msg, "readLoopPeekFailLocked"), strings.Contains(msg, "server closed idle connection"), strings.HasSuffix(msg, ": EOF"):
		return Closed
	case e.Code == "transport":
		return NoAnswer
	}
	return FailureOther
}

// Detail is e's message for a terminal: for a transport failure without
// the method, path and URL the client and net/http put before it (GET
// /v1/…: Get "http://…": …), since the caller names the server; and cut
// before its first byte that is not printable text, or escaped as such
// (a quoted \x..), as what a port that is not firn's answers may be
// binary.
func (e *Error) Detail() string {
	msg := e.Message
	if e.Code == "transport" {
		if j := strings.Index(msg, ` "http`); j >= 0 {
			if i := strings.Index(msg[j:], `": `); i >= 0 {
				msg = msg[j+i+3:]
			}
		}
	}
	end := len(msg)
	if i := strings.Index(msg, `\x`); i >= 0 {
		end = i
	}
	for i, c := range msg[:end] {
		if c == utf8.RuneError || !unicode.IsPrint(c) {
			end = i
			break
		}
	}
	if end < len(msg) {
		return strings.TrimRight(msg[:end], ` "`) + "…"
	}
	return msg
}
