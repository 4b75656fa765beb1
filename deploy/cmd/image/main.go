// Command image builds firn's OCI image from a static firn binary,
// without a container daemon or a registry (make image runs it):
//
//	go run ./cmd/image -binary firn -version v1.2.3 -revision $(git rev-parse HEAD) -created $(git log -1 --format=%ct) -out dist/image
//
// It writes an OCI image layout (OUT/oci) and a tarball `docker load`
// and `podman load` read (OUT/firn-image.tar, tagged firn:VERSION), and
// prints the image's digest. The image is one layer on nothing: the
// binary at /usr/local/bin/firn, /etc/passwd and /etc/group naming the
// user it runs as (nonroot, 65532), its state directory /var/lib/firn
// (XDG_STATE_HOME, the one place firn serve on the local store writes:
// mount a volume there), and /etc/ssl/certs/ca-certificates.crt,
// the roots of Mozilla's NSS store as golang.org/x/crypto/x509roots/fallback
// carries them at the version go.sum pins — the same bytes on every
// machine, where Debian's bundle would be whatever the building machine
// installed; roots NSS constrains (distrust after a date) are left out,
// since a PEM file cannot say so. Every file's time is -created, and the
// image's too, so two builds of one commit give one digest.
package main

import (
	"archive/tar"
	"bytes"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"golang.org/x/crypto/x509roots/fallback/bundle"
)

// UID and GID are the image's user: nonroot, as distroless names it.
const (
	UID = 65532
	GID = 65532
)

// Binary is where the image holds firn.
const Binary = "/usr/local/bin/firn"

// StateDir is the image's XDG_STATE_HOME, owned by 65532: a volume
// mounted there holds the local store's data directory and node
// directory, so `firn serve` with no flags keeps its node and HWM.
const StateDir = "/var/lib/firn"

// Options are what one build takes.
type Options struct {
	Binary   string    // path of a static linux firn binary
	Version  string    // firn's version, as make release stamps it
	Revision string    // the commit
	Source   string    // the repository's URL
	Created  time.Time // every file's time and the image's
	Arch     string    // the binary's GOARCH
}

func main() {
	var o Options
	var created int64
	var out string
	flag.StringVar(&o.Binary, "binary", "", "a static linux firn binary (CGO_ENABLED=0)")
	flag.StringVar(&o.Version, "version", "", "firn's version (make release's VERSION)")
	flag.StringVar(&o.Revision, "revision", "", "the commit the binary is built from")
	flag.StringVar(&o.Source, "source", "https://github.com/firn-id/firn", "the repository's URL, for the image's labels")
	flag.StringVar(&o.Arch, "arch", "amd64", "the binary's GOARCH")
	flag.Int64Var(&created, "created", 0, "the image's time, Unix seconds (the commit's: git log -1 --format=%ct)")
	flag.StringVar(&out, "out", "", "the directory to write the OCI layout (OUT/oci) and the tarball (OUT/firn-image.tar) into")
	flag.Parse()
	o.Created = time.Unix(created, 0).UTC()
	if err := run(o, out); err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(1)
	}
}

func run(o Options, out string) error {
	if out == "" {
		return errors.New("no -out directory")
	}
	img, err := Build(o)
	if err != nil {
		return err
	}
	digest, err := Write(img, o.Version, out)
	if err != nil {
		return err
	}
	fmt.Println(digest)
	return nil
}

// Build returns the image of o's binary.
func Build(o Options) (v1.Image, error) {
	switch {
	case o.Binary == "":
		return nil, errors.New("no -binary")
	case o.Version == "" || o.Revision == "":
		return nil, errors.New("no -version or -revision: the image's labels need both")
	}
	bin, err := os.ReadFile(o.Binary)
	if err != nil {
		return nil, err
	}
	if !bytes.HasPrefix(bin, []byte("\x7fELF")) {
		return nil, fmt.Errorf("%s is not a linux binary (build it with GOOS=linux CGO_ENABLED=0)", o.Binary)
	}
	fs, err := rootFS(bin, o.Created)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(fs)), nil },
		tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, err
	}
	img, err := mutate.AppendLayers(mutate.MediaType(empty.Image, types.OCIManifestSchema1), layer)
	if err != nil {
		return nil, err
	}
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.Created = v1.Time{Time: o.Created}
	cf.Architecture, cf.OS = o.Arch, "linux"
	cf.Config = v1.Config{
		User:       fmt.Sprintf("%d:%d", UID, GID),
		Entrypoint: []string{Binary},
		Cmd:        []string{"serve"},
		WorkingDir: "/",
		Env:        []string{"PATH=/usr/local/bin", "XDG_STATE_HOME=" + StateDir},
		Labels: map[string]string{
			"org.opencontainers.image.title":    "firn",
			"org.opencontainers.image.source":   o.Source,
			"org.opencontainers.image.revision": o.Revision,
			"org.opencontainers.image.version":  o.Version,
			"org.opencontainers.image.licenses": "Apache-2.0",
			"org.opencontainers.image.created":  o.Created.Format(time.RFC3339),
		},
	}
	for i := range cf.History {
		cf.History[i].Created = v1.Time{Time: o.Created}
	}
	return mutate.ConfigFile(img, cf)
}

// Write writes img as an OCI layout in out/oci and a tarball tagged
// firn:version in out/firn-image.tar, and returns its digest.
func Write(img v1.Image, version, out string) (v1.Hash, error) {
	digest, err := img.Digest()
	if err != nil {
		return v1.Hash{}, err
	}
	dir := filepath.Join(out, "oci")
	if err := os.RemoveAll(dir); err != nil {
		return v1.Hash{}, err
	}
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return v1.Hash{}, err
	}
	tag, err := name.NewTag("firn:" + version)
	if err != nil {
		return v1.Hash{}, fmt.Errorf("version %q is not a tag an image can carry: %w", version, err)
	}
	if err := p.AppendImage(img, layout.WithAnnotations(map[string]string{"org.opencontainers.image.ref.name": tag.String()})); err != nil {
		return v1.Hash{}, err
	}
	return digest, tarball.WriteToFile(filepath.Join(out, "firn-image.tar"), tag, img)
}

// rootFS is the layer's tar: the directories, the user, the roots and the
// binary, in that order, every time created.
func rootFS(bin []byte, created time.Time) ([]byte, error) {
	var roots bytes.Buffer
	for r := range bundle.Roots() {
		if r.Constraint != nil {
			continue
		}
		if err := pem.Encode(&roots, &pem.Block{Type: "CERTIFICATE", Bytes: r.Certificate}); err != nil {
			return nil, err
		}
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	dir := func(name string, mode int64, owner ...int) error {
		h := &tar.Header{Typeflag: tar.TypeDir, Name: name + "/", Mode: mode, ModTime: created, Format: tar.FormatPAX}
		if len(owner) == 2 {
			h.Uid, h.Gid = owner[0], owner[1]
		}
		return tw.WriteHeader(h)
	}
	file := func(name string, mode int64, data []byte) error {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: mode, Size: int64(len(data)), ModTime: created, Format: tar.FormatPAX}); err != nil {
			return err
		}
		_, err := tw.Write(data)
		return err
	}
	for _, d := range []string{"etc", "etc/ssl", "etc/ssl/certs", "usr", "usr/local", "usr/local/bin", "var", "var/lib"} {
		if err := dir(d, 0o755); err != nil {
			return nil, err
		}
	}
	if err := dir(StateDir[1:], 0o700, UID, GID); err != nil {
		return nil, err
	}
	// A world-writable /tmp with the sticky bit, as on any Linux root;
	// a read-only root filesystem leaves it read-only all the same.
	if err := dir("tmp", 0o1777); err != nil {
		return nil, err
	}
	for _, f := range []struct {
		name string
		mode int64
		data []byte
	}{
		{"etc/passwd", 0o644, fmt.Appendf(nil, "root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:%d:%d:nonroot:/home/nonroot:/sbin/nologin\n", UID, GID)},
		{"etc/group", 0o644, fmt.Appendf(nil, "root:x:0:\nnonroot:x:%d:\n", GID)},
		{"etc/ssl/certs/ca-certificates.crt", 0o644, roots.Bytes()},
		{Binary[1:], 0o755, bin},
	} {
		if err := file(f.name, f.mode, f.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
