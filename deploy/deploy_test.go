package deploy_test

import (
	"bytes"
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// firn is the binary built from the repository by TestMain.
var firn string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "firn-deploy-")
	if err != nil {
		panic(err)
	}
	firn = filepath.Join(dir, "firn")
	build := exec.Command("go", "build", "-C", "..", "-o", firn, "./cmd/firn")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		os.Stderr.WriteString("build firn: " + err.Error() + "\n")
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// configCheck runs `firn config check --config path` with only env (and
// PATH, HOME) in its environment, and fails t unless it passes.
func configCheck(t *testing.T, path string, env ...string) {
	t.Helper()
	cmd := exec.Command(firn, "config", "check", "--config", path)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}, env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil || !strings.HasPrefix(out.String(), "config ok:") {
		t.Fatalf("firn config check --config %s: %v\n%s", path, err, out.String())
	}
}

// TestConfigs checks every configuration file of config/ and systemd/:
// it holds no secret and binds loopback or a placeholder (secretFree);
// firn config check refuses a placeholder, naming it, and passes the
// file once the placeholder is replaced and the token files it names
// exist.
func TestConfigs(t *testing.T) {
	files, _ := filepath.Glob("config/*.yaml")
	files = append(files, "systemd/firn.yaml")
	if len(files) < 5 {
		t.Fatalf("configurations %v: want etcd, postgres, leaf, tinyid and the systemd one", files)
	}
	for _, f := range files {
		t.Run(f, func(t *testing.T) {
			doc, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			cfg := secretFree(t, doc)
			for _, l := range []string{cfg.HTTP.Listen, cfg.GRPC.Listen} {
				if placeholder.MatchString(l) {
					configRefuses(t, withTokenFiles(t, cfg, string(doc)), "a placeholder: replace it with the address this machine serves on")
				}
			}
			configCheck(t, withTokenFiles(t, cfg, placeholder.ReplaceAllString(string(doc), "192.0.2.10:")))
		})
	}
}

// placeholder is a listen address's host that the reader must name.
var placeholder = regexp.MustCompile(`<[a-z-]+>:`)

// firnConfig is what secretFree reads of a firn configuration.
type firnConfig struct {
	HTTP struct {
		Listen string `json:"listen"`
	} `json:"http"`
	GRPC struct {
		Listen string `json:"listen"`
	} `json:"grpc"`
	Registry struct {
		DSN       string   `json:"dsn"`
		Endpoints []string `json:"endpoints"`
	} `json:"registry"`
	Segments struct {
		DSN    string `json:"dsn"`
		Stores []struct {
			DSN string `json:"dsn"`
		} `json:"stores"`
	} `json:"segments"`
	Opaque struct {
		Key string `json:"key"`
	} `json:"opaque"`
	Auth struct {
		Tokens []struct {
			Name       string `json:"name"`
			Secret     string `json:"secret"`
			SecretFile string `json:"secret_file"`
		} `json:"tokens"`
	} `json:"auth"`
}

// secretFree fails t unless the configuration doc holds no secret — no
// token secret (each is a secret_file beside the configuration), no
// opaque key, no password in a DSN or an etcd endpoint — and binds
// loopback, or a placeholder the reader must replace, never the
// wildcard or a made-up address.
func secretFree(t *testing.T, doc []byte) firnConfig {
	t.Helper()
	var c firnConfig
	if err := yaml.Unmarshal(doc, &c); err != nil {
		t.Fatal(err)
	}
	for _, tok := range c.Auth.Tokens {
		if tok.Secret != "" || tok.SecretFile == "" || filepath.IsAbs(tok.SecretFile) {
			t.Errorf("token %s: want its secret in a file beside the configuration (a relative secret_file), none written in the file", tok.Name)
		}
	}
	if c.Opaque.Key != "" {
		t.Error("opaque.key is written in the file: name a key_file instead")
	}
	dsns := map[string]string{"registry.dsn": c.Registry.DSN, "segments.dsn": c.Segments.DSN}
	for i, e := range c.Registry.Endpoints {
		dsns[fmt.Sprintf("registry.endpoints[%d]", i)] = e
	}
	for i, st := range c.Segments.Stores {
		dsns[fmt.Sprintf("segments.stores[%d].dsn", i)] = st.DSN
	}
	for field, d := range dsns {
		if hasPassword(d) {
			t.Errorf("%s carries a password: leave it out of the file (FIRN_REGISTRY_DSN, FIRN_SEGMENTS_DSN)", field)
		}
	}
	for _, l := range []string{c.HTTP.Listen, c.GRPC.Listen} {
		host, _, err := net.SplitHostPort(l)
		switch {
		case l == "" || l == "off":
		case err != nil:
			t.Errorf("listen %q: not host:port", l)
		case !slices.Contains([]string{"127.0.0.1", "::1", "localhost"}, host) && !placeholder.MatchString(l):
			t.Errorf("listen %q: want loopback, or a placeholder such as <this-host>:8080 that firn refuses until it is replaced", l)
		}
	}
	return c
}

// hasPassword reports whether a DSN or an endpoint, in URL form or in
// MySQL's user:password@tcp(…) form, carries a password.
func hasPassword(dsn string) bool {
	if strings.Contains(dsn, "://") {
		u, err := url.Parse(dsn)
		if err != nil {
			return true // unreadable: assume the worst
		}
		_, set := u.User.Password()
		return set
	}
	user, _, ok := strings.Cut(dsn, "@")
	return ok && strings.Contains(user, ":")
}

// withTokenFiles writes doc as firn.yaml in a new directory, with a
// random secret in each token file c names, and returns its path.
func withTokenFiles(t *testing.T, c firnConfig, doc string) string {
	t.Helper()
	dir := t.TempDir()
	for _, tok := range c.Auth.Tokens {
		if tok.SecretFile == "" {
			continue
		}
		path := filepath.Join(dir, tok.SecretFile)
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(rand.Text()+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(dir, "firn.yaml")
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// configRefuses runs firn config check on path and fails t unless it is
// refused with a message containing want.
func configRefuses(t *testing.T, path, want string) {
	t.Helper()
	cmd := exec.Command(firn, "config", "check", "--config", path)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), want) {
		t.Fatalf("firn config check --config %s: %v\n%s\nwant it refused: %s", path, err, out, want)
	}
}

// TestConfigCheckRefuses: the check is one that can fail. A file with a
// setting firn does not know is refused.
func TestConfigCheckRefuses(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte("registry:\n  stor: etcd\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(firn, "config", "check", "--config", bad)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
	if out, err := cmd.CombinedOutput(); err == nil {
		t.Fatalf("config check passed a file with an unknown key:\n%s", out)
	}
}

// manifests is every object of kubernetes/, decoded strictly into its
// k8s.io/api type: an unknown field, a duplicate key or a value of the
// wrong type fails.
type manifests struct {
	deployments  []appsv1.Deployment
	statefulSets []appsv1.StatefulSet
	monitors     []serviceMonitor
	pdbs         []policyv1.PodDisruptionBudget
	configMaps   []corev1.ConfigMap
	secrets      []corev1.Secret
	services     []corev1.Service
}

func decodeManifests(t *testing.T) manifests {
	t.Helper()
	files, _ := filepath.Glob("kubernetes/*.yaml")
	var m manifests
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, doc := range strings.Split(string(data), "\n---\n") {
			if err := m.add([]byte(doc)); err != nil {
				t.Fatalf("%s, document %d: %v", f, i+1, err)
			}
		}
	}
	return m
}

func (m *manifests) add(doc []byte) error {
	var head struct{ APIVersion, Kind string }
	if err := yaml.Unmarshal(doc, &head); err != nil {
		return err
	}
	switch head.APIVersion + " " + head.Kind {
	case "apps/v1 StatefulSet":
		m.statefulSets = append(m.statefulSets, appsv1.StatefulSet{})
		return yaml.UnmarshalStrict(doc, &m.statefulSets[len(m.statefulSets)-1])
	case "monitoring.coreos.com/v1 ServiceMonitor":
		m.monitors = append(m.monitors, serviceMonitor{})
		return yaml.UnmarshalStrict(doc, &m.monitors[len(m.monitors)-1])
	case "apps/v1 Deployment":
		var d appsv1.Deployment
		m.deployments = append(m.deployments, d)
		return yaml.UnmarshalStrict(doc, &m.deployments[len(m.deployments)-1])
	case "policy/v1 PodDisruptionBudget":
		m.pdbs = append(m.pdbs, policyv1.PodDisruptionBudget{})
		return yaml.UnmarshalStrict(doc, &m.pdbs[len(m.pdbs)-1])
	case "v1 ConfigMap":
		m.configMaps = append(m.configMaps, corev1.ConfigMap{})
		return yaml.UnmarshalStrict(doc, &m.configMaps[len(m.configMaps)-1])
	case "v1 Secret":
		m.secrets = append(m.secrets, corev1.Secret{})
		return yaml.UnmarshalStrict(doc, &m.secrets[len(m.secrets)-1])
	case "v1 Service":
		m.services = append(m.services, corev1.Service{})
		return yaml.UnmarshalStrict(doc, &m.services[len(m.services)-1])
	}
	return errors.New("unexpected object " + head.APIVersion + " " + head.Kind)
}

// TestKubernetes decodes the manifests and checks that they fit together:
// probes on /healthz and /readyz; listeners on the pod's own address,
// never the wildcard; the configuration file from the ConfigMap, free of
// secrets (secretFree), beside the tokens' files from a Secret that no
// manifest writes out, and passing firn config check; a disruption
// budget and a Service over the Deployment's pods.
func TestKubernetes(t *testing.T) {
	checkManifests(t, decodeManifests(t))
}

// serviceMonitor is the Prometheus Operator's ServiceMonitor, the fields
// the chart writes: any other fails the strict decoding.
type serviceMonitor struct {
	APIVersion string            `json:"apiVersion"`
	Kind       string            `json:"kind"`
	Metadata   metav1.ObjectMeta `json:"metadata"`
	Spec       struct {
		Selector  metav1.LabelSelector `json:"selector"`
		Endpoints []struct {
			Port     string `json:"port"`
			Path     string `json:"path"`
			Interval string `json:"interval"`
		} `json:"endpoints"`
	} `json:"spec"`
}

// checkManifests checks that a set of manifests fits together, as
// TestKubernetes says: one workload (a Deployment, or a StatefulSet of
// one pod), its ConfigMap, a budget and a Service; a ServiceMonitor, if
// any, on the Service's pods' http port.
func checkManifests(t *testing.T, m manifests) {
	t.Helper()
	if len(m.deployments)+len(m.statefulSets) != 1 || len(m.pdbs) != 1 || len(m.configMaps) != 1 || len(m.services) != 1 {
		t.Fatalf("%d Deployments, %d StatefulSets, %d PodDisruptionBudgets, %d ConfigMaps, %d Services; want one workload and one of each other",
			len(m.deployments), len(m.statefulSets), len(m.pdbs), len(m.configMaps), len(m.services))
	}
	for _, s := range m.secrets {
		if len(s.Data)+len(s.StringData) > 0 {
			t.Errorf("the Secret %s writes its values in the manifest: create it from files instead", s.Name)
		}
	}
	cm := m.configMaps[0]
	var pod corev1.PodTemplateSpec
	var selector *metav1.LabelSelector
	if len(m.deployments) == 1 {
		pod, selector = m.deployments[0].Spec.Template, m.deployments[0].Spec.Selector
	} else {
		ss := m.statefulSets[0]
		pod, selector = ss.Spec.Template, ss.Spec.Selector
		if ss.Spec.Replicas == nil || *ss.Spec.Replicas != 1 {
			t.Errorf("a StatefulSet of %v pods: the local store's volume is one pod's", ss.Spec.Replicas)
		}
	}
	for _, sm := range m.monitors {
		if !sameLabels(sm.Spec.Selector.MatchLabels, selector.MatchLabels) || len(sm.Spec.Endpoints) != 1 ||
			sm.Spec.Endpoints[0].Port != "http" || sm.Spec.Endpoints[0].Path != "/metrics" {
			t.Errorf("ServiceMonitor %+v: want /metrics on the http port of the workload's pods", sm.Spec)
		}
	}
	if len(pod.Spec.Containers) != 1 {
		t.Fatalf("%d containers, want 1", len(pod.Spec.Containers))
	}
	c := pod.Spec.Containers[0]
	// The image make image builds, as pushed, pinned: never :latest.
	ref, _, digest := strings.Cut(c.Image, "@sha256:")
	if repo, tag, _ := strings.Cut(ref[strings.LastIndex(ref, "/")+1:], ":"); repo != "firn" || (!digest && (tag == "" || tag == "latest")) {
		t.Errorf("image %q: want make image's firn, pinned to a version or a digest", c.Image)
	}
	if pod.Spec.SecurityContext == nil || pod.Spec.SecurityContext.RunAsUser == nil || *pod.Spec.SecurityContext.RunAsUser != 65532 {
		t.Errorf("the pod does not run as 65532, the image's user")
	}
	probes := []struct {
		name  string
		probe *corev1.Probe
		path  string
	}{{"liveness", c.LivenessProbe, "/healthz"}, {"readiness", c.ReadinessProbe, "/readyz"}}
	for _, p := range probes {
		if p.probe == nil || p.probe.HTTPGet == nil || p.probe.HTTPGet.Path != p.path || p.probe.HTTPGet.Port.StrVal != "http" {
			t.Errorf("%s probe %+v: want GET %s on the http port", p.name, p.probe, p.path)
		}
	}
	// The listeners are the pod's own address, from the downward API;
	// every other variable is a Secret's.
	env := map[string]corev1.EnvVar{}
	for _, e := range c.Env {
		env[e.Name] = e
	}
	if f := env["POD_IP"].ValueFrom; f == nil || f.FieldRef == nil || f.FieldRef.FieldPath != "status.podIP" {
		t.Errorf("POD_IP %+v: want it from status.podIP", env["POD_IP"])
	}
	var checkEnv []string
	for _, l := range []struct {
		name, port string
		number     int32
	}{{"FIRN_HTTP_LISTEN", "http", 8080}, {"FIRN_GRPC_LISTEN", "grpc", 9090}} {
		want := fmt.Sprintf("$(POD_IP):%d", l.number)
		if env[l.name].Value != want {
			t.Errorf("%s=%q: want %s, the pod's own address", l.name, env[l.name].Value, want)
		}
		if !slices.ContainsFunc(c.Ports, func(p corev1.ContainerPort) bool { return p.Name == l.port && p.ContainerPort == l.number }) {
			t.Errorf("ports %+v: want %s on %d, where firn listens", c.Ports, l.port, l.number)
		}
		checkEnv = append(checkEnv, l.name+"="+strings.ReplaceAll(want, "$(POD_IP)", "10.1.2.3"))
	}
	for name, e := range env {
		if name != "POD_IP" && name != "FIRN_HTTP_LISTEN" && name != "FIRN_GRPC_LISTEN" && (e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil) {
			t.Errorf("env %s: want it from a Secret", name)
		}
	}
	// A DSN from a Secret: config check reads one of the store's form.
	for name, dsn := range map[string]string{"FIRN_REGISTRY_DSN": "postgres://firn:secret@db.example:5432/firn?sslmode=verify-full",
		"FIRN_SEGMENTS_DSN": "postgres://firn:secret@db.example:5432/firn?sslmode=verify-full"} {
		if _, ok := env[name]; ok {
			checkEnv = append(checkEnv, name+"="+dsn)
		}
	}
	cfgPath := configArg(t, c.Args)
	files := mountedFiles(pod.Spec, c)
	src, ok := files[cfgPath]
	if !ok || src.kind != "configMap" || src.name != cm.Name {
		t.Fatalf("%s is %+v: want a file of the ConfigMap %s mounted in the container", cfgPath, src, cm.Name)
	}
	doc, ok := cm.Data[src.key]
	if !ok {
		t.Fatalf("the ConfigMap has no key %q for %s", src.key, cfgPath)
	}
	cfg := secretFree(t, []byte(doc))
	if len(cfg.Auth.Tokens) == 0 {
		t.Error("the configuration has no token: off loopback, gRPC needs tokens")
	}
	for _, tok := range cfg.Auth.Tokens {
		p := filepath.Join(filepath.Dir(cfgPath), tok.SecretFile)
		if f := files[p]; f.kind != "secret" {
			t.Errorf("token %s reads %s, which is %+v: want a file of a Secret mounted there", tok.Name, p, f)
		}
	}
	configCheck(t, withTokenFiles(t, cfg, doc), checkEnv...)
	want := selector.MatchLabels
	if !containsLabels(pod.Labels, want) || !sameLabels(m.pdbs[0].Spec.Selector.MatchLabels, want) || !sameLabels(m.services[0].Spec.Selector, want) {
		t.Errorf("selectors: pods %v, budget %v, service %v; want all %v", pod.Labels, m.pdbs[0].Spec.Selector.MatchLabels, m.services[0].Spec.Selector, want)
	}
	if b := m.pdbs[0].Spec; b.MaxUnavailable == nil && b.MinAvailable == nil {
		t.Error("the PodDisruptionBudget bounds nothing")
	}
	if g := pod.Spec.TerminationGracePeriodSeconds; g == nil || *g < 15 {
		t.Errorf("terminationGracePeriodSeconds %v: want at least 15 s, for firn's 10 s of draining and the release of its node", g)
	}
}

// configArg returns the value of --config in args.
func configArg(t *testing.T, args []string) string {
	t.Helper()
	i := slices.Index(args, "--config")
	if len(args) < 2 || args[0] != "serve" || i < 0 || i+1 >= len(args) {
		t.Fatalf("args %v: want serve --config FILE", args)
	}
	return args[i+1]
}

// mountedFile is where a file the container sees comes from: a key of a
// ConfigMap or a Secret.
type mountedFile struct {
	kind, name, key string // kind: configMap or secret
}

// mountedFiles returns the files of ConfigMaps and Secrets that the
// container sees, by path, from volumes of either kind and projected
// volumes, each listing its items.
func mountedFiles(pod corev1.PodSpec, c corev1.Container) map[string]mountedFile {
	files := map[string]mountedFile{}
	add := func(dir, kind, name string, items []corev1.KeyToPath) {
		for _, it := range items {
			files[filepath.Join(dir, it.Path)] = mountedFile{kind, name, it.Key}
		}
	}
	for _, vm := range c.VolumeMounts {
		for _, v := range pod.Volumes {
			switch {
			case v.Name != vm.Name:
			case v.ConfigMap != nil:
				add(vm.MountPath, "configMap", v.ConfigMap.Name, v.ConfigMap.Items)
			case v.Secret != nil:
				add(vm.MountPath, "secret", v.Secret.SecretName, v.Secret.Items)
			case v.Projected != nil:
				for _, s := range v.Projected.Sources {
					if s.ConfigMap != nil {
						add(vm.MountPath, "configMap", s.ConfigMap.Name, s.ConfigMap.Items)
					}
					if s.Secret != nil {
						add(vm.MountPath, "secret", s.Secret.Name, s.Secret.Items)
					}
				}
			}
		}
	}
	return files
}

// containsLabels reports whether a holds every label of b, which is not
// empty.
func containsLabels(a, b map[string]string) bool {
	if len(b) == 0 {
		return false
	}
	for k, v := range b {
		if a[k] != v {
			return false
		}
	}
	return true
}

func sameLabels(a, b map[string]string) bool {
	if len(a) != len(b) || len(a) == 0 {
		return false
	}
	for k, v := range b {
		if a[k] != v {
			return false
		}
	}
	return true
}

// TestStrictDecodingRefuses: the decoding is one that can fail. A field
// that is not part of the type is refused.
func TestStrictDecodingRefuses(t *testing.T) {
	var m manifests
	doc := "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: x}\nspec: {maxUnavailabel: 1}\n"
	if err := m.add([]byte(doc)); err == nil {
		t.Fatal("a misspelt field decoded without error")
	}
}

// podSpecOf is the pod spec of m's one workload.
func podSpecOf(m manifests) corev1.PodSpec {
	if len(m.deployments) == 1 {
		return m.deployments[0].Spec.Template.Spec
	}
	return m.statefulSets[0].Spec.Template.Spec
}
