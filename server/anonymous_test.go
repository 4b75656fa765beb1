package server_test

import (
	"context"
	"errors"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"

	"github.com/firn-id/firn/firnpb"
	"github.com/firn-id/firn/segment"
	"github.com/firn-id/firn/segment/segmenttest"
	"github.com/firn-id/firn/server"
)

// anonymousService is a server with the tags order and user, the given
// tokens and anonymous grants.
func anonymousService(t *testing.T, tokens []server.Token, anon server.Anonymous) *server.Config {
	t.Helper()
	auth, err := server.NewAuth(tokens, anon)
	if err != nil {
		t.Fatal(err)
	}
	s := segmenttest.NewMemStore()
	for _, tag := range []string{"order", "user"} {
		if err := s.CreateTag(context.Background(), tag, 1, 100, ""); err != nil {
			t.Fatal(err)
		}
	}
	a, err := segment.NewAllocator(s, segment.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close(context.Background()) })
	return &server.Config{Snowflake: unreservedGenerator(t), Segments: a, SegmentStore: s, Auth: auth}
}

// from sends a request without credentials from the client address remote.
func from(h http.Handler, remote, method, target string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, target, nil)
	r.RemoteAddr = remote
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// TestAnonymousOpensIDRoutesOnly: anonymous grants, with no token at all,
// open the routes of their scopes that issue IDs and nothing else:
// decoding and the node's information need a token, Tinyid's
// nextSegmentId needs range:TAG, and admin is 403 with no admin token.
func TestAnonymousOpensIDRoutesOnly(t *testing.T) {
	for _, tt := range []struct {
		name   string
		scopes []string
		want   map[string]int
	}{
		{"snowflake and a tag", []string{"snowflake", "tag:order"}, map[string]int{
			"GET /v1/snowflake/next":                           200,
			"GET /v1/snowflake/batch?count=3":                  200,
			"POST /api/snowflake/get/any":                      200,
			"GET /v1/snowflake/decode/1":                       401,
			"GET /v1/snowflake/info":                           401,
			"GET /decodeSnowflakeId?snowflakeId=1":             401,
			"GET /v1/segments/order/next":                      200,
			"GET /v1/segments/order/batch?count=2":             200,
			"GET /api/segment/get/order":                       200,
			"GET /api/segment/get/user":                        401,
			"GET /tinyid/id/nextId?bizType=order":              200,
			"POST /tinyid/id/nextIdSimple?bizType=order":       200,
			"GET /tinyid/id/nextIdSimple?bizType=user":         401,
			"GET /tinyid/id/nextSegmentId?bizType=order":       401,
			"GET /tinyid/id/nextSegmentIdSimple?bizType=order": 401,
			"GET /v1/segments":                                 403,
			"POST /v1/segments/order/advance":                  403,
			"GET /healthz":                                     200,
		}},
		{"a range of its own", []string{"range:order"}, map[string]int{
			"GET /tinyid/id/nextSegmentId?bizType=order":        200,
			"POST /tinyid/id/nextSegmentIdSimple?bizType=order": 200,
			"GET /tinyid/id/nextSegmentId?bizType=user":         401,
			"GET /tinyid/id/nextId?bizType=order":               401,
			"GET /v1/snowflake/next":                            401,
		}},
		{"every tag", []string{"tag:*"}, map[string]int{
			"GET /api/segment/get/user":                  200,
			"GET /tinyid/id/nextSegmentId?bizType=order": 401,
			"GET /v1/snowflake/next":                     401,
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := handlerOf(t, anonymousService(t, nil, server.Anonymous{Scopes: tt.scopes}))
			for req, want := range tt.want {
				method, target, _ := strings.Cut(req, " ")
				if w := from(h, "192.0.2.1:4000", method, target); w.Code != want {
					t.Errorf("%s without credentials = %d %s, want %d", req, w.Code, w.Body.String(), want)
				}
			}
		})
	}
}

// TestAdminNeedsAnAdminToken: with auth on, admin needs a token holding
// it; with none configured it is refused (403) to everyone, with or
// without credentials.
func TestAdminNeedsAnAdminToken(t *testing.T) {
	snow := server.Token{Name: "snow", Secret: "snow-secret-0123", Scopes: []string{"snowflake", "tag:*"}}
	ops := server.Token{Name: "ops", Secret: "ops-secret-01234", Scopes: []string{"admin"}}
	for _, tt := range []struct {
		name   string
		tokens []server.Token
		anon   []string
		secret string
		want   int
	}{
		{"anonymous only, no credentials", nil, []string{"tag:*"}, "", 403},
		{"anonymous only, a bearer token", nil, []string{"tag:*"}, "ops-secret-01234", 403},
		{"no admin token, a token without it", []server.Token{snow}, nil, "snow-secret-0123", 403},
		{"no admin token, no credentials", []server.Token{snow}, []string{"tag:*"}, "", 403},
		{"an admin token, no credentials", []server.Token{snow, ops}, []string{"tag:*"}, "", 401},
		{"an admin token, another token", []server.Token{snow, ops}, nil, "snow-secret-0123", 403},
		{"an admin token, it", []server.Token{snow, ops}, []string{"tag:*"}, "ops-secret-01234", 200},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := handlerOf(t, anonymousService(t, tt.tokens, server.Anonymous{Scopes: tt.anon}))
			if w := do(h, "GET", "/v1/segments", tt.secret, ""); w.Code != tt.want {
				t.Fatalf("GET /v1/segments = %d %s, want %d", w.Code, w.Body.String(), tt.want)
			}
		})
	}
}

// TestAnonymousRate: anonymous requests are limited per client address
// (an IPv6 /64 is one client) with 429 and Retry-After; Tinyid's routes
// answer it in Tinyid's shape; tokens are not limited by it; the
// metrics count both.
func TestAnonymousRate(t *testing.T) {
	tokens := []server.Token{{Name: "snow", Secret: "snow-secret-0123", Scopes: []string{"snowflake"}}}
	h := handlerOf(t, anonymousService(t, tokens, server.Anonymous{Scopes: []string{"snowflake", "tag:order"}, Rate: 3}))
	for i := range 3 {
		if w := from(h, "192.0.2.1:4000", "GET", "/v1/snowflake/next"); w.Code != 200 {
			t.Fatalf("request %d = %d %s, want 200", i+1, w.Code, w.Body.String())
		}
	}
	w := from(h, "192.0.2.1:4001", "GET", "/v1/snowflake/next")
	if w.Code != http.StatusTooManyRequests || w.Header().Get("Retry-After") != "1" || !strings.Contains(w.Body.String(), "anonymous_rate") {
		t.Fatalf("4th request = %d Retry-After %q %s, want 429, Retry-After 1, naming auth.anonymous_rate",
			w.Code, w.Header().Get("Retry-After"), w.Body.String())
	}
	if w := from(h, "192.0.2.1:4002", "GET", "/tinyid/id/nextId?bizType=order"); w.Code != http.StatusTooManyRequests || !strings.Contains(w.Body.String(), `"code":6`) {
		t.Fatalf("Tinyid's nextId over the rate = %d %s, want 429 with Tinyid's code 6", w.Code, w.Body.String())
	}
	if w := do(h, "GET", "/v1/snowflake/next", "snow-secret-0123", ""); w.Code != 200 {
		t.Fatalf("a token from the same test client = %d, want 200", w.Code)
	}
	if w := from(h, "192.0.2.2:4000", "GET", "/v1/snowflake/next"); w.Code != 200 {
		t.Fatalf("another client = %d, want 200", w.Code)
	}
	for i := range 3 {
		from(h, "[2001:db8:1:1::1]:4000", "GET", "/v1/snowflake/next")
		if w := from(h, "[2001:db8:1:2::1]:4000", "GET", "/v1/snowflake/next"); w.Code != 200 {
			t.Fatalf("another /64, request %d = %d, want 200", i+1, w.Code)
		}
	}
	if w := from(h, "[2001:db8:1:1::ffff]:4000", "GET", "/v1/snowflake/next"); w.Code != http.StatusTooManyRequests {
		t.Fatalf("a 4th request from one /64 = %d, want 429", w.Code)
	}
	metrics := from(h, "192.0.2.3:4000", "GET", "/metrics").Body.String()
	for _, want := range []string{
		`firn_anonymous_requests_total{route="GET /v1/snowflake/next"} 10`,
		`firn_anonymous_rate_limited_total{route="GET /v1/snowflake/next"} 2`,
		`firn_anonymous_rate_limited_total{route="GET /tinyid/id/nextId"} 1`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}

// TestNoAnonymousSeriesWithoutAnonymousScopes: a server with no
// auth.anonymous exports none of the anonymous counters, rather than one
// series of zeros per route.
func TestNoAnonymousSeriesWithoutAnonymousScopes(t *testing.T) {
	h := newHandler(t, nil)
	if w := get(h, "GET", "/v1/snowflake/next"); w.Code != 200 {
		t.Fatalf("next: %d", w.Code)
	}
	if m := get(h, "GET", "/metrics").Body.String(); strings.Contains(m, "firn_anonymous_") {
		t.Fatalf("metrics of a server without anonymous scopes carry anonymous series:\n%s", m)
	}
}

// TestAnonymousNotOverGRPC: anonymous grants cover HTTP routes only;
// a gRPC call without credentials is refused.
func TestAnonymousNotOverGRPC(t *testing.T) {
	svc := anonymousService(t, nil, server.Anonymous{Scopes: []string{"snowflake", "tag:*"}})
	c := firnpb.NewFirnClient(serveGRPC(t, svc))
	if _, err := c.Next(context.Background(), &firnpb.NextRequest{}); code(err) != codes.Unauthenticated {
		t.Fatalf("Next without credentials: %v, want Unauthenticated", err)
	}
	if _, err := c.SegmentNext(context.Background(), &firnpb.SegmentRequest{Tag: "order"}); code(err) != codes.Unauthenticated {
		t.Fatalf("SegmentNext without credentials: %v, want Unauthenticated", err)
	}
}

// TestNewAuthRejectsAnonymous: each refused anonymous setting names its field.
func TestNewAuthRejectsAnonymous(t *testing.T) {
	for _, tt := range []struct {
		name  string
		anon  server.Anonymous
		field string
	}{
		{"admin", server.Anonymous{Scopes: []string{"admin"}}, "anonymous"},
		{"unknown scope", server.Anonymous{Scopes: []string{"order"}}, "anonymous"},
		{"negative rate", server.Anonymous{Scopes: []string{"snowflake"}, Rate: -1}, "anonymous_rate"},
		{"NaN rate", server.Anonymous{Scopes: []string{"snowflake"}, Rate: math.NaN()}, "anonymous_rate"},
		{"infinite rate", server.Anonymous{Scopes: []string{"snowflake"}, Rate: math.Inf(1)}, "anonymous_rate"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := server.NewAuth(nil, tt.anon)
			var te *server.TokenError
			if !errors.As(err, &te) || te.Index != -1 || te.Field != tt.field {
				t.Fatalf("err = %v, want a *TokenError of %s", err, tt.field)
			}
		})
	}
	a, err := server.NewAuth(nil, server.Anonymous{Scopes: []string{"range:*"}})
	if err != nil || a.AnonymousRate() != server.DefaultAnonymousRate || !a.Enabled() || a.HasTokens() {
		t.Fatalf("range:* at rate 0: %v, rate %g, enabled %v, tokens %v; want the default rate, enabled, no tokens",
			err, a.AnonymousRate(), a.Enabled(), a.HasTokens())
	}
}
