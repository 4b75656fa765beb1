package deploy_test

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// unit reads a systemd unit file: each key's values, in order.
func unit(t *testing.T, path string) map[string][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	keys := map[string][]string{}
	s := bufio.NewScanner(f)
	for s.Scan() {
		line := strings.TrimSpace(s.Text())
		if line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, "[") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			t.Fatalf("%s: line %q is not KEY=VALUE", path, line)
		}
		keys[k] = append(keys[k], v)
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	return keys
}

// TestSystemdUnit: the service reads the configuration file beside it,
// whose data directory is the unit's state directory; it stops with
// SIGTERM and time to drain; it runs sandboxed. Where systemd-analyze is
// installed, the unit also passes `verify` and scores an exposure of at
// most 2.0 in `security`.
func TestSystemdUnit(t *testing.T) {
	u := unit(t, "systemd/firn.service")
	want := map[string]string{
		"StateDirectory":         "firn",
		"ConfigurationDirectory": "firn",
		"KillSignal":             "SIGTERM",
		"NoNewPrivileges":        "yes",
		"ProtectSystem":          "strict",
		"ProtectHome":            "yes",
		"PrivateTmp":             "yes",
		"CapabilityBoundingSet":  "",
	}
	for k, v := range want {
		if got := u[k]; !slices.Contains(got, v) {
			t.Errorf("%s=%q, want %q", k, got, v)
		}
	}
	if len(u["User"]) == 0 || u["User"][0] == "root" {
		t.Errorf("User=%v: want a service user", u["User"])
	}
	if len(u["TimeoutStopSec"]) == 0 {
		t.Error("no TimeoutStopSec: a stop must leave time to drain and release the node")
	}
	exec0 := strings.Fields(strings.Join(u["ExecStart"], " "))
	if len(exec0) != 4 || exec0[1] != "serve" || exec0[2] != "--config" || exec0[3] != "/etc/firn/firn.yaml" {
		t.Fatalf("ExecStart=%v: want firn serve --config /etc/firn/firn.yaml", exec0)
	}
	data, err := os.ReadFile("systemd/firn.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		Registry struct {
			DataDir string `json:"data_dir"`
		}
	}
	if err := yaml.Unmarshal(data, &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.Registry.DataDir != "/var/lib/firn" {
		t.Errorf("systemd/firn.yaml data_dir %q: want /var/lib/firn, the unit's StateDirectory", cfg.Registry.DataDir)
	}
	analyze(t, "systemd/firn.service", exec0[0])
}

// analyze runs systemd-analyze on a copy of the unit whose ExecStart is
// the binary just built.
func analyze(t *testing.T, path, binary string) {
	tool, err := exec.LookPath("systemd-analyze")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("systemd-analyze is not installed and CI=true")
		}
		t.Log("systemd-analyze is not installed: the unit's fields were checked, not systemd's verdict")
		return
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	copyPath := filepath.Join(t.TempDir(), "firn.service")
	if err := os.WriteFile(copyPath, []byte(strings.ReplaceAll(string(data), binary, firn)), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"verify", copyPath}, {"security", "--offline=yes", "--threshold=20", copyPath}} {
		if out, err := exec.Command(tool, args...).CombinedOutput(); err != nil {
			t.Errorf("systemd-analyze %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}
