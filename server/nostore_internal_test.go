package server

import (
	"encoding/json"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
)

// idRoutes returns the patterns of the routes h registered as issuing IDs.
func (h *handler) idRoutes() []string {
	var out []string
	for _, rt := range h.routes {
		if rt.scope.ids {
			out = append(out, rt.pattern)
		}
	}
	return out
}

// TestIDRoutesAreNeverStored enumerates the routes registered as issuing
// IDs — firn's own, Leaf's and Tinyid's — and sends each through the
// full handler with a token that grants it and without one: every
// answer says Cache-Control: no-store, so that no proxy told to cache
// GETs replays IDs. The routes the issue names are among them, and the
// OpenAPI document states the header on exactly these routes.
func TestIDRoutesAreNeverStored(t *testing.T) {
	srv := scopeServer(t)
	routes := srv.http.idRoutes()
	scopes := srv.http.routeScopes()
	for _, want := range []string{
		"GET /v1/snowflake/next", "GET /v1/snowflake/batch",
		"GET /v1/segments/{tag}/next", "GET /v1/segments/{tag}/batch",
		"GET /v1/uuid/batch", "GET /v1/ulid/next",
		"GET /api/snowflake/get/{key}", "POST /api/segment/get/{key}",
		"GET /tinyid/id/nextId", "POST /tinyid/id/nextIdSimple",
		"GET /tinyid/id/nextSegmentId", "POST /tinyid/id/nextSegmentIdSimple",
	} {
		if !slices.Contains(routes, want) {
			t.Errorf("%s is not registered as a route of IDs", want)
		}
	}
	for _, pattern := range routes {
		method, path, _ := strings.Cut(pattern, " ")
		target := strings.NewReplacer("{tag}", "order", "{key}", "order").Replace(path)
		if strings.HasPrefix(path, "/tinyid/") {
			target += "?bizType=order"
		}
		if strings.HasSuffix(path, "/batch") {
			target += "?count=3"
		}
		t.Run(pattern, func(t *testing.T) {
			for _, secret := range []string{secretOf[scopes[pattern]][0], ""} {
				r := httptest.NewRequest(method, target, nil)
				if secret != "" {
					r.Header.Set("Authorization", "Bearer "+secret)
				}
				w := httptest.NewRecorder()
				srv.Handler().ServeHTTP(w, r)
				if secret != "" && w.Code != http.StatusOK {
					t.Fatalf("with its token: %d %s", w.Code, w.Body)
				}
				if got := w.Header().Values("Cache-Control"); len(got) != 1 || got[0] != "no-store" {
					t.Errorf("answer %d (token %t): Cache-Control %q, want no-store", w.Code, secret != "", got)
				}
			}
		})
	}
	documented := map[string]bool{}
	var doc struct {
		Paths map[string]map[string]struct {
			Responses map[string]struct {
				Headers map[string]json.RawMessage `json:"headers"`
			} `json:"responses"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(OpenAPI, &doc); err != nil {
		t.Fatal(err)
	}
	for path, ops := range doc.Paths {
		for method, op := range ops {
			if _, ok := op.Responses["200"].Headers["Cache-Control"]; ok {
				documented[strings.ToUpper(method)+" "+path] = true
			}
		}
	}
	registered := map[string]bool{}
	for _, p := range routes {
		registered[p] = true
	}
	if !maps.Equal(documented, registered) {
		t.Errorf("Cache-Control documented on %v,\nsent on %v", slices.Sorted(maps.Keys(documented)), slices.Sorted(maps.Keys(registered)))
	}
}
