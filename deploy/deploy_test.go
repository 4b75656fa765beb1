package deploy_test

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
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

// TestConfigs checks every configuration file of config/ and systemd/.
func TestConfigs(t *testing.T) {
	files, _ := filepath.Glob("config/*.yaml")
	files = append(files, "systemd/firn.yaml")
	if len(files) < 5 {
		t.Fatalf("configurations %v: want etcd, postgres, leaf, tinyid and the systemd one", files)
	}
	for _, f := range files {
		t.Run(f, func(t *testing.T) { configCheck(t, f) })
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
	deployments []appsv1.Deployment
	pdbs        []policyv1.PodDisruptionBudget
	secrets     []corev1.Secret
	services    []corev1.Service
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
	case "apps/v1 Deployment":
		var d appsv1.Deployment
		m.deployments = append(m.deployments, d)
		return yaml.UnmarshalStrict(doc, &m.deployments[len(m.deployments)-1])
	case "policy/v1 PodDisruptionBudget":
		m.pdbs = append(m.pdbs, policyv1.PodDisruptionBudget{})
		return yaml.UnmarshalStrict(doc, &m.pdbs[len(m.pdbs)-1])
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
// probes on /healthz and /readyz, the configuration file and the etcd
// endpoints from the Secret (whose configuration passes firn config
// check), a disruption budget and a Service over the Deployment's pods.
func TestKubernetes(t *testing.T) {
	m := decodeManifests(t)
	if len(m.deployments) != 1 || len(m.pdbs) != 1 || len(m.secrets) != 1 || len(m.services) != 1 {
		t.Fatalf("%d Deployments, %d PodDisruptionBudgets, %d Secrets, %d Services; want one each",
			len(m.deployments), len(m.pdbs), len(m.secrets), len(m.services))
	}
	d, secret := m.deployments[0], m.secrets[0]
	pod := d.Spec.Template
	if len(pod.Spec.Containers) != 1 {
		t.Fatalf("%d containers, want 1", len(pod.Spec.Containers))
	}
	c := pod.Spec.Containers[0]
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
	if !slices.ContainsFunc(c.Ports, func(p corev1.ContainerPort) bool { return p.Name == "http" && p.ContainerPort == 8080 }) {
		t.Errorf("ports %+v: want http on 8080, where the configuration listens", c.Ports)
	}
	// Every secret the pod reads is in the Secret.
	env := []string{}
	for _, e := range c.Env {
		ref := e.ValueFrom
		if ref == nil || ref.SecretKeyRef == nil || ref.SecretKeyRef.Name != secret.Name {
			t.Errorf("env %s: want it from the Secret %s", e.Name, secret.Name)
			continue
		}
		v, ok := secret.StringData[ref.SecretKeyRef.Key]
		if !ok {
			t.Errorf("env %s reads key %q, which the Secret lacks", e.Name, ref.SecretKeyRef.Key)
		}
		env = append(env, e.Name+"="+v)
	}
	if !slices.ContainsFunc(env, func(s string) bool { return strings.HasPrefix(s, "FIRN_REGISTRY_ENDPOINTS=") }) {
		t.Errorf("env %v: want the etcd endpoints from the Secret", env)
	}
	cfgPath := configArg(t, c.Args)
	file := mountedSecretFile(t, pod.Spec, c, cfgPath, secret.Name)
	cfg, ok := secret.StringData[file]
	if !ok {
		t.Fatalf("the Secret has no key %q for %s", file, cfgPath)
	}
	local := filepath.Join(t.TempDir(), "firn.yaml")
	if err := os.WriteFile(local, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	configCheck(t, local, env...)
	want := d.Spec.Selector.MatchLabels
	if !sameLabels(pod.Labels, want) || !sameLabels(m.pdbs[0].Spec.Selector.MatchLabels, want) || !sameLabels(m.services[0].Spec.Selector, want) {
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

// mountedSecretFile returns the key of secret that the container sees at
// path.
func mountedSecretFile(t *testing.T, pod corev1.PodSpec, c corev1.Container, path, secret string) string {
	t.Helper()
	for _, vm := range c.VolumeMounts {
		rel, err := filepath.Rel(vm.MountPath, path)
		if err != nil || strings.HasPrefix(rel, "..") {
			continue
		}
		for _, v := range pod.Volumes {
			if v.Name != vm.Name || v.Secret == nil || v.Secret.SecretName != secret {
				continue
			}
			for _, it := range v.Secret.Items {
				if it.Path == rel {
					return it.Key
				}
			}
			return rel
		}
	}
	t.Fatalf("%s is not a file of the Secret %s mounted in the container", path, secret)
	return ""
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
