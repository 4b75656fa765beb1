package firn_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/firn-id/firn/internal/testenv"
)

// TestMakeRelease runs `make release` for this machine's platform only (the
// four release targets are built by `make release` itself) and checks what a
// user downloading it would: the binary reports the stamped version and
// commit, and SHA256SUMS verifies.
func TestMakeRelease(t *testing.T) {
	for _, tool := range []string{"make", "sha256sum"} {
		testenv.Tool(t, tool)
	}
	dist := t.TempDir()
	const version, commit = "v0.0.0-releasetest", "0123456789abcdef0123456789abcdef01234567"
	platform := runtime.GOOS + "/" + runtime.GOARCH
	run(t, ".", "make", "--no-print-directory", "release", "PLATFORMS="+platform,
		"DIST="+dist, "VERSION="+version, "COMMIT="+commit)

	bin := filepath.Join(dist, "firn-"+version+"-"+runtime.GOOS+"-"+runtime.GOARCH)
	got := strings.TrimSpace(run(t, dist, bin, "version"))
	want := "firn " + version + " (commit " + commit[:12] + ", " + runtime.Version() + ")"
	if got != want {
		t.Fatalf("firn version = %q, want %q", got, want)
	}
	sums, err := os.ReadFile(filepath.Join(dist, "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(sums), "\n"); n != 1 || !strings.Contains(string(sums), filepath.Base(bin)) {
		t.Fatalf("SHA256SUMS should list the one binary built, got:\n%s", sums)
	}
	run(t, dist, "sha256sum", "-c", "SHA256SUMS")
}

func run(t *testing.T, dir, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}
