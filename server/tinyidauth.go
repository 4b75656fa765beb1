package server

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
)

// TinyidTokens holds Didi Tinyid's tokens (its tiny_id_token table):
// which bizTypes each token may use. sqlstore.TinyidTokens is one.
type TinyidTokens interface {
	// Allows reports whether token may use bizType, as Tinyid's
	// canVisit, and whether token is known at all (a known token for
	// another bizType is 403, an unknown one 401). ctx bounds any read
	// of the table a miss causes.
	Allows(ctx context.Context, bizType, token string) (allowed, known bool)
}

// tinyidTokenError is Tinyid's ErrorCode.TOKEN_ERR: code 5, "token is error".
var tinyidTokenError = tinyidResponse{Code: 5, Message: "token is error"}

// checkTinyid checks a Tinyid route's request: it passes with Tinyid's
// token= for its bizType, with firn's bearer token holding the route's
// scope (tag:BIZTYPE, or range:BIZTYPE on nextSegmentId), or with an
// anonymous grant of it. Without Tinyid's tokens the route is checked as
// every other route is. The second result says whether an anonymous
// grant decided.
func (s *service) checkTinyid(sc scope, r *http.Request) (*refusal, bool) {
	if s.TinyidTokens == nil {
		return s.Auth.check(sc, r)
	}
	bizType, token := tinyidParam(r, "bizType"), tinyidParam(r, "token")
	ctx, cancel := context.WithTimeout(r.Context(), s.Timeout)
	defer cancel()
	allowed, known := s.TinyidTokens.Allows(ctx, bizType, token)
	if allowed {
		return nil, false
	}
	if _, header := r.Header["Authorization"]; header && s.Auth.Enabled() {
		return s.Auth.check(sc, r) // firn's own token, in its one place
	}
	if no, granted := s.Auth.anonymousGrant(sc, sc.need(r), r); granted {
		return no, true
	}
	if known {
		return &refusal{status: http.StatusForbidden, message: "the token does not cover this bizType"}, false
	}
	return &refusal{status: http.StatusUnauthorized, message: "a token for this bizType is required"}, false
}

// refuseTinyid answers a Tinyid route's refusal as Tinyid does, with an
// honest status: Tinyid's body {"data":null,"code":5,"message":"token is
// error"} on nextId and nextSegmentId, an empty body on the Simple
// routes. A token over its rate (429) gets code 6 and the reason.
func refuseTinyid(simple bool) func(w http.ResponseWriter, no *refusal) {
	return func(w http.ResponseWriter, no *refusal) {
		if no.retryAfter > 0 {
			w.Header().Set("Retry-After", strconv.Itoa(no.retryAfter))
		}
		if simple {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			w.WriteHeader(no.status)
			return
		}
		body := tinyidTokenError
		if no.status == http.StatusTooManyRequests {
			body = tinyidResponse{Code: 6, Message: no.message}
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(no.status)
		_ = json.NewEncoder(w).Encode(body)
	}
}
