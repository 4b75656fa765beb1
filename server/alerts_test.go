package server_test

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// TestAlertsUseExportedMetrics: every metric docs/alerts.yml's rules
// read is one /metrics exports for a server of a site with a lease and a
// tag (a histogram's by its _bucket, _count or _sum series): an alert on
// a renamed or removed metric would never fire.
func TestAlertsUseExportedMetrics(t *testing.T) {
	raw, err := os.ReadFile("../docs/alerts.yml")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Groups []struct {
			Rules []struct {
				Alert string `yaml:"alert"`
				Expr  string `yaml:"expr"`
			} `yaml:"rules"`
		} `yaml:"groups"`
	}
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	cfg := newConfig(t, nil)
	cfg.Lease = fakeLease{7}                                  // for the lease's metrics
	cfg.Site, cfg.Revoked = "eu", func() error { return nil } // for a site's
	h := handlerOf(t, cfg)
	get(h, "GET", "/v1/snowflake/batch?count=7")
	get(h, "GET", "/v1/segments/order/next")
	get(h, "GET", "/v1/snowflake/batch?count=0") // a failure, for firn_request_failures_total
	kinds := map[string]string{}
	for line := range strings.Lines(get(h, "GET", "/metrics").Body.String()) {
		if f := strings.Fields(line); len(f) == 4 && f[0] == "#" && f[1] == "TYPE" {
			kinds[f[2]] = f[3]
		}
	}
	name := regexp.MustCompile(`\bfirn_[a-z0-9_]+`)
	alerts := 0
	for _, gr := range doc.Groups {
		for _, r := range gr.Rules {
			alerts++
			used := name.FindAllString(r.Expr, -1)
			if len(used) == 0 {
				t.Errorf("%s reads no firn metric: %q", r.Alert, r.Expr)
			}
			for _, m := range used {
				if _, ok := kinds[m]; ok {
					continue
				}
				base := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(m, "_bucket"), "_count"), "_sum")
				if k := kinds[base]; base != m && (k == "histogram" || k == "summary") {
					continue
				}
				t.Errorf("%s reads %s, which /metrics does not export", r.Alert, m)
			}
		}
	}
	if alerts < 10 {
		t.Fatalf("read %d alerts from alerts.yml, want its 10 or more", alerts)
	}
}
