package deploy_test

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/lint"
	"helm.sh/helm/v3/pkg/lint/support"
	"sigs.k8s.io/yaml"
)

// chartDir is the chart; its examples/ are the documented values files.
const chartDir = "helm/firn"

// valuesFiles are the chart's documented values files: "" for the
// defaults alone, then every file of examples/.
func valuesFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(chartDir, "examples", "*.yaml"))
	if err != nil || len(files) < 3 {
		t.Fatalf("%d values files in %s/examples (%v), want at least 3", len(files), chartDir, err)
	}
	return append([]string{""}, files...)
}

// valuesOf is the values of file, or none for "".
func valuesOf(t *testing.T, file string) map[string]any {
	t.Helper()
	if file == "" {
		return map[string]any{}
	}
	v, err := chartutil.ReadValuesFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// render renders the chart as helm template does, with the values of
// file ("" for none) and then set, for the release firn in namespace
// default: the values are checked against values.schema.json first.
func render(t *testing.T, file string, set map[string]any) (map[string]string, error) {
	t.Helper()
	ch, err := loader.Load(chartDir)
	if err != nil {
		t.Fatal(err)
	}
	vals := chartutil.CoalesceTables(set, valuesOf(t, file))
	rv, err := chartutil.ToRenderValues(ch, vals, chartutil.ReleaseOptions{Name: "firn", Namespace: "default", IsInstall: true}, chartutil.DefaultCapabilities)
	if err != nil {
		return nil, err
	}
	return engine.Render(ch, rv)
}

// TestHelmLint: helm lint finds nothing wrong with the chart, with its
// defaults and with each documented values file.
func TestHelmLint(t *testing.T) {
	for _, f := range valuesFiles(t) {
		l := lint.All(chartDir, valuesOf(t, f), "default", false)
		for _, m := range l.Messages {
			if m.Severity >= support.WarningSev {
				t.Errorf("helm lint (values %q): %s", f, m)
			}
		}
	}
}

// TestHelmTemplate renders the chart with its defaults and with each
// documented values file, and checks the manifests as TestKubernetes
// checks kubernetes/: strictly decoded, fitting together, no secret
// written out, no wildcard listener, probes, the security context, and
// the configuration passing firn config check with the pod's listeners.
func TestHelmTemplate(t *testing.T) {
	for _, f := range valuesFiles(t) {
		t.Run(filepath.Base(f), func(t *testing.T) {
			out, err := render(t, f, nil)
			if err != nil {
				t.Fatalf("helm template: %v", err)
			}
			var m manifests
			names := slices.Sorted(func(yield func(string) bool) {
				for k := range out {
					if !yield(k) {
						return
					}
				}
			})
			for _, name := range names {
				for i, doc := range strings.Split(out[name], "\n---\n") {
					if strings.TrimSpace(stripComments(doc)) == "" {
						continue
					}
					if err := m.add([]byte(doc)); err != nil {
						t.Fatalf("%s, document %d: %v\n%s", name, i+1, err, doc)
					}
				}
			}
			checkManifests(t, m)
			c := podSpecOf(m).Containers[0]
			if c.SecurityContext == nil || c.SecurityContext.ReadOnlyRootFilesystem == nil || !*c.SecurityContext.ReadOnlyRootFilesystem ||
				c.SecurityContext.AllowPrivilegeEscalation == nil || *c.SecurityContext.AllowPrivilegeEscalation {
				t.Errorf("container securityContext %+v: want a read-only root and no privilege escalation", c.SecurityContext)
			}
		})
	}
}

// stripComments drops the YAML comment lines of doc.
func stripComments(doc string) string {
	var b strings.Builder
	for line := range strings.Lines(doc) {
		if !strings.HasPrefix(strings.TrimSpace(line), "#") {
			b.WriteString(line)
		}
	}
	return b.String()
}

// TestHelmRefuses: the chart fails helm template, with a message saying
// what to do, for a misspelt values key, a secret that would be written
// into the ConfigMap, and more than one pod on a node setting that is one
// machine's.
func TestHelmRefuses(t *testing.T) {
	for _, tc := range []struct {
		name string
		set  string
		want string
	}{
		{"misspelt key", "replicaCont: 2", "replicaCont"},
		{"misspelt nested key", "image: {repositry: x}", "repositry"},
		{"DSN with a password", "config: {registry: {store: postgres, dsn: 'postgres://firn:hunter2@db:5432/firn', endpoints: null}}", "dsnSecret"},
		{"MySQL DSN with a password", "config: {registry: {store: mysql, dsn: 'firn:hunter2@tcp(db:3306)/firn', endpoints: null}}", "dsnSecret"},
		{"password parameter", "config: {registry: {store: postgres, dsn: 'postgres://db/firn?password=hunter2', endpoints: null}}", "dsnSecret"},
		{"segments DSN with a password", "config: {segments: {store: postgres, dsn: 'postgres://firn:hunter2@db/firn'}}", "segmentsDsnSecret"},
		{"token secret in values", "config: {auth: {tokens: [{name: ops, secret: 0123456789abcdef0123456789abcdef, scopes: [admin]}]}}", "tokens.secretName"},
		{"local store, three pods", "config: {registry: {store: local, endpoints: null, namespace: null}}", "local store"},
		{"static node, three pods", "config: {registry: {node: '3'}}", "registry.node 3"},
		{"derived node, three pods", "config: {registry: {node: derived}}", "registry.node derived"},
		{"persistence, two pods", "{replicaCount: 2, persistence: {enabled: true}}", "replicaCount 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var set map[string]any
			if err := yaml.Unmarshal([]byte(tc.set), &set); err != nil {
				t.Fatal(err)
			}
			out, err := render(t, "", set)
			if err == nil {
				t.Fatalf("helm template passed %s:\n%s", tc.set, out["firn/templates/configmap.yaml"])
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("helm template with %s: %v\nwant it to say %q", tc.set, err, tc.want)
			}
			if strings.Contains(err.Error(), "hunter2") {
				t.Errorf("the refusal prints the password: %v", err)
			}
		})
	}
}

// TestHelmReadme: the chart's README lists every value of values.yaml
// with the comment above it ("# -- ..."), in values.yaml's order.
func TestHelmReadme(t *testing.T) {
	f, err := os.Open(filepath.Join(chartDir, "values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows []string
	var path []string // the keys above the current line, by indent
	var doc []string
	key := regexp.MustCompile(`^( *)([A-Za-z][A-Za-z0-9]*):(.*)$`)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(trimmed, "# -- "):
			doc = []string{strings.TrimPrefix(trimmed, "# -- ")}
		case strings.HasPrefix(trimmed, "# ") && doc != nil:
			doc = append(doc, strings.TrimPrefix(trimmed, "# "))
		case key.MatchString(line):
			m := key.FindStringSubmatch(line)
			depth := len(m[1]) / 2
			path = append(path[:min(depth, len(path))], m[2])
			if doc != nil {
				def := strings.TrimSpace(m[3])
				if def == "" {
					def = "(a block: see values.yaml)"
				} else {
					def = "`" + def + "`"
				}
				rows = append(rows, "| `"+strings.Join(path, ".")+"` | "+def+" | "+strings.Join(doc, " ")+" |")
			}
			doc = nil
		default:
			if trimmed == "" {
				doc = nil
			}
		}
	}
	want := "| value | default | what |\n|---|---|---|\n" + strings.Join(rows, "\n") + "\n"
	readme, err := os.ReadFile(filepath.Join(chartDir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(readme), "<!-- values: generated from values.yaml, checked by TestHelmReadme -->\n")
	if ok {
		table, _, ok = strings.Cut(table, "<!-- end of values -->")
	}
	if !ok || table != want {
		t.Fatalf("the chart's README values table is not values.yaml's; want, between its markers:\n%s", want)
	}
}

// TestReadmeWithHelm runs deploy/README.md's "With Helm" as written, in
// this directory: helm lint passes and helm template's manifests pass
// checkManifests.
func TestReadmeWithHelm(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(readme), "\n## With Helm\n")
	if !ok {
		t.Fatal("README.md has no section \"With Helm\"")
	}
	if i := strings.Index(sec, "\n## "); i >= 0 {
		sec = sec[:i]
	}
	m := regexp.MustCompile("(?s)```sh\n(.*?)```").FindStringSubmatch(sec)
	if m == nil {
		t.Fatal("the section has no sh block")
	}
	lines := strings.Split(strings.TrimSpace(m[1]), "\n")
	if len(lines) != 2 {
		t.Fatalf("the section's block has %d commands, want lint and template", len(lines))
	}
	var outs []string
	for _, line := range lines {
		cmd := exec.Command("sh", "-c", line)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("%s: %v\n%s%s", line, err, stdout.String(), stderr.String())
		}
		outs = append(outs, stdout.String())
	}
	if !strings.Contains(outs[0], "1 chart(s) linted, 0 chart(s) failed") {
		t.Errorf("helm lint printed:\n%s", outs[0])
	}
	var ms manifests
	for i, doc := range strings.Split(outs[1], "\n---\n") {
		if strings.TrimSpace(stripComments(doc)) == "" {
			continue
		}
		if err := ms.add([]byte(doc)); err != nil {
			t.Fatalf("helm template, document %d: %v\n%s", i+1, err, doc)
		}
	}
	checkManifests(t, ms)
}
