package server

import (
	"crypto/subtle"
	"fmt"
	"math"
	"net/http"
	"strings"
	"sync"

	"golang.org/x/time/rate"
)

// Token is one bearer token and what it may do.
type Token struct {
	Name   string   // for logs and errors; never the secret
	Secret string   // the bearer token
	Scopes []string // "snowflake", "tag:<name>", "tag:*", "admin"
	// Rate limits the token's requests per second; 0 means unlimited.
	Rate float64
}

// Auth checks bearer tokens: firn's own secrets, accepted only in the
// Authorization header (never in a URL, where logs and proxies keep
// them). With no tokens every request is allowed: the command permits
// that only on loopback. Anonymous scopes let callers without any
// credentials (Leaf's and Tinyid's clients) use chosen scopes; never
// admin.
type Auth struct {
	tokens    []Token
	anonymous []string
	mu        sync.Mutex
	limiters  map[string]*rate.Limiter
}

// NewAuth returns the checker of tokens; it refuses a token without a
// name of its own, a secret or a known scope, a negative rate, and an
// anonymous scope that is unknown or admin, with a *TokenError. anonymous
// lists the scopes a request without an Authorization header may use
// (snowflake, tag:NAME, tag:*; never admin).
func NewAuth(tokens []Token, anonymous ...string) (*Auth, error) {
	names := map[string]bool{}
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
		case t.Rate < 0:
			return nil, fail("rate", "%g: want 0 (unlimited) or more requests per second", t.Rate)
		}
		names[t.Name] = true
		for _, s := range t.Scopes {
			if !ValidScope(s) {
				return nil, fail("scopes", "%q: want %s", s, ScopeNames)
			}
		}
	}
	for _, s := range anonymous {
		if !ValidScope(s) || s == "admin" || s == "reveal" || s == "metrics" {
			return nil, &TokenError{Index: -1, Field: "anonymous", Reason: fmt.Sprintf("%q: want snowflake, tag:NAME or tag:* (admin, reveal and metrics are never anonymous)", s)}
		}
	}
	return &Auth{tokens: tokens, anonymous: anonymous, limiters: map[string]*rate.Limiter{}}, nil
}

// TokenError is a token, or an anonymous scope, that NewAuth refuses.
type TokenError struct {
	Index  int    // the token's position; -1 for an anonymous scope
	Field  string // name, secret, rate, scopes or anonymous
	Reason string
}

func (e *TokenError) Error() string {
	if e.Index < 0 {
		return "server: anonymous scopes: " + e.Reason
	}
	return fmt.Sprintf("server: token %d: %s: %s", e.Index, e.Field, e.Reason)
}

// ScopeNames describes the scopes a token may hold, for messages.
const ScopeNames = "snowflake, admin, reveal, metrics, tag:NAME or tag:*"

// ValidScope reports whether s is a scope some route needs: the one rule
// for scopes.
func ValidScope(s string) bool {
	return s == "snowflake" || s == "admin" || s == "reveal" || s == "metrics" || strings.HasPrefix(s, "tag:")
}

// Enabled reports whether any token is configured.
func (a *Auth) Enabled() bool { return a != nil && len(a.tokens) > 0 }

// Anonymous returns the scopes open to requests without credentials.
func (a *Auth) Anonymous() []string {
	if a == nil {
		return nil
	}
	return a.anonymous
}

// refusal is why a request was not allowed: its HTTP status, a message,
// and for 429 how many seconds to wait.
type refusal struct {
	status     int
	message    string
	retryAfter int
}

// check returns why r may not use a route of scope sc, or nil.
func (a *Auth) check(sc scope, r *http.Request) *refusal {
	need := sc.need(r)
	if need == "reveal" && !a.Enabled() {
		return &refusal{status: http.StatusForbidden, message: "revealing opaque IDs needs a token with scope reveal: configure auth.tokens"}
	}
	if !a.Enabled() || need == "" {
		return nil
	}
	h, present := r.Header["Authorization"]
	if !present || len(h) == 0 {
		return a.allow(need, "", false)
	}
	secret, ok := bearer(h[0])
	if !ok {
		return &refusal{status: http.StatusUnauthorized, message: "Authorization: want the scheme Bearer and a token (Authorization: Bearer …)"}
	}
	return a.allow(need, secret, true)
}

// allow checks secret against the scope need, and the token's rate. A
// request without credentials (present false) may use the anonymous
// scopes.
func (a *Auth) allow(need, secret string, present bool) *refusal {
	if !a.Enabled() {
		return nil
	}
	if !present {
		if allows(a.anonymous, need) {
			return nil
		}
		return &refusal{status: http.StatusUnauthorized, message: "a bearer token is required (Authorization: Bearer …)"}
	}
	for _, t := range a.tokens {
		if subtle.ConstantTimeCompare([]byte(t.Secret), []byte(secret)) != 1 {
			continue
		}
		if !allows(t.Scopes, need) {
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

func allows(scopes []string, need string) bool {
	for _, s := range scopes {
		if s == need || (s == "tag:*" && strings.HasPrefix(need, "tag:")) {
			return true
		}
	}
	return false
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
