package server_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/firn-id/firn/server"
)

// TestOpenAPIMatchesRoutes: every path of the document answers (not 404
// for a missing route), and the document is what the server serves.
func TestOpenAPIMatchesRoutes(t *testing.T) {
	var doc struct {
		Paths map[string]map[string]any
	}
	if err := json.Unmarshal(server.OpenAPI, &doc); err != nil {
		t.Fatalf("openapi.json: %v", err)
	}
	h := newHandler(t, nil)
	for path, ops := range doc.Paths {
		target := strings.NewReplacer("{id}", "1", "{tag}", "order", "{key}", "order").Replace(path)
		for method := range ops {
			w := get(h, strings.ToUpper(method), target)
			if strings.Contains(w.Body.String(), `"code":"not_found"`) || w.Code == 405 {
				t.Errorf("%s %s is documented but not routed: %d %s", method, path, w.Code, w.Body.String())
			}
		}
	}
	if len(doc.Paths) < 15 {
		t.Fatalf("only %d paths documented", len(doc.Paths))
	}
	w := get(h, "GET", "/v1/openapi.json")
	if w.Code != 200 || w.Body.String() != string(server.OpenAPI) {
		t.Fatal("/v1/openapi.json does not serve the document")
	}
}
