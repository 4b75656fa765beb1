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
	// ids: the route issues IDs, so a scope of auth.anonymous may open
	// it, and its answers are marked Cache-Control: no-store. Decoding,
	// the node's information and admin never are.
	ids bool
}

type scopeKind int

const (
	scopeNone scopeKind = iota // the zero value: not declared
	scopeOpen
	scopeSnowflake
	scopeAdmin
	scopeReveal
	scopeMetrics
	scopeTag
	// scopeRange: Tinyid's nextSegmentId routes, which reserve a whole
	// range of a tag in the store on every call.
	scopeRange
	// scopeStatus: the node's state (/v1/status), read-only.
	scopeStatus
	// scopeDecode: decoding a plain ID, which snowflake or status grants.
	scopeDecode
)

var (
	// open: no token needed. Only the routes of openRoutes may have it.
	open = scope{kind: scopeOpen}
	// needSnowflake: the node's information and guessing layouts.
	needSnowflake = scope{kind: scopeSnowflake}
	// needDecode: decoding a plain snowflake ID, with snowflake or status.
	needDecode = scope{kind: scopeDecode}
	// needStatus: what the node is doing (/v1/status).
	needStatus = scope{kind: scopeStatus}
	// snowflakeIDs: snowflake IDs.
	snowflakeIDs = scope{kind: scopeSnowflake, ids: true}
	// needAdmin: segment administration.
	needAdmin = scope{kind: scopeAdmin}
	// needReveal: undoing opaque mode's permutation. Never anonymous, and
	// refused while no token is configured.
	needReveal = scope{kind: scopeReveal}
	// needMetrics: /metrics in opaque mode, whose counters would tell how
	// many IDs were issued. Never anonymous.
	needMetrics = scope{kind: scopeMetrics}
)

// tagInPath needs tag:NAME for the IDs of the tag in the path value name.
func tagInPath(name string) scope {
	return scope{kind: scopeTag, ids: true, tag: func(r *http.Request) string { return r.PathValue(name) }}
}

// openRoutes are the routes anyone may call: health, readiness, metrics,
// the API document, and the status page's files, which carry no data
// (the page reads it from /v1/status). Nothing else is open.
var openRoutes = map[string]bool{
	"GET /healthz":         true,
	"GET /readyz":          true,
	"GET /metrics":         true,
	"GET /v1/openapi.json": true,
	"GET /{$}":             true,
	"GET /status.css":      true,
	"GET /status.js":       true,
	"GET /favicon.svg":     true,
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
	case (s.kind == scopeTag || s.kind == scopeRange) && s.tag == nil:
		return fmt.Errorf("%w: %s names no tag", errNoScope, pattern)
	}
	return nil
}

// need returns the scope a token must hold for r; its zero value when
// the route is open.
func (s scope) need(r *http.Request) grant {
	switch s.kind {
	case scopeSnowflake:
		return grant{prefix: "snowflake"}
	case scopeDecode:
		return grant{prefix: "snowflake", or: "status"}
	case scopeStatus:
		return grant{prefix: "status"}
	case scopeAdmin:
		return grant{prefix: "admin"}
	case scopeReveal:
		return grant{prefix: "reveal"}
	case scopeMetrics:
		return grant{prefix: "metrics"}
	case scopeTag:
		return grant{prefix: "tag:", name: s.tag(r)}
	case scopeRange:
		return grant{prefix: "range:", name: s.tag(r)}
	}
	return grant{}
}

// grant is a scope a request needs: snowflake or admin alone, or tag: and
// range: with the name of a tag, kept apart so that checking it builds no
// string; or, another scope that grants it as well (decoding: snowflake
// or status).
type grant struct{ prefix, name, or string }

// grantOf reads a scope such as "tag:order".
func grantOf(scope string) grant {
	if i := strings.IndexByte(scope, ':'); i >= 0 {
		return grant{prefix: scope[:i+1], name: scope[i+1:]}
	}
	return grant{prefix: scope}
}

func (g grant) String() string {
	if g.or != "" {
		return g.prefix + g.name + " or " + g.or
	}
	return g.prefix + g.name
}

// status reports whether the scope status holds g.
func (g grant) status() bool { return g.prefix == "status" || g.or == "status" }

// open reports whether no scope is needed.
func (g grant) open() bool { return g.prefix == "" }

// in reports whether scopes hold g: the scope itself, or tag:* and
// range:* for any name of their kind.
func (g grant) in(scopes []string) bool {
	wild := strings.HasSuffix(g.prefix, ":")
	for _, s := range scopes {
		if g.or != "" && s == g.or {
			return true
		}
		if !strings.HasPrefix(s, g.prefix) {
			continue
		}
		if rest := s[len(g.prefix):]; rest == g.name || (wild && rest == "*") {
			return true
		}
	}
	return false
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
