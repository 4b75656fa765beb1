package server

import (
	"crypto/subtle"
	"fmt"
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

// Auth checks bearer tokens (and Tinyid's token parameter on its routes).
// With no tokens every request is allowed: the command permits that only
// on loopback.
type Auth struct {
	tokens   []Token
	mu       sync.Mutex
	limiters map[string]*rate.Limiter
}

// NewAuth returns the checker of tokens; it refuses an empty secret or an
// unknown scope.
func NewAuth(tokens []Token) (*Auth, error) {
	names := map[string]bool{}
	for i, t := range tokens {
		if t.Name == "" || names[t.Name] {
			return nil, fmt.Errorf("server: token %d: want a name of its own, got %q", i, t.Name)
		}
		names[t.Name] = true
		if t.Secret == "" {
			return nil, fmt.Errorf("server: token %d (%s) has no secret", i, t.Name)
		}
		for _, s := range t.Scopes {
			if s != "snowflake" && s != "admin" && !strings.HasPrefix(s, "tag:") {
				return nil, fmt.Errorf("server: token %s: unknown scope %q (want snowflake, admin, tag:NAME or tag:*)", t.Name, s)
			}
		}
		if t.Rate < 0 {
			return nil, fmt.Errorf("server: token %s: rate %g is negative", t.Name, t.Rate)
		}
	}
	return &Auth{tokens: tokens, limiters: map[string]*rate.Limiter{}}, nil
}

// Enabled reports whether any token is configured.
func (a *Auth) Enabled() bool { return a != nil && len(a.tokens) > 0 }

// scopeFor returns the scope a route needs, or "" for open routes.
func scopeFor(pattern string, r *http.Request) string {
	route := pattern[strings.IndexByte(pattern, ' ')+1:]
	switch {
	case strings.HasPrefix(route, "/v1/snowflake/"), strings.HasPrefix(route, "/api/snowflake/"), route == "/decodeSnowflakeId":
		return "snowflake"
	case route == "/v1/segments", route == "/v1/segments/{tag}", route == "/v1/segments/{tag}/advance":
		return "admin"
	case strings.HasPrefix(route, "/v1/segments/{tag}/"):
		return "tag:" + r.PathValue("tag")
	case strings.HasPrefix(route, "/api/segment/get/"):
		return "tag:" + r.PathValue("key")
	case strings.HasPrefix(route, "/tinyid/"):
		return "tag:" + r.Form.Get("bizType") // read by parseTinyidForm, within bounds
	}
	return ""
}

// check returns the HTTP status and message refusing r, or 0.
func (a *Auth) check(pattern string, r *http.Request) (int, string) {
	need := scopeFor(pattern, r)
	if !a.Enabled() || need == "" {
		return 0, ""
	}
	secret := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	if secret == "" && strings.HasPrefix(pattern[strings.IndexByte(pattern, ' ')+1:], "/tinyid/") {
		secret = r.Form.Get("token")
	}
	return a.allow(need, secret)
}

// allow checks secret against the scope need, and the token's rate.
func (a *Auth) allow(need, secret string) (int, string) {
	if !a.Enabled() {
		return 0, ""
	}
	if secret == "" {
		return http.StatusUnauthorized, "a bearer token is required (Authorization: Bearer …)"
	}
	for _, t := range a.tokens {
		if subtle.ConstantTimeCompare([]byte(t.Secret), []byte(secret)) != 1 {
			continue
		}
		if !allows(t.Scopes, need) {
			return http.StatusForbidden, fmt.Sprintf("token %s lacks scope %s", t.Name, need)
		}
		if t.Rate > 0 && !a.limiter(t).Allow() {
			return http.StatusTooManyRequests, fmt.Sprintf("token %s is over its rate of %g requests per second", t.Name, t.Rate)
		}
		return 0, ""
	}
	return http.StatusUnauthorized, "unknown token"
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
