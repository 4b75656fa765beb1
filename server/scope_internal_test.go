package server

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	grpcstatus "google.golang.org/grpc/status"

	"github.com/firn-id/firn/firnpb"
	"github.com/firn-id/firn/segment"
	"github.com/firn-id/firn/segment/segmenttest"
	"github.com/firn-id/firn/snowflake"
)

// scopeServer has a token per scope and the tag "order".
func scopeServer(t testing.TB) *Server {
	t.Helper()
	g, err := snowflake.New(snowflake.Config{Reservation: snowflake.Unreserved()})
	if err != nil {
		t.Fatal(err)
	}
	s := segmenttest.NewMemStore()
	if err := s.CreateTag(context.Background(), "order", 1, 100, ""); err != nil {
		t.Fatal(err)
	}
	a, err := segment.NewAllocator(s, segment.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close(context.Background()) })
	auth, err := NewAuth([]Token{
		{Name: "snow", Secret: "snowflake-secret", Scopes: []string{"snowflake"}},
		{Name: "order", Secret: "order-secret-012", Scopes: []string{"tag:order"}},
		{Name: "admin", Secret: "admin-secret-012", Scopes: []string{"admin"}},
		{Name: "reveal", Secret: "reveal-secret-01", Scopes: []string{"reveal"}},
		{Name: "range", Secret: "range-secret-012", Scopes: []string{"range:order"}},
		{Name: "status", Secret: "status-secret-01", Scopes: []string{"status"}},
	}, Anonymous{})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := New(Config{Snowflake: g, Segments: a, SegmentStore: s, Auth: auth})
	if err != nil {
		t.Fatal(err)
	}
	return srv
}

// secretOf is the token that grants each scope, and one that does not.
var secretOf = map[string][2]string{
	"snowflake": {"snowflake-secret", "order-secret-012"},
	"tag":       {"order-secret-012", "snowflake-secret"},
	"admin":     {"admin-secret-012", "order-secret-012"},
	"reveal":    {"reveal-secret-01", "snowflake-secret"},
	"range":     {"range-secret-012", "order-secret-012"},
	"status":    {"status-secret-01", "snowflake-secret"},
	// decoding: snowflake grants it as well as status (TestStatusGrantsDecode).
	"snowflake or status": {"status-secret-01", "order-secret-012"},
}

// documented reads the OpenAPI document's operations with their scopes.
func documented(t *testing.T) map[string]string {
	t.Helper()
	var doc struct {
		Paths map[string]map[string]struct {
			Scope string `json:"x-firn-scope"`
		}
	}
	if err := json.Unmarshal(OpenAPI, &doc); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for path, ops := range doc.Paths {
		for method, op := range ops {
			out[strings.ToUpper(method)+" "+path] = op.Scope
		}
	}
	return out
}

// TestEveryRouteDeclaresItsScope enumerates the routes of the router and
// of the OpenAPI document, in both directions, and sends each through the
// full handler without a token, with a token lacking its scope and with
// one holding it.
func TestEveryRouteDeclaresItsScope(t *testing.T) {
	srv := scopeServer(t)
	routes, doc := srv.http.routeScopes(), documented(t)
	if !maps.Equal(routes, doc) {
		for p, s := range routes {
			if doc[p] != s {
				t.Errorf("%s: routed with scope %q, documented with %q", p, s, doc[p])
			}
		}
		for p, s := range doc {
			if _, ok := routes[p]; !ok {
				t.Errorf("%s (scope %q) is documented but not routed", p, s)
			}
		}
	}
	for _, pattern := range slices.Sorted(maps.Keys(routes)) {
		sc := routes[pattern]
		method, path, _ := strings.Cut(pattern, " ")
		target := strings.NewReplacer("{id}", "1", "{tag}", "order", "{key}", "order").Replace(path)
		if strings.HasPrefix(path, "/tinyid/") {
			target += "?bizType=order"
		}
		send := func(secret string) int {
			r := httptest.NewRequest(method, target, nil)
			if secret != "" {
				r.Header.Set("Authorization", "Bearer "+secret)
			}
			w := httptest.NewRecorder()
			srv.Handler().ServeHTTP(w, r)
			return w.Code
		}
		t.Run(pattern, func(t *testing.T) {
			if sc == "open" {
				if !openRoutes[pattern] && !openRoutes[pattern+"{$}"] {
					t.Fatalf("open but not on the list of open routes")
				}
				if c := send(""); c == http.StatusUnauthorized || c == http.StatusForbidden {
					t.Fatalf("open route without a token: %d", c)
				}
				return
			}
			if c := send(""); c != http.StatusUnauthorized {
				t.Errorf("without a token: %d, want 401", c)
			}
			if c := send(secretOf[sc][1]); c != http.StatusForbidden {
				t.Errorf("with a token lacking scope %s: %d, want 403", sc, c)
			}
			if c := send(secretOf[sc][0]); c == http.StatusUnauthorized || c == http.StatusForbidden {
				t.Errorf("with a token of scope %s: %d", sc, c)
			}
		})
	}
}

// TestRouteWithoutScopeIsRefused: a route registered with no scope, or
// open without being on the list, keeps the server from being built.
func TestRouteWithoutScopeIsRefused(t *testing.T) {
	tests := []struct {
		name    string
		pattern string
		sc      scope
	}{
		{"no scope", "GET /v1/new", scope{}},
		{"open off the list", "GET /v1/new", open},
		{"tag from nowhere", "GET /v1/new/{tag}", scope{kind: scopeTag}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.sc.check(tt.pattern); err == nil {
				t.Fatal("accepted")
			}
		})
	}
	if err := (scope{}).check("GET /x"); !errors.Is(err, errNoScope) {
		t.Fatalf("err = %v, want errNoScope", err)
	}
}

// TestEveryGRPCMethodDeclaresItsScope: the methods of every service the
// gRPC server registers and the scope table agree in both directions, and
// a method missing from the table is refused, never given a scope.
func TestEveryGRPCMethodDeclaresItsScope(t *testing.T) {
	registered := map[string]bool{}
	gs := scopeServer(t).GRPC()
	for name, info := range gs.GetServiceInfo() {
		for _, m := range info.Methods {
			registered["/"+name+"/"+m.Name] = true
		}
	}
	for m := range registered {
		if _, ok := grpcScopes[m]; !ok {
			t.Errorf("%s is registered but declares no scope", m)
		}
	}
	for m, sc := range grpcScopes {
		if !registered[m] {
			t.Errorf("%s has a scope but is not registered", m)
		}
		if sc.need != nil && !sc.fromMessage && sc.kind == scopeNone { // Stream decides from its first message
			t.Errorf("%s needs a scope but declares no kind: the server cannot tell whether its mode is on", m)
		}
	}
	for _, d := range []grpc.ServiceDesc{firnpb.Firn_ServiceDesc, healthpb.Health_ServiceDesc} {
		if len(d.Methods)+len(d.Streams) == 0 {
			t.Fatalf("%s: no methods", d.ServiceName)
		}
	}
	g := &grpcService{svc: scopeServer(t).svc}
	called := false
	_, err := g.unaryAuth(context.Background(), nil, &grpc.UnaryServerInfo{FullMethod: "/firn.v1.Firn/Undeclared"},
		func(context.Context, any) (any, error) { called = true; return nil, nil })
	if grpcstatus.Code(err) != codes.PermissionDenied || called {
		t.Fatalf("undeclared unary method: %v (handler called: %v), want PermissionDenied", err, called)
	}
	err = g.streamAuth(nil, nil, &grpc.StreamServerInfo{FullMethod: "/firn.v1.Firn/UndeclaredStream"},
		func(any, grpc.ServerStream) error { called = true; return nil })
	if grpcstatus.Code(err) != codes.PermissionDenied || called {
		t.Fatalf("undeclared stream method: %v (handler called: %v), want PermissionDenied", err, called)
	}
	// Reflection is behind the admin scope.
	reflect := &grpc.StreamServerInfo{FullMethod: "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo"}
	for _, tt := range []struct {
		auth string
		want codes.Code
	}{{"", codes.Unauthenticated}, {"Bearer order-secret-012", codes.PermissionDenied}, {"Bearer admin-secret-012", codes.OK}} {
		ctx := context.Background()
		if tt.auth != "" {
			ctx = metadata.NewIncomingContext(ctx, metadata.Pairs("authorization", tt.auth))
		}
		err := g.streamAuth(nil, ctxStream{ctx: ctx}, reflect, func(any, grpc.ServerStream) error { return nil })
		if grpcstatus.Code(err) != tt.want {
			t.Errorf("reflection with %q: %v, want %s", tt.auth, err, tt.want)
		}
	}
	// A declared method is checked against its scope.
	ctx := metadata.NewIncomingContext(context.Background(), metadata.Pairs("authorization", "bearer order-secret-012"))
	_, err = g.unaryAuth(ctx, &firnpb.NextRequest{}, &grpc.UnaryServerInfo{FullMethod: "/firn.v1.Firn/Next"},
		func(context.Context, any) (any, error) { return nil, nil })
	if grpcstatus.Code(err) != codes.PermissionDenied {
		t.Fatalf("Next with a tag token: %v, want PermissionDenied", err)
	}
}

func TestBearer(t *testing.T) {
	tests := []struct {
		name, header, want string
		ok                 bool
	}{
		{"canonical", "Bearer s3cret-012345678", "s3cret-012345678", true},
		{"lower case", "bearer s3cret-012345678", "s3cret-012345678", true},
		{"upper case", "BEARER s3cret-012345678", "s3cret-012345678", true},
		{"extra spaces", "Bearer   s3cret-012345678", "s3cret-012345678", true},
		{"bare secret", "s3cret-012345678", "", false},
		{"other scheme", "Basic czNjcmV0", "", false},
		{"scheme alone", "Bearer", "", false},
		{"scheme and space", "Bearer ", "", false},
		{"empty", "", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, ok := bearer(tt.header); got != tt.want || ok != tt.ok {
				t.Fatalf("bearer(%q) = %q, %v; want %q, %v", tt.header, got, ok, tt.want, tt.ok)
			}
		})
	}
}

// ctxStream is a server stream that only has a context.
type ctxStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (s ctxStream) Context() context.Context { return s.ctx }
