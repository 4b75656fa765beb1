package server_test

import (
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/firn-id/firn/server"
)

// TestReviewOpaqueMetricsCountIDs: opaque mode exists so that a
// competitor cannot count the orders of a day (issue 16), yet the open
// /metrics route — no token needed, even with auth on — counts every
// snowflake ID issued (firn_ids_issued_total), and firn_node and the
// clock gauges beside it. Scraping it twice a day is the daily count the
// permutation hides.
func TestOpaqueMetricsNeedAScope(t *testing.T) {
	cfg, _ := opaqueConfig(t, server.Token{Name: "app", Secret: "app-secret-01234", Scopes: []string{"snowflake"}},
		server.Token{Name: "prometheus", Secret: "metrics-secret-0", Scopes: []string{"metrics"}})
	h := handlerOf(t, cfg)
	if w := getAs(h, "/v1/snowflake/batch?count=1234", "app-secret-01234"); w.Code != http.StatusOK {
		t.Fatalf("batch: %d %s", w.Code, w.Body)
	}
	w := getAs(h, "/metrics", "")
	if m := regexp.MustCompile(`(?m)^firn_ids_issued_total\{[^}]*\} 1234$`).FindString(w.Body.String()); w.Code == http.StatusOK && m != "" {
		t.Fatalf("anonymous /metrics of an opaque server counts the IDs issued: %s", m)
	}
	if w.Code != http.StatusUnauthorized {
		t.Fatalf("anonymous /metrics in opaque mode: %d, want 401", w.Code)
	}
	w = getAs(h, "/metrics", "metrics-secret-0")
	if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), "firn_ids_issued_total") {
		t.Fatalf("/metrics with scope metrics: %d", w.Code)
	}
}

// TestOpaqueRefusesWideForms: a UUIDv7 or ULID carries its time and
// sequence in plain, which opaque mode hides.
func TestOpaqueRefusesWideForms(t *testing.T) {
	cfg, _ := opaqueConfig(t)
	h := handlerOf(t, cfg)
	for _, route := range []string{"/v1/uuid/next", "/v1/ulid/batch?count=3"} {
		if w := getAs(h, route, ""); w.Code != http.StatusBadRequest || !strings.Contains(w.Body.String(), "opaque") {
			t.Errorf("%s in opaque mode: %d %s, want 400 naming opaque mode", route, w.Code, w.Body)
		}
	}
}
