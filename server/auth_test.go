package server_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/firn-id/firn/segment"
	"github.com/firn-id/firn/segment/segmenttest"
	"github.com/firn-id/firn/server"
	"github.com/firn-id/firn/snowflake"
)

func authHandler(t *testing.T, tokens []server.Token) http.Handler {
	t.Helper()
	g, err := snowflake.New(snowflake.Config{Reservation: snowflake.Unreserved()})
	if err != nil {
		t.Fatal(err)
	}
	s := segmenttest.NewMemStore()
	for _, tag := range []string{"order", "user"} {
		s.CreateTag(context.Background(), tag, 1, 100, "")
	}
	a, _ := segment.NewAllocator(s, segment.Config{})
	t.Cleanup(func() { a.Close(context.Background()) })
	auth, err := server.NewAuth(tokens, server.Anonymous{})
	if err != nil {
		t.Fatal(err)
	}
	return handlerOf(t, &server.Config{Snowflake: g, Segments: a, SegmentStore: s, Auth: auth})
}

func do(h http.Handler, method, target, token, body string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, target, strings.NewReader(body))
	if token != "" {
		r.Header.Set("Authorization", "Bearer "+token)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func TestAuthScopes(t *testing.T) {
	h := authHandler(t, []server.Token{
		{Name: "orders", Secret: "o-secret-0123456", Scopes: []string{"tag:order"}},
		{Name: "ids", Secret: "s-secret-0123456", Scopes: []string{"snowflake"}, Rate: 2},
		{Name: "ops", Secret: "a-secret-0123456", Scopes: []string{"admin", "tag:*"}},
	})
	tests := []struct {
		name, method, target, token, body string
		status                            int
	}{
		{"no token", "GET", "/v1/snowflake/next", "", "", 401},
		{"unknown token", "GET", "/v1/snowflake/next", "nope", "", 401},
		{"snowflake scope", "GET", "/v1/snowflake/next", "s-secret-0123456", "", 200},
		{"tag scope on its tag", "GET", "/v1/segments/order/next", "o-secret-0123456", "", 200},
		{"tag scope on another tag", "GET", "/v1/segments/user/next", "o-secret-0123456", "", 403},
		{"tag scope on snowflake", "GET", "/v1/snowflake/next", "o-secret-0123456", "", 403},
		{"tinyid with the header", "GET", "/tinyid/id/nextIdSimple?bizType=order", "o-secret-0123456", "", 200},
		{"tinyid wrong tag", "GET", "/tinyid/id/nextIdSimple?bizType=user", "o-secret-0123456", "", 403},
		// firn's secrets never travel in a URL, where logs and proxies
		// keep them: Tinyid's token parameter is not one.
		{"a firn secret in the URL", "GET", "/tinyid/id/nextIdSimple?bizType=order&token=o-secret-0123456", "", "", 401},
		{"leaf segment", "GET", "/api/segment/get/order", "o-secret-0123456", "", 200},
		{"admin without scope", "GET", "/v1/segments", "o-secret-0123456", "", 403},
		{"admin list", "GET", "/v1/segments", "a-secret-0123456", "", 200},
		{"wildcard tag", "GET", "/v1/segments/user/next", "a-secret-0123456", "", 200},
		{"health is open", "GET", "/healthz", "", "", 200},
		{"metrics are open", "GET", "/metrics", "", "", 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if w := do(h, tt.method, tt.target, tt.token, tt.body); w.Code != tt.status {
				t.Fatalf("%s %s = %d %s; want %d", tt.method, tt.target, w.Code, w.Body.String(), tt.status)
			}
		})
	}
	limited := 0
	for range 10 {
		if w := do(h, "GET", "/v1/snowflake/next", "s-secret-0123456", ""); w.Code == 429 {
			limited++
			if ra := w.Header().Get("Retry-After"); ra != "1" {
				t.Errorf("429 with Retry-After %q, want 1 (a token of 2 per second)", ra)
			}
		}
	}
	if limited == 0 {
		t.Fatal("a token limited to 2 requests per second made 10 in a row")
	}
}

// TestAuthorizationHeader: the scheme in any case (RFC 9110), never a
// bare secret or another scheme.
func TestAuthorizationHeader(t *testing.T) {
	h := authHandler(t, []server.Token{{Name: "ids", Secret: "s-secret-0123456", Scopes: []string{"snowflake"}}})
	for _, tt := range []struct {
		header string
		status int
	}{
		{"Bearer s-secret-0123456", 200},
		{"bearer s-secret-0123456", 200},
		{"BEARER  s-secret-0123456", 200},
		{"s-secret-0123456", 401},
		{"Basic s-secret-0123456", 401},
		{"Bearer", 401},
	} {
		r := httptest.NewRequest("GET", "/v1/snowflake/next", nil)
		r.Header.Set("Authorization", tt.header)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != tt.status {
			t.Errorf("Authorization: %q = %d %s, want %d", tt.header, w.Code, w.Body.String(), tt.status)
		}
	}
}

// TestAnonymousScopes: requests without credentials may use the scopes
// named anonymous, and nothing else; admin is never anonymous.
func TestAnonymousScopes(t *testing.T) {
	tokens := []server.Token{{Name: "ops", Secret: "a-secret-0123456", Scopes: []string{"admin"}}}
	if _, err := server.NewAuth(tokens, server.Anonymous{Scopes: []string{"admin"}}); err == nil {
		t.Fatal("admin accepted as an anonymous scope")
	}
	auth, err := server.NewAuth(tokens, server.Anonymous{Scopes: []string{"tag:order"}})
	if err != nil {
		t.Fatal(err)
	}
	g, _ := snowflake.New(snowflake.Config{Reservation: snowflake.Unreserved()})
	s := segmenttest.NewMemStore()
	s.CreateTag(context.Background(), "order", 1, 100, "")
	s.CreateTag(context.Background(), "user", 1, 100, "")
	a, _ := segment.NewAllocator(s, segment.Config{})
	t.Cleanup(func() { a.Close(context.Background()) })
	h := handlerOf(t, &server.Config{Snowflake: g, Segments: a, SegmentStore: s, Auth: auth})
	for _, tt := range []struct {
		target string
		status int
	}{
		{"/tinyid/id/nextIdSimple?bizType=order", 200},
		{"/api/segment/get/order", 200},
		{"/api/segment/get/user", 401},
		{"/v1/snowflake/next", 401},
		{"/v1/segments", 401},
	} {
		if w := do(h, "GET", tt.target, "", ""); w.Code != tt.status {
			t.Errorf("GET %s without credentials = %d, want %d", tt.target, w.Code, tt.status)
		}
	}
}

func TestNewAuthRejects(t *testing.T) {
	for _, tokens := range [][]server.Token{
		{{Name: "x", Secret: ""}},
		{{Name: "x", Secret: "x-secret-0123456", Scopes: []string{"root"}}},
		{{Name: "x", Secret: "x-secret-0123456"}, {Name: "x", Secret: "x-secret-6543210"}},
		{{Name: "x", Secret: "x-secret-0123456", Rate: -1}},
	} {
		if _, err := server.NewAuth(tokens, server.Anonymous{}); err == nil {
			t.Errorf("%+v accepted", tokens)
		}
	}
}

// TestNewAuthRejectsSharedSecret: two tokens with one secret would give a
// request whichever token's scopes the lookup met first; the error names
// the second token and never the secret.
func TestNewAuthRejectsSharedSecret(t *testing.T) {
	tokens := []server.Token{
		{Name: "a", Secret: "samesecret1-0123", Scopes: []string{"snowflake"}},
		{Name: "b", Secret: "samesecret1-0123", Scopes: []string{"admin"}},
	}
	_, err := server.NewAuth(tokens, server.Anonymous{})
	var te *server.TokenError
	if !errors.As(err, &te) || te.Index != 1 || te.Field != "secret" || !strings.Contains(te.Reason, "token b has the secret of token a") {
		t.Fatalf("err = %v, want a *TokenError of token 1's secret naming b and a", err)
	}
	if strings.Contains(err.Error(), "samesecret1") {
		t.Fatalf("%q prints the secret", err)
	}
}

func TestAdmin(t *testing.T) {
	h := authHandler(t, nil)
	tests := []struct {
		name, method, target, body string
		status                     int
		want                       string
	}{
		{"create", "POST", "/v1/segments", `{"tag":"invoice","first":"1000","step":50,"description":"invoices"}`, 201, `"next":"1000"`},
		{"create again", "POST", "/v1/segments", `{"tag":"invoice","step":50}`, 409, "tag_exists"},
		{"create without step", "POST", "/v1/segments", `{"tag":"x"}`, 400, "step 0"},
		{"create with junk", "POST", "/v1/segments", `{"tag":"x","step":5,"owner":"me"}`, 400, "unknown field"},
		{"create not JSON", "POST", "/v1/segments", `tag=x`, 400, "body"},
		{"list", "GET", "/v1/segments", "", 200, `"tag":"invoice"`},
		{"step", "PATCH", "/v1/segments/invoice", `{"step":500}`, 200, `"step":500`},
		{"step of nothing", "PATCH", "/v1/segments/nope", `{"step":500}`, 404, "unknown_tag"},
		{"advance", "POST", "/v1/segments/invoice/advance", `{"to":"90000"}`, 200, `"next":"90000"`},
		{"advance back", "POST", "/v1/segments/invoice/advance", `{"to":"5"}`, 200, `"next":"90000"`},
		{"advance without to", "POST", "/v1/segments/invoice/advance", `{}`, 400, "to:"},
		{"advance to the top", "POST", "/v1/segments/invoice/advance", `{"to":"9223372036854775000"}`, 400, "to:"},
		{"create below zero", "POST", "/v1/segments", `{"tag":"neg","first":"-1000","step":5}`, 400, "first -1000"},
		{"create at the top", "POST", "/v1/segments", `{"tag":"top","first":"9223372036854775000","step":5}`, 400, "first 9223372036854775000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := do(h, tt.method, tt.target, "", tt.body)
			if w.Code != tt.status || !strings.Contains(w.Body.String(), tt.want) {
				t.Fatalf("%s %s = %d %s; want %d containing %q", tt.method, tt.target, w.Code, w.Body.String(), tt.status, tt.want)
			}
		})
	}
	if w := do(h, "GET", "/v1/segments/invoice/next", "", ""); !strings.Contains(w.Body.String(), `"90000"`) {
		t.Fatalf("first ID after advance: %s", w.Body.String())
	}
}

// TestNewAuthRefusesWeakSecrets: a token secret shorter than
// MinSecretBytes, or an example firn's documentation showed (in any
// case), is refused as the token's secret, in words that never hold it;
// one of MinSecretBytes is taken.
func TestNewAuthRefusesWeakSecrets(t *testing.T) {
	for _, tc := range []struct{ secret, want string }{
		{"change-me", "example secret of firn's documentation"},
		{" Change-Me ", "example secret of firn's documentation"},
		{"fifteen-bytes-x", "shorter than 16 bytes"},
	} {
		_, err := server.NewAuth([]server.Token{{Name: "orders", Secret: tc.secret, Scopes: []string{"snowflake"}}}, server.Anonymous{})
		var te *server.TokenError
		if !errors.As(err, &te) || te.Index != 0 || te.Field != "secret" || !strings.Contains(te.Reason, tc.want) || !strings.Contains(te.Reason, "token orders") {
			t.Errorf("secret %q: %v; want a *TokenError of token 0's secret: %s", tc.secret, err, tc.want)
		}
		if err != nil && strings.Contains(strings.ToLower(err.Error()), strings.ToLower(strings.TrimSpace(tc.secret))) {
			t.Errorf("secret %q: the error shows it: %v", tc.secret, err)
		}
	}
	if _, err := server.NewAuth([]server.Token{{Name: "orders", Secret: "sixteen-bytes-xx", Scopes: []string{"snowflake"}}}, server.Anonymous{}); err != nil {
		t.Errorf("a secret of %d bytes: %v", server.MinSecretBytes, err)
	}
}
