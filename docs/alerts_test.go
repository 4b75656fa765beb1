package docs_test

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/firn-id/firn/internal/faultproxy"
	"github.com/firn-id/firn/internal/testenv"
	"github.com/firn-id/firn/internal/testserver"
)

// TestAlertRules: the shipped alerts pass Prometheus's own checker, and
// each fires, and does not, as docs/alerts_test.yml says.
func TestAlertRules(t *testing.T) {
	promtool := testenv.Tool(t, "promtool")
	for _, args := range [][]string{{"check", "rules", "alerts.yml"}, {"test", "rules", "alerts_test.yml"}} {
		cmd := exec.Command(promtool, args...)

		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}

// TestAlertsFireOnAStoreOutage: a real Prometheus scrapes a real firn
// serve with the shipped alerts loaded; the node store is cut, and
// FirnHWMHeadroomLow and FirnLeaseLost fire within their for (30 s, 0 s)
// and the lease's TTL; the store comes back, and both resolve.
func TestAlertsFireOnAStoreOutage(t *testing.T) {
	prom := testenv.Tool(t, "prometheus")
	dsn := testenv.Endpoint(t, "FIRN_TEST_POSTGRES")
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	proxy := faultproxy.New(t, u.Host)
	u.Host = proxy.Addr()
	suffix := fmt.Sprintf("%d_%d", os.Getpid(), time.Now().UnixNano())
	table, seg := "firn_nodes_alerts_"+suffix, "leaf_alloc_alerts_"+suffix
	t.Cleanup(func() { dropTables(t, dsn, table, table+"_namespaces", seg) })
	p := testserver.Firn(t, testserver.Addr(t), "off", "--store", "postgres", "--dsn", u.String(), "--table", table, "--segment-table", seg, "--dial-timeout", "1s")

	rules, err := filepath.Abs("alerts.yml")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cfg := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfg, fmt.Appendf(nil, `global: {scrape_interval: 1s, evaluation_interval: 1s}
rule_files: [%q]
scrape_configs:
  - job_name: firn
    static_configs: [{targets: [%q]}]
`, rules, p.HTTP), 0o600); err != nil {
		t.Fatal(err)
	}
	web := testserver.Addr(t)
	cmd := exec.Command(prom, "--config.file="+cfg, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+web, "--log.level=warn")
	var log strings.Builder
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("prometheus's log:\n%s", log.String())
		}
	}()

	// firing returns the alerts Prometheus says fire, by name.
	firing := func() map[string]bool {
		resp, err := http.Get("http://" + web + "/api/v1/alerts")
		if err != nil {
			return nil
		}
		defer resp.Body.Close()
		var body struct {
			Data struct {
				Alerts []struct {
					Labels map[string]string `json:"labels"`
					State  string            `json:"state"`
				} `json:"alerts"`
			} `json:"data"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
			return nil
		}
		out := map[string]bool{}
		for _, a := range body.Data.Alerts {
			if a.State == "firing" {
				out[a.Labels["alertname"]] = true
			}
		}
		return out
	}
	// until polls cond until it holds, or fails the test after d.
	until := func(d time.Duration, what string, cond func(map[string]bool) bool) time.Duration {
		t.Helper()
		start := time.Now()
		for {
			f := firing()
			if f != nil && cond(f) {
				return time.Since(start)
			}
			if time.Since(start) > d {
				t.Fatalf("%s: not within %s; firing: %v\nfirn's log:\n%s", what, d, f, p.Log())
			}
			time.Sleep(250 * time.Millisecond)
		}
	}
	held := func() bool {
		resp, err := http.Get("http://" + web + "/api/v1/query?query=firn_lease_held")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		var body struct {
			Data struct {
				Result []struct {
					Value []any `json:"value"`
				} `json:"result"`
			} `json:"data"`
		}
		return json.NewDecoder(resp.Body).Decode(&body) == nil && len(body.Data.Result) == 1 &&
			len(body.Data.Result[0].Value) == 2 && body.Data.Result[0].Value[1] == "1"
	}
	for deadline := time.Now().Add(30 * time.Second); !held(); time.Sleep(250 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("Prometheus never scraped firn_lease_held 1 from firn serve")
		}
	}
	if f := firing(); f["FirnLeaseLost"] || f["FirnHWMHeadroomLow"] {
		t.Fatalf("alerts fire while the store answers: %v", f)
	}

	proxy.Cut()
	// Headroom falls under 1 s two seconds after the cut (the 3 s
	// window), and fires 30 s later; the lease is lost after its 10 s
	// TTL. Margins for a loaded machine.
	took := until(60*time.Second, "FirnHWMHeadroomLow and FirnLeaseLost firing after the store was cut", func(f map[string]bool) bool {
		return f["FirnHWMHeadroomLow"] && f["FirnLeaseLost"]
	})
	t.Logf("both alerts firing %s after the cut", took.Round(time.Second))
	proxy.Restore()
	took = until(60*time.Second, "both alerts resolved after the store came back", func(f map[string]bool) bool {
		return !f["FirnHWMHeadroomLow"] && !f["FirnLeaseLost"]
	})
	t.Logf("both resolved %s after the store came back", took.Round(time.Second))
	if err := p.Stop(); err != nil {
		t.Fatalf("firn serve after SIGTERM: %v", err)
	}
}

// dropTables drops the test's tables.
func dropTables(t *testing.T, dsn string, tables ...string) {
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Error(err)
		return
	}
	defer db.Close()
	for _, tb := range tables {
		if _, err := db.Exec("DROP TABLE IF EXISTS " + tb); err != nil {
			t.Error(err)
		}
	}
}

// TestAlertTestsCatchMutations: alerts_test.yml pins every threshold and
// every for of alerts.yml. Each mutant of alerts.yml — one number of one
// expression times 0.5 or 1.5, one for halved or doubled (a for of 0 made
// 1m) — must fail promtool test rules; a mutant that passes is a rule the
// tests would not notice changing.
func TestAlertTestsCatchMutations(t *testing.T) {
	promtool := testenv.Tool(t, "promtool")
	rules, err := os.ReadFile("alerts.yml")
	if err != nil {
		t.Fatal(err)
	}
	tests, err := os.ReadFile("alerts_test.yml")
	if err != nil {
		t.Fatal(err)
	}
	mutants := mutate(string(rules))
	if len(mutants) < 30 {
		t.Fatalf("%d mutants of alerts.yml: the mutation no longer finds its numbers", len(mutants))
	}
	// promtool runs one mutant at a time per core.
	sem := make(chan struct{}, max(1, runtime.NumCPU()))
	var wg sync.WaitGroup
	survivors := make([]string, len(mutants))
	failed := make([]string, len(mutants))
	for i, m := range mutants {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			dir, err := os.MkdirTemp(t.TempDir(), "mutant")
			if err != nil {
				failed[i] = err.Error()
				return
			}
			if err := errors.Join(os.WriteFile(filepath.Join(dir, "alerts_test.yml"), tests, 0o600),
				os.WriteFile(filepath.Join(dir, "alerts.yml"), []byte(m.text), 0o600)); err != nil {
				failed[i] = err.Error()
				return
			}
			cmd := exec.Command(promtool, "test", "rules", "alerts_test.yml")
			cmd.Dir = dir
			out, err := cmd.CombinedOutput()
			switch {
			case err == nil:
				survivors[i] = m.what
			case !strings.Contains(string(out), "FAILED"):
				failed[i] = fmt.Sprintf("promtool on %s: %v\n%s", m.what, err, out)
			}
		})
	}
	wg.Wait()
	for _, f := range failed {
		if f != "" {
			t.Error(f)
		}
	}
	for _, s := range survivors {
		if s != "" {
			t.Errorf("alerts_test.yml passes with %s", s)
		}
	}
	t.Logf("%d mutants of alerts.yml, each failing alerts_test.yml", len(mutants))
}

type mutant struct{ what, text string }

// mutate returns alerts.yml's mutants: every number of every expression
// (not inside quotes, not a range's duration) times 0.5 and 1.5, every
// for halved and doubled.
func mutate(rules string) []mutant {
	lines := strings.Split(rules, "\n")
	number := regexp.MustCompile(`\d+(?:\.\d+)?`)
	forLine := regexp.MustCompile(`^(\s*for: )(\d+)([smh])$`)
	var out []mutant
	with := func(i int, line, what string) {
		l := slices.Clone(lines)
		l[i] = line
		out = append(out, mutant{what: what, text: strings.Join(l, "\n")})
	}
	inExpr, alert := false, ""
	for i, line := range lines {
		trimmed := strings.TrimSpace(line)
		if a, ok := strings.CutPrefix(trimmed, "- alert: "); ok {
			alert = a
		}
		if m := forLine.FindStringSubmatch(line); m != nil {
			n, _ := strconv.Atoi(m[2])
			for _, v := range []int{n / 2, n * 2} {
				unit := m[3]
				if n == 0 {
					v, unit = 1, "m"
				}
				if v != n {
					with(i, m[1]+strconv.Itoa(v)+unit, fmt.Sprintf("%s's for %s%s made %d%s", alert, m[2], m[3], v, unit))
				}
			}
			continue
		}
		switch {
		case strings.HasPrefix(trimmed, "expr:"):
			inExpr = true
		case inExpr && (strings.HasPrefix(trimmed, "for:") || strings.HasPrefix(trimmed, "labels:") || strings.HasPrefix(trimmed, "- alert:")):
			inExpr = false
		}
		if !inExpr {
			continue
		}
		masked := maskQuotedAndRanges(line)
		for _, loc := range number.FindAllStringIndex(masked, -1) {
			s, e := loc[0], loc[1]
			if s > 0 && (masked[s-1] == '_' || isLetter(masked[s-1])) || e < len(masked) && isLetter(masked[e]) {
				continue // part of a name, or a duration
			}
			v, _ := strconv.ParseFloat(line[s:e], 64)
			if v == 0 {
				continue
			}
			for _, f := range []float64{0.5, 1.5} {
				nv := strconv.FormatFloat(v*f, 'g', -1, 64)
				with(i, line[:s]+nv+line[e:], fmt.Sprintf("%s's %s made %s", alert, line[s:e], nv))
			}
		}
	}
	return out
}

// maskQuotedAndRanges replaces what is inside quotes and brackets with
// spaces, so that a label's value and a range's duration are not mutated.
func maskQuotedAndRanges(line string) string {
	b := []byte(line)
	var quote byte
	depth := 0
	for i, c := range b {
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			} else {
				b[i] = ' '
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '[':
			depth++
		case c == ']':
			depth--
		case depth > 0:
			b[i] = ' '
		}
	}
	return string(b)
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
