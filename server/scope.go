package server

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// A scope is what a caller's token must grant to use a route or a gRPC
// method. Every route and method declares one where it is registered;
// the token check reads nothing else. A route registered with the zero
// scope, or open without being on openRoutes, stops the server from being
// built.
type scope struct {
	kind scopeKind
	// tag returns the tag the request names, for scopeTag.
	tag func(r *http.Request) string
	// tinyid: Tinyid's token= parameter may grant the tag too
	// (service.checkTinyid).
	tinyid bool
}

type scopeKind int

const (
	scopeNone scopeKind = iota // the zero value: not declared
	scopeOpen
	scopeSnowflake
	scopeAdmin
	scopeTag
)

var (
	// open: no token needed. Only the routes of openRoutes may have it.
	open = scope{kind: scopeOpen}
	// needSnowflake: snowflake IDs in every form (int64, UUIDv7, ULID)
	// and decoding.
	needSnowflake = scope{kind: scopeSnowflake}
	// needAdmin: segment administration.
	needAdmin = scope{kind: scopeAdmin}
)

// tagInPath needs tag:NAME for the tag in the path value name.
func tagInPath(name string) scope {
	return scope{kind: scopeTag, tag: func(r *http.Request) string { return r.PathValue(name) }}
}

// tagInForm needs tag:NAME for the tag in the form value name, which the
// route's parse step has read within bounds.
func tagInForm(name string) scope {
	return scope{kind: scopeTag, tag: func(r *http.Request) string { return r.Form.Get(name) }}
}

// tinyidBizType needs tag:BIZTYPE for Tinyid's bizType parameter, which
// Tinyid's token= parameter may grant as well as firn's credentials.
func tinyidBizType() scope {
	sc := tagInForm("bizType")
	sc.tinyid = true
	return sc
}

// openRoutes are the routes anyone may call: health, readiness, metrics
// and the API document. Nothing else is open.
var openRoutes = map[string]bool{
	"GET /healthz":         true,
	"GET /readyz":          true,
	"GET /metrics":         true,
	"GET /v1/openapi.json": true,
}

// errNoScope is a route or method registered without a scope: a bug that
// keeps the server from being built, never a route left open.
var errNoScope = errors.New("server: registered without a scope")

// check refuses a route whose scope is missing or wrongly open.
func (s scope) check(pattern string) error {
	switch {
	case s.kind == scopeNone:
		return fmt.Errorf("%w: %s", errNoScope, pattern)
	case s.kind == scopeOpen && !openRoutes[pattern]:
		return fmt.Errorf("server: %s is declared open but is not on the list of open routes", pattern)
	case s.kind == scopeTag && s.tag == nil:
		return fmt.Errorf("%w: %s names no tag", errNoScope, pattern)
	}
	return nil
}

// need returns the scope string a token must hold for r, or "" when the
// route is open.
func (s scope) need(r *http.Request) string {
	switch s.kind {
	case scopeSnowflake:
		return "snowflake"
	case scopeAdmin:
		return "admin"
	case scopeTag:
		return "tag:" + s.tag(r)
	}
	return ""
}

// bearer returns the token of an Authorization header: the scheme
// "Bearer" in any case (RFC 9110 §11.1), one or more spaces, the token.
// A bare secret without a scheme, or another scheme, is no token.
func bearer(header string) (string, bool) {
	scheme, rest, ok := strings.Cut(header, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token := strings.TrimLeft(rest, " ")
	return token, token != ""
}
