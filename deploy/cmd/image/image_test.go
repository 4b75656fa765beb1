package main

import (
	"archive/tar"
	"bytes"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// binaries are two builds of firn, made once for every test.
var binaries struct {
	once  sync.Once
	paths [2]string
	err   error
}

// firnBinary returns build i (0 or 1) of a static firn, built as make
// image builds it.
func firnBinary(t *testing.T, i int) string {
	t.Helper()
	binaries.once.Do(func() {
		dir, err := os.MkdirTemp("", "firn-image-")
		if err != nil {
			binaries.err = err
			return
		}
		for j := range binaries.paths {
			if binaries.paths[j], binaries.err = build(filepath.Join(dir, strconv.Itoa(j))); binaries.err != nil {
				return
			}
		}
	})
	if binaries.err != nil {
		t.Fatal(binaries.err)
	}
	return binaries.paths[i]
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binaries.paths[0] != "" {
		os.RemoveAll(filepath.Dir(filepath.Dir(binaries.paths[0])))
	}
	os.Exit(code)
}

// build builds a static firn into dir.
func build(dir string) (string, error) {
	out := filepath.Join(dir, "firn")
	cmd := exec.Command("go", "build", "-trimpath", "-buildvcs=false",
		"-ldflags", "-s -w -X github.com/firn-id/firn/internal/buildinfo.version=v0.0.0-image -X github.com/firn-id/firn/internal/buildinfo.commit=0123456789abcdef",
		"-o", out, "./cmd/firn")
	cmd.Dir = filepath.Join("..", "..", "..")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux")
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, b)
	}
	return out, nil
}

func options(bin string) Options {
	return Options{Binary: bin, Version: "v0.0.0-image", Revision: "0123456789abcdef", Source: "https://github.com/firn-id/firn",
		Created: time.Unix(1764720000, 0).UTC(), Arch: "amd64"}
}

// TestImageIsReproducible: two builds of one commit — the binary built
// twice, the image written twice — give one digest; the tarball holds
// the same image (configuration digest) as the OCI layout.
func TestImageIsReproducible(t *testing.T) {
	var digests []v1.Hash
	for i := range 2 {
		dir := t.TempDir()
		img, err := Build(options(firnBinary(t, i)))
		if err != nil {
			t.Fatal(err)
		}
		d, err := Write(img, "v0.0.0-image", dir)
		if err != nil {
			t.Fatal(err)
		}
		fromLayout := layoutImage(t, filepath.Join(dir, "oci"))
		if ld, _ := fromLayout.Digest(); ld != d {
			t.Fatalf("build %d: the OCI layout holds %s, Write returned %s", i, ld, d)
		}
		tb, err := tarball.ImageFromPath(filepath.Join(dir, "firn-image.tar"), nil)
		if err != nil {
			t.Fatal(err)
		}
		// The tarball's manifest is Docker's, so its digest is another;
		// the image — its configuration, which names every layer — is one.
		tc, _ := tb.ConfigName()
		if lc, _ := fromLayout.ConfigName(); tc != lc {
			t.Fatalf("build %d: the tarball's image is %s, the layout's %s", i, tc, lc)
		}
		digests = append(digests, d)
	}
	if digests[0] != digests[1] {
		t.Fatalf("two builds of one commit: %s and %s", digests[0], digests[1])
	}
}

func layoutImage(t *testing.T, dir string) v1.Image {
	t.Helper()
	p, err := layout.FromPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	idx, err := p.ImageIndex()
	if err != nil {
		t.Fatal(err)
	}
	m, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Manifests) != 1 {
		t.Fatalf("the OCI layout holds %d manifests, want 1", len(m.Manifests))
	}
	img, err := idx.Image(m.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// TestImageServesAsNonroot: the image, read back from its OCI layout, is
// firn run as 65532 with its labels; unpacked, its root filesystem holds
// roots that parse; run from it — chrooted, the root mounted read-only,
// as uid and gid 65532 — firn serves IDs and stops cleanly on SIGTERM.
// Where podman can run containers, the tarball is loaded and run too.
func TestImageServesAsNonroot(t *testing.T) {
	dir := t.TempDir()
	img, err := Build(options(firnBinary(t, 0)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Write(img, "v0.0.0-image", dir); err != nil {
		t.Fatal(err)
	}
	img = layoutImage(t, filepath.Join(dir, "oci"))
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cf.Config.User != "65532:65532" || strings.Join(cf.Config.Entrypoint, " ") != Binary || cf.OS != "linux" {
		t.Errorf("config: user %q, entrypoint %q, os %q", cf.Config.User, cf.Config.Entrypoint, cf.OS)
	}
	for k, want := range map[string]string{
		"org.opencontainers.image.source":   "https://github.com/firn-id/firn",
		"org.opencontainers.image.revision": "0123456789abcdef",
		"org.opencontainers.image.version":  "v0.0.0-image",
		"org.opencontainers.image.licenses": "Apache-2.0",
	} {
		if got := cf.Config.Labels[k]; got != want {
			t.Errorf("label %s = %q, want %q", k, got, want)
		}
	}
	root := filepath.Join(dir, "rootfs")
	unpack(t, img, root)
	pemBytes, err := os.ReadFile(filepath.Join(root, "etc/ssl/certs/ca-certificates.crt"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for rest := pemBytes; ; n++ {
		var b *pem.Block
		if b, rest = pem.Decode(rest); b == nil {
			break
		}
		if _, err := x509.ParseCertificate(b.Bytes); err != nil {
			t.Fatalf("root %d: %v", n, err)
		}
	}
	if n < 100 {
		t.Fatalf("%d roots in /etc/ssl/certs/ca-certificates.crt, want Mozilla's (over 100)", n)
	}

	runUnpacked(t, root, cf.Config.Env)
	runPodman(t, filepath.Join(dir, "firn-image.tar"))
}

// unpack writes img's filesystem under root, owned by root as a
// container runtime would: only root may write to it.
func unpack(t *testing.T, img v1.Image, root string) {
	t.Helper()
	tr := tar.NewReader(mutate.Extract(img))
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(root, h.Name)
		if !strings.HasPrefix(p, root+string(filepath.Separator)) {
			t.Fatalf("the layer writes outside its root: %q", h.Name)
		}
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(p, os.FileMode(h.Mode).Perm()); err != nil {
				t.Fatal(err)
			}
			os.Chmod(p, os.FileMode(h.Mode).Perm()|modeBits(h.Mode))
			if err := os.Lchown(p, h.Uid, h.Gid); err != nil && os.Geteuid() == 0 {
				t.Fatal(err)
			}
		case tar.TypeReg:
			f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, os.FileMode(h.Mode).Perm())
			if err != nil {
				t.Fatal(err)
			}
			_, err = io.Copy(f, tr)
			f.Close()
			if err != nil {
				t.Fatal(err)
			}
		default:
			t.Fatalf("unexpected entry %q of type %c", h.Name, h.Typeflag)
		}
	}
}

// quoted is env as shell words.
func quoted(env []string) string {
	var q []string
	for _, e := range env {
		q = append(q, strconv.Quote(e))
	}
	return strings.Join(q, " ")
}

func modeBits(m int64) os.FileMode {
	if m&0o1000 != 0 {
		return os.ModeSticky
	}
	return 0
}

// runUnpacked runs firn serve from root as a container runtime would,
// without one: in a mount namespace of its own, root bind-mounted
// read-only with a tmpfs on the state directory (a volume's place),
// chrooted, as 65532:65532, with the image's environment and no flag
// but its listeners.
func runUnpacked(t *testing.T, root string, env []string) {
	t.Helper()
	if os.Geteuid() != 0 {
		if os.Getenv("CI") == "true" {
			t.Fatal("CI=true and not root: chroot and a mount namespace need root")
		}
		t.Skip("not root: the unpacked image is run chrooted in a mount namespace, which needs root")
	}
	for _, name := range []string{"unshare", "mount", "chroot", "env"} {
		tool(t, name)
	}
	addr := freeAddr(t)
	script := fmt.Sprintf(`set -e
mount --bind %[1]q %[1]q
mount -o remount,bind,ro %[1]q
mount -t tmpfs -o mode=0700,uid=%[2]d,gid=%[3]d tmpfs %[1]q%[6]s
exec env -i %[7]s "$(command -v chroot)" --userspec=%[2]d:%[3]d --groups=%[3]d %[1]q %[4]s serve --http %[5]s --grpc off`,
		root, UID, GID, Binary, addr, StateDir, quoted(env))
	cmd := exec.Command("unshare", "--mount", "--propagation", "private", "sh", "-c", script)
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	var id string
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		resp, err := http.Get("http://" + addr + "/v1/snowflake/next?format=text")
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				id = strings.TrimSpace(string(b))
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the unpacked image's firn serve issued no ID in 20 s: %v\n%s", err, log.String())
		}
	}
	if _, err := strconv.ParseUint(id, 10, 64); err != nil {
		t.Fatalf("an ID that is not a number: %q", id)
	}
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", cmd.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(status), "\n") {
		if f := strings.Fields(line); len(f) == 5 && (f[0] == "Uid:" || f[0] == "Gid:") {
			for _, v := range f[1:] {
				if v != "65532" {
					t.Errorf("firn serve runs with %s, want 65532 throughout", line)
				}
			}
		}
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("firn serve after SIGTERM: %v\n%s", err, log.String())
	}
	if !strings.Contains(log.String(), `"msg":"stopped"`) {
		t.Fatalf("firn serve did not log that it stopped:\n%s", log.String())
	}
	t.Logf("the unpacked image served ID %s as 65532 on a read-only root, and stopped", id)
}

// runPodman loads the tarball into podman and runs it, where podman can
// run containers; elsewhere it says why it did not.
func runPodman(t *testing.T, tarPath string) {
	podman, err := exec.LookPath("podman")
	if err != nil {
		t.Log("podman is not installed: the image was run unpacked only, not in a container")
		return
	}
	if out, err := exec.Command(podman, "load", "-i", tarPath).CombinedOutput(); err != nil {
		t.Logf("podman cannot load images here (%v): the image was run unpacked only\n%s", err, out)
		return
	}
	out, err := exec.Command(podman, "run", "--rm", "--read-only", "firn:v0.0.0-image", "version").CombinedOutput()
	if err != nil {
		t.Logf("podman cannot run containers here (%v): the image was run unpacked only\n%s", err, out)
		return
	}
	if !strings.Contains(string(out), "v0.0.0-image") {
		t.Fatalf("podman run firn version: %s", out)
	}
	t.Logf("podman loaded and ran the image: %s", strings.TrimSpace(string(out)))
}

// tool fails the test under CI=true when name is not installed, and
// skips it elsewhere.
func tool(t *testing.T, name string) {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is not installed and CI=true: %v", name, err)
		}
		t.Skipf("%s is not installed: skipping", name)
	}
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// TestReadmeFromTheImage runs deploy/README.md's "From the image" as
// written, from the repository's root, with IMAGE_DIR (make image's
// output, dist/image in the README, which the test replaces wherever the
// section names it) a directory of the test's own; every
// path the section names under dist/image then exists, and the image
// there runs as TestImageServesAsNonroot runs it. docker and skopeo, in
// the section's second block, need a daemon and a registry: the test
// checks only that they name what make image wrote.
func TestReadmeFromTheImage(t *testing.T) {
	tool(t, "make")
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(readme), "\n## From the image\n")
	if !ok {
		t.Fatal("deploy/README.md has no section \"From the image\"")
	}
	if i := strings.Index(sec, "\n## "); i >= 0 {
		sec = sec[:i]
	}
	blocks := regexp.MustCompile("(?s)```(sh)?\n(.*?)```").FindAllStringSubmatch(sec, -1)
	if len(blocks) != 2 || blocks[0][1] != "sh" {
		t.Fatalf("the section has %d blocks, want a sh block to run and one for docker and skopeo", len(blocks))
	}
	out := t.TempDir()
	cmd := exec.Command("sh", "-ec", strings.ReplaceAll(blocks[0][2], "dist/image", out))
	cmd.Dir = filepath.Join("..", "..", "..")
	cmd.Env = append(os.Environ(), "IMAGE_DIR="+out)
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the section's commands: %v\n%s", err, b)
	}
	if !regexp.MustCompile(`(?m)^sha256:[0-9a-f]{64}$`).Match(b) {
		t.Errorf("the section's commands printed no digest:\n%s", b)
	}
	for _, p := range regexp.MustCompile(`dist/image/[A-Za-z0-9_.-]+`).FindAllString(sec, -1) {
		if _, err := os.Stat(filepath.Join(out, strings.TrimPrefix(p, "dist/image/"))); err != nil {
			t.Errorf("the section names %s, which make image did not write: %v", p, err)
		}
	}
	img := layoutImage(t, filepath.Join(out, "oci"))
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(t.TempDir(), "rootfs")
	unpack(t, img, root)
	runUnpacked(t, root, cf.Config.Env)
}
