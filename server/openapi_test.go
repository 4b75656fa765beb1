package server_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
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

// TestRevealBoundsAsDocumented: the OpenAPI document and docs/config.md
// give the reveal route's rate per client address as the code has it.
func TestRevealBoundsAsDocumented(t *testing.T) {
	if want := fmt.Sprintf("at most %d tags per second", server.RevealLookupRate); !strings.Contains(string(server.OpenAPI), want) {
		t.Errorf("openapi.json does not say %q", want)
	}
	b, err := os.ReadFile(filepath.Join("..", "docs", "config.md"))
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("`server.RevealLookupRate` (%d)", server.RevealLookupRate); !strings.Contains(string(b), want) {
		t.Errorf("docs/config.md does not say %q", want)
	}
}
