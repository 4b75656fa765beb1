package firn_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/firn-id/firn/internal/testenv"
)

// TestMakeRelease runs `make release` for this machine's platform only (the
// four release targets are built by `make release` itself) and checks what a
// user downloading it would: the binary reports the stamped version and
// commit, the image's tarball and digest are beside it (make image; the
// image itself is tested in deploy/cmd/image), and SHA256SUMS verifies.
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
	image := "firn-" + version + "-image-linux-amd64"
	for _, f := range []string{filepath.Base(bin), image + ".tar", image + ".digest"} {
		if !strings.Contains(string(sums), "  "+f+"\n") {
			t.Errorf("SHA256SUMS does not list %s:\n%s", f, sums)
		}
	}
	if n := strings.Count(string(sums), "\n"); n != 3 {
		t.Errorf("SHA256SUMS lists %d files, want the binary, the image's tarball and its digest:\n%s", n, sums)
	}
	digest, err := os.ReadFile(filepath.Join(dist, image+".digest"))
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^sha256:[0-9a-f]{64}\n$`).Match(digest) {
		t.Errorf("the image's digest file holds %q", digest)
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

// TestMakeHelpNamesEveryService: make help's line for services names every
// service scripts/services.sh starts or installs (each one it reports as
// NOT reachable or NOT installed).
func TestMakeHelpNamesEveryService(t *testing.T) {
	testenv.Tool(t, "make")
	script, err := os.ReadFile(filepath.Join("scripts", "services.sh"))
	if err != nil {
		t.Fatal(err)
	}
	var line string
	for _, l := range strings.Split(run(t, ".", "make", "--no-print-directory", "help"), "\n") {
		if f := strings.Fields(l); len(f) > 0 && f[0] == "services" {
			line = strings.ToLower(l)
		}
	}
	names := regexp.MustCompile(`say "([a-z]+) NOT (?:reachable|installed)"`).FindAllStringSubmatch(string(script), -1)
	if line == "" || len(names) == 0 {
		t.Fatalf("no services line in make help (%q) or no service in scripts/services.sh (%d)", line, len(names))
	}
	for _, m := range names {
		if !strings.Contains(line, m[1]) {
			t.Errorf("make help's services line %q does not name %s, which scripts/services.sh sets up", line, m[1])
		}
	}
}

// TestMakeBuildStampsTheCommit: a checkout's make build says which commit
// it is, in a git worktree and with -buildvcs=false too, where go build
// records none.
func TestMakeBuildStampsTheCommit(t *testing.T) {
	for _, tool := range []string{"make", "git"} {
		testenv.Tool(t, tool)
	}
	head, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		t.Skipf("not a git checkout: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "firn")
	run(t, ".", "make", "--no-print-directory", "build", "BIN="+bin)
	got := run(t, ".", bin, "version")
	if want := "(commit " + strings.TrimSpace(string(head))[:12]; !strings.Contains(got, want) {
		t.Fatalf("firn version of make build = %q, want %q", got, want)
	}
}
