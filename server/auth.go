package server

import (
	"crypto/subtle"
	"fmt"
	"math"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"sync"

	"golang.org/x/time/rate"
)

// Token is one bearer token and what it may do.
type Token struct {
	Name   string   // for logs and errors; never the secret
	Secret string   // the bearer token
	Scopes []string // "snowflake", "status", "tag:<name>", "tag:*", "admin"…
	// Rate limits the token's requests per second; 0 means unlimited.
	Rate float64
}

// Auth checks bearer tokens: firn's own secrets, accepted only in the
// Authorization header (never in a URL, where logs and proxies keep
// them). With no tokens and no anonymous scopes every request is
// allowed: the command permits that only on loopback. Anonymous scopes
// let callers without any credentials (Leaf's and Tinyid's clients) use
// the HTTP ID routes of chosen scopes, at a rate per client address;
// never admin, decoding or gRPC. Admin needs a token that holds it: with
// none configured, admin is refused to everyone (403).
type Auth struct {
	tokens    []Token
	anonymous []string
	// admin: some token holds the scope admin.
	admin bool
	// statusLoopback: requests without credentials from loopback hold
	// the scope status (Anonymous.StatusOnLoopback).
	statusLoopback bool
	// clients limits the anonymous requests of each client address.
	clients  *clientLimits
	mu       sync.Mutex
	limiters map[string]*rate.Limiter
}

// Anonymous is what callers without credentials may do.
type Anonymous struct {
	// Scopes are the scopes whose ID routes a request without an
	// Authorization header may use: snowflake, tag:NAME, tag:*,
	// range:NAME, range:* (never admin).
	Scopes []string
	// Rate bounds the anonymous requests of one client address (an IPv4
	// address, an IPv6 /64) per second, with a burst of one second's
	// worth; above it they get 429 with Retry-After. 0 means
	// DefaultAnonymousRate; it cannot be turned off.
	Rate float64
	// StatusOnLoopback grants the scope status (the status page's data,
	// and decoding) to requests without credentials from a loopback
	// address; never any other scope. Default false.
	StatusOnLoopback bool
}

// DefaultAnonymousRate is the anonymous requests per second one client
// address may make unless Anonymous.Rate says otherwise.
const DefaultAnonymousRate = 5000

// MinSecretBytes is the shortest token secret NewAuth accepts: a short
// one is guessed, and a bearer token is checked on every request with no
// lockout.
const MinSecretBytes = 16

// exampleSecrets are the token secrets firn's documentation has shown,
// lower case: whoever copies one shares it with every reader.
var exampleSecrets = []string{"change-me"}

// NewAuth returns the checker of tokens and anonymous grants; it
// refuses a token without a name of its own, a secret of its own of at
// least MinSecretBytes that no documentation shows, or a known scope, a
// negative rate, an anonymous scope that is unknown or admin, and a
// negative anonymous rate, with a *TokenError. No message holds a secret.
func NewAuth(tokens []Token, anon Anonymous) (*Auth, error) {
	names := map[string]bool{}
	secrets := map[string]string{} // secret -> the first token's name
	admin := false
	for i, t := range tokens {
		fail := func(field, format string, args ...any) error {
			return &TokenError{Index: i, Field: field, Reason: fmt.Sprintf(format, args...)}
		}
		switch {
		case t.Name == "":
			return nil, fail("name", "a token needs a name")
		case names[t.Name]:
			return nil, fail("name", "%q: another token has this name", t.Name)
		case t.Secret == "":
			return nil, fail("secret", "token %s has no secret", t.Name)
		case slices.Contains(exampleSecrets, strings.ToLower(strings.TrimSpace(t.Secret))):
			return nil, fail("secret", "token %s has the example secret of firn's documentation, which every reader knows: "+
				"write a secret of your own (openssl rand -hex 32)", t.Name)
		case len(t.Secret) < MinSecretBytes:
			return nil, fail("secret", "token %s has a secret shorter than %d bytes, which is guessed: "+
				"write a longer one (openssl rand -hex 32)", t.Name, MinSecretBytes)
		case secrets[t.Secret] != "":
			// A request carrying it would hold whichever token's scopes
			// the lookup met first.
			return nil, fail("secret", "token %s has the secret of token %s: give each token its own secret", t.Name, secrets[t.Secret])
		case t.Rate < 0:
			return nil, fail("rate", "%g: want 0 (unlimited) or more requests per second", t.Rate)
		}
		names[t.Name] = true
		secrets[t.Secret] = t.Name
		for _, s := range t.Scopes {
			if !ValidScope(s) {
				return nil, fail("scopes", "%q: want %s", s, ScopeNames)
			}
			admin = admin || s == "admin"
		}
	}
	for _, s := range anon.Scopes {
		if !ValidScope(s) || s == "admin" || s == "reveal" || s == "metrics" || s == "status" {
			return nil, &TokenError{Index: -1, Field: "anonymous", Reason: fmt.Sprintf("%q: want snowflake, tag:NAME, tag:*, range:NAME or range:* (admin, reveal and metrics are never anonymous; status only on loopback, with status_anonymous_on_loopback)", s)}
		}
	}
	if anon.Rate < 0 || math.IsNaN(anon.Rate) || math.IsInf(anon.Rate, 0) {
		return nil, &TokenError{Index: -1, Field: "anonymous_rate", Reason: fmt.Sprintf("%g: want requests per second per client above 0 (0: the default, %d)", anon.Rate, DefaultAnonymousRate)}
	}
	if anon.Rate == 0 {
		anon.Rate = DefaultAnonymousRate
	}
	return &Auth{tokens: tokens, anonymous: anon.Scopes, admin: admin, statusLoopback: anon.StatusOnLoopback, clients: newClientLimits(anon.Rate),
		limiters: map[string]*rate.Limiter{}}, nil
}

// TokenError is a token, or an anonymous setting, that NewAuth
// refuses.
type TokenError struct {
	Index  int    // the token's position; -1 for an anonymous setting
	Field  string // name, secret, rate, scopes; anonymous or anonymous_rate
	Reason string
}

func (e *TokenError) Error() string {
	if e.Index < 0 {
		return fmt.Sprintf("server: %s: %s", e.Field, e.Reason)
	}
	return fmt.Sprintf("server: token %d: %s: %s", e.Index, e.Field, e.Reason)
}

// ScopeNames describes the scopes a token may hold, for messages.
const ScopeNames = "snowflake, status, admin, reveal, metrics, tag:NAME, tag:*, range:NAME or range:*"

// ValidScope reports whether s is a scope some route needs: the one rule
// for scopes.
func ValidScope(s string) bool {
	return s == "snowflake" || s == "status" || s == "admin" || s == "reveal" || s == "metrics" || strings.HasPrefix(s, "tag:") || strings.HasPrefix(s, "range:")
}

// Enabled reports whether requests are checked: some token or anonymous
// scope is configured.
func (a *Auth) Enabled() bool { return a != nil && (len(a.tokens) > 0 || len(a.anonymous) > 0) }

// HasTokens reports whether any token is configured.
func (a *Auth) HasTokens() bool { return a != nil && len(a.tokens) > 0 }

// Anonymous returns the scopes open to requests without credentials.
func (a *Auth) Anonymous() []string {
	if a == nil {
		return nil
	}
	return a.anonymous
}

// AnonymousRate returns the anonymous requests per second one client
// address may make.
func (a *Auth) AnonymousRate() float64 {
	if a == nil {
		return DefaultAnonymousRate
	}
	return a.clients.rate
}

// refusal is why a request was not allowed: its HTTP status, a message,
// and for 429 how many seconds to wait.
type refusal struct {
	status     int
	message    string
	retryAfter int
}

// check returns why r may not use a route of scope sc, or nil, and
// whether an anonymous grant decided.
func (a *Auth) check(sc scope, r *http.Request) (*refusal, bool) {
	need := sc.need(r)
	if need.prefix == "reveal" && !a.HasTokens() {
		return &refusal{status: http.StatusForbidden, message: "revealing opaque IDs needs a token with scope reveal: configure auth.tokens (a server or tag not in opaque mode has nothing to reveal: its IDs are read by the decode routes)"}, false
	}
	if !a.Enabled() || need.open() {
		return nil, false
	}
	h, present := r.Header["Authorization"]
	if !present || len(h) == 0 {
		if a.statusLoopback && need.status() && loopback(r.RemoteAddr) {
			return nil, false
		}
		if no, granted := a.anonymousGrant(sc, need, r); granted {
			return no, true
		}
		return a.allowGrant(need, "", false), false
	}
	secret, ok := bearer(h[0])
	if !ok {
		return &refusal{status: http.StatusUnauthorized, message: "Authorization: want the scheme Bearer and a token (Authorization: Bearer …)"}, false
	}
	return a.allowGrant(need, secret, true), false
}

// StatusOnLoopback reports whether requests without credentials from
// loopback hold the scope status.
func (a *Auth) StatusOnLoopback() bool { return a != nil && a.statusLoopback }

// loopback reports whether remote (host:port, as http.Request.RemoteAddr)
// is a loopback address.
func loopback(remote string) bool {
	ap, err := netip.ParseAddrPort(remote)
	return err == nil && ap.Addr().Unmap().IsLoopback()
}

// anonymousGrant reports whether an anonymous scope covers the route of
// sc for r, which carries no credentials, and if so why it may not pass
// (its client is over the rate), or nil. Only routes that issue IDs can
// be covered; admin never is.
func (a *Auth) anonymousGrant(sc scope, need grant, r *http.Request) (*refusal, bool) {
	if a == nil || !sc.ids || sc.kind == scopeAdmin || !need.in(a.anonymous) {
		return nil, false
	}
	if !a.clients.allow(r.RemoteAddr) {
		return &refusal{status: http.StatusTooManyRequests, retryAfter: int(math.Ceil(1 / a.clients.rate)),
			message: fmt.Sprintf("this client is over the anonymous rate of %g requests per second (auth.anonymous_rate)", a.clients.rate)}, true
	}
	return nil, true
}

// allowGrant checks secret against the scope need, and the token's rate.
// A request without credentials (present false) that no anonymous grant
// covered is refused. Admin needs a token that holds it; with none
// configured, admin is refused to everyone.
func (a *Auth) allowGrant(need grant, secret string, present bool) *refusal {
	if !a.Enabled() {
		return nil
	}
	if need.prefix == "admin" && !a.admin {
		return &refusal{status: http.StatusForbidden, message: "admin is refused: no token of auth.tokens holds the scope admin"}
	}
	if !present {
		return &refusal{status: http.StatusUnauthorized, message: "a bearer token is required (Authorization: Bearer …)"}
	}
	for _, t := range a.tokens {
		if subtle.ConstantTimeCompare([]byte(t.Secret), []byte(secret)) != 1 {
			continue
		}
		if !need.in(t.Scopes) {
			return &refusal{status: http.StatusForbidden, message: fmt.Sprintf("token %s lacks scope %s", t.Name, need)}
		}
		if t.Rate > 0 && !a.limiter(t).Allow() {
			return &refusal{status: http.StatusTooManyRequests, retryAfter: int(math.Ceil(1 / t.Rate)),
				message: fmt.Sprintf("token %s is over its rate of %g requests per second", t.Name, t.Rate)}
		}
		return nil
	}
	return &refusal{status: http.StatusUnauthorized, message: "unknown token"}
}

func (a *Auth) limiter(t Token) *rate.Limiter {
	a.mu.Lock()
	defer a.mu.Unlock()
	l := a.limiters[t.Name]
	if l == nil {
		l = rate.NewLimiter(rate.Limit(t.Rate), max(1, int(t.Rate)))
		a.limiters[t.Name] = l
	}
	return l
}
