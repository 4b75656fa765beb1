package server_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/firn-id/firn/segment"
	"github.com/firn-id/firn/segment/segmenttest"
	"github.com/firn-id/firn/server"
)

// fakeTinyidTokens is Tinyid's token table in memory: token → bizTypes.
type fakeTinyidTokens struct {
	mu   sync.Mutex
	rows map[string][]string
}

func (f *fakeTinyidTokens) Allows(_ context.Context, bizType, token string) (allowed, known bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	types, known := f.rows[token]
	for _, t := range types {
		if t == bizType && bizType != "" {
			return true, true
		}
	}
	return false, known
}

// tinyidTokenHandler serves tags order and user with Tinyid's tokens
// "t-order" (order) and "t-user" (user), firn's tokens and anonymous
// scopes as given.
func tinyidTokenHandler(t *testing.T, log *slog.Logger, tokens []server.Token, anonymous ...string) http.Handler {
	t.Helper()
	s := segmenttest.NewMemStore()
	for _, tag := range []string{"order", "user"} {
		s.CreateTag(context.Background(), tag, 1, 100, "")
	}
	a, _ := segment.NewAllocator(s, segment.Config{})
	t.Cleanup(func() { a.Close(context.Background()) })
	auth, err := server.NewAuth(tokens, server.Anonymous{Scopes: anonymous})
	if err != nil {
		t.Fatal(err)
	}
	fake := &fakeTinyidTokens{rows: map[string][]string{"t-order": {"order"}, "t-user": {"user"}}}
	return handlerOf(t, &server.Config{Segments: a, SegmentStore: s, Auth: auth, TinyidTokens: fake, Log: log})
}

var tinyidRoutes = []struct {
	path   string
	simple bool
}{
	{"/tinyid/id/nextId", false},
	{"/tinyid/id/nextIdSimple", true},
	{"/tinyid/id/nextSegmentId", false},
	{"/tinyid/id/nextSegmentIdSimple", true},
}

// TestTinyidTokensGrantTheirBizType: on all four routes, by query and by
// form body, Tinyid's token= passes for its bizType only; a refusal is
// 401 (no or unknown token) or 403 (a token of another bizType) with
// Tinyid's body, empty on the Simple routes.
func TestTinyidTokensGrantTheirBizType(t *testing.T) {
	for _, firn := range []struct {
		name   string
		tokens []server.Token
	}{
		{"without firn tokens", nil},
		{"with firn tokens", []server.Token{{Name: "orders", Secret: "o-secret-0123456", Scopes: []string{"tag:order"}}}},
	} {
		h := tinyidTokenHandler(t, nil, firn.tokens)
		for _, rt := range tinyidRoutes {
			for _, tt := range []struct {
				name, query string
				status      int
			}{
				{"its token", "bizType=order&token=t-order", 200},
				{"no token", "bizType=order", 401},
				{"an empty token", "bizType=order&token=", 401},
				{"a wrong token", "bizType=order&token=wrong", 401},
				{"another bizType's token", "bizType=order&token=t-user", 403},
				{"a token without bizType", "token=t-order", 403},
			} {
				for _, post := range []bool{false, true} {
					t.Run(firn.name+rt.path+"/"+tt.name, func(t *testing.T) {
						var w *httptest.ResponseRecorder
						if post {
							r := httptest.NewRequest("POST", rt.path, strings.NewReader(tt.query))
							r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
							w = httptest.NewRecorder()
							h.ServeHTTP(w, r)
						} else {
							w = do(h, "GET", rt.path+"?"+tt.query, "", "")
						}
						if w.Code != tt.status {
							t.Fatalf("%s?%s (POST %v) = %d %s; want %d", rt.path, tt.query, post, w.Code, w.Body, tt.status)
						}
						if tt.status == 200 {
							return
						}
						want := `{"data":null,"code":5,"message":"token is error"}` + "\n"
						if rt.simple {
							want = ""
						}
						if w.Body.String() != want {
							t.Fatalf("refusal body %q, want Tinyid's %q", w.Body, want)
						}
					})
				}
			}
		}
	}
}

// TestTinyidTokensBesideFirnCredentials: a Tinyid request passes with
// Tinyid's token, or firn's bearer token with tag:BIZTYPE, or an
// anonymous grant; firn's secret is never read from token=.
func TestTinyidTokensBesideFirnCredentials(t *testing.T) {
	tokens := []server.Token{
		{Name: "orders", Secret: "o-secret-0123456", Scopes: []string{"tag:order"}},
		{Name: "slow", Secret: "r-secret-0123456", Scopes: []string{"tag:*"}, Rate: 0.001},
	}
	h := tinyidTokenHandler(t, nil, tokens, "tag:user")
	for _, tt := range []struct {
		name, query, bearer string
		status              int
	}{
		{"firn's token with the scope", "bizType=order", "o-secret-0123456", 200},
		{"firn's token without the scope", "bizType=secret", "o-secret-0123456", 403},
		{"firn's unknown token", "bizType=order", "nope", 401},
		{"Tinyid's token beside a wrong bearer", "bizType=order&token=t-order", "nope", 200},
		{"firn's secret as token=", "bizType=order&token=o-secret-0123456", "", 401},
		{"an anonymous grant", "bizType=user", "", 200},
		{"an anonymous grant with a wrong token=", "bizType=user&token=wrong", "", 200},
		{"no grant", "bizType=order", "", 401},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if w := do(h, "GET", "/tinyid/id/nextId?"+tt.query, tt.bearer, ""); w.Code != tt.status {
				t.Fatalf("= %d %s; want %d", w.Code, w.Body, tt.status)
			}
		})
	}
	t.Run("firn's token over its rate", func(t *testing.T) {
		do(h, "GET", "/tinyid/id/nextId?bizType=order", "r-secret-0123456", "")
		w := do(h, "GET", "/tinyid/id/nextId?bizType=order", "r-secret-0123456", "")
		if w.Code != 429 || w.Header().Get("Retry-After") == "" || !strings.Contains(w.Body.String(), `"code":6`) {
			t.Fatalf("= %d %v %s; want 429 with Retry-After and Tinyid's code 6", w.Code, w.Header(), w.Body)
		}
	})
}

// TestTinyidTokensNotLogged: the token= values of requests, allowed or
// not, never reach the server's log, even when a handler panics.
func TestTinyidTokensNotLogged(t *testing.T) {
	var log strings.Builder
	var mu sync.Mutex
	h := tinyidTokenHandler(t, slog.New(slog.NewTextHandler(lockedWriter{&mu, &log}, &slog.HandlerOptions{Level: slog.LevelDebug})), nil)
	for _, q := range []string{"bizType=order&token=t-order", "bizType=order&token=s3cr3t-value", "bizType=order&token=t-order&batchSize=0"} {
		do(h, "GET", "/tinyid/id/nextId?"+q, "", "")
		do(h, "GET", "/tinyid/id/nextIdSimple?"+url.PathEscape(q), "", "")
	}
	mu.Lock()
	defer mu.Unlock()
	for _, secret := range []string{"t-order", "s3cr3t-value"} {
		if strings.Contains(log.String(), secret) {
			t.Fatalf("the log holds the token %q:\n%s", secret, log.String())
		}
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  *strings.Builder
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
