package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/firn-id/firn/internal/testenv"
	"github.com/firn-id/firn/internal/testserver"
)

// readmeNotRun lists the README's commands this test cannot run, and why.
// Every entry must still be a command of the README.
var readmeNotRun = map[string]string{
	// The whole suite, this test among it; CI runs it through .ci/run.
	"make test": "runs every test, this one included",
}

// readmeInstall is the README's install line. The module is not published
// from this checkout, so the test builds the same command from the tree
// into the directory it puts first on PATH, as go install would.
const readmeInstall = "go install github.com/firn-id/firn/cmd/firn@latest"

// readmeBlock is a fenced block of README.md and the section it is in.
type readmeBlock struct {
	section, lang string
	lines         []string // sh: commands, without comments or blank lines
	text          string
}

func readmeBlocks(t *testing.T) []readmeBlock {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var blocks []readmeBlock
	section := ""
	fence := regexp.MustCompile("(?s)^```([a-z]*)\n(.*?)```")
	for s := string(b); s != ""; {
		if strings.HasPrefix(s, "## ") {
			section, _, _ = strings.Cut(s[3:], "\n")
		}
		if m := fence.FindStringSubmatch(s); m != nil {
			blk := readmeBlock{section: section, lang: m[1], text: m[2]}
			for _, l := range strings.Split(m[2], "\n") {
				if c, _, _ := strings.Cut(l, " # "); strings.TrimSpace(c) != "" {
					blk.lines = append(blk.lines, strings.TrimSpace(c))
				}
			}
			blocks = append(blocks, blk)
			s = s[len(m[0]):]
		}
		_, s, _ = strings.Cut(s, "\n")
	}
	return blocks
}

// TestReadme runs every sh block of README.md in order, as a reader
// would: the install line and the checkout build, then the quick start's
// server, and every other command against it; then it runs the Go client
// program of "The client" against the same server. Substitutions only:
// the install line (readmeInstall), the checkout build's output path,
// and localhost:8080 and localhost:9090, the quick-start server's ports,
// which are free ports given to it through FIRN_HTTP_LISTEN and
// FIRN_GRPC_LISTEN.
func TestReadme(t *testing.T) {
	testenv.NotShort(t, "firn processes and go builds")
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	binDir, work := filepath.Join(tmp, "bin"), filepath.Join(tmp, "work")
	for _, d := range []string{binDir, work} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	addrs := testserver.Addrs(t, 2)
	httpAddr, grpcAddr := addrs[0], addrs[1]
	env := append(os.Environ(), "PATH="+binDir+string(os.PathListSeparator)+os.Getenv("PATH"),
		"XDG_STATE_HOME="+filepath.Join(tmp, "state"),
		"FIRN_HTTP_LISTEN="+httpAddr, "FIRN_GRPC_LISTEN="+grpcAddr)
	sh := func(dir, line string) string {
		t.Helper()
		cmd := exec.Command("sh", "-c", line)
		cmd.Dir, cmd.Env = dir, env
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		if err := cmd.Run(); err != nil {
			t.Fatalf("%s: %v\n%s%s", line, err, out.String(), errOut.String())
		}
		return out.String()
	}

	blocks := readmeBlocks(t)
	seen := map[string]bool{}
	for _, b := range blocks {
		for _, l := range b.lines {
			seen[l] = true
		}
	}
	for l := range readmeNotRun {
		if !seen[l] {
			t.Errorf("readmeNotRun lists %q, which the README no longer has", l)
		}
	}

	var served, installed, checkout bool
	for i, b := range blocks {
		if b.lang != "sh" {
			continue
		}
		if b.section == "Quick start" && !served {
			if len(b.lines) != 1 || b.lines[0] != "firn serve" {
				t.Fatalf("the quick start's first block is %q, want the one command firn serve", b.lines)
			}
			if !installed {
				t.Fatal("the README starts the server before it installs firn")
			}
			startReadmeServer(t, env, httpAddr)
			served = true
			continue
		}
		for _, line := range b.lines {
			switch {
			case readmeNotRun[line] != "":
			case line == readmeInstall:
				sh(root, "go build -o "+filepath.Join(binDir, "firn")+" ./cmd/firn")
				installed = true
			case strings.HasPrefix(line, "go build -o firn "):
				out := filepath.Join(tmp, "checkout", "firn")
				sh(root, "go build -o "+out+strings.TrimPrefix(line, "go build -o firn"))
				sh(work, out+" version")
				checkout = true
			case !served:
				t.Fatalf("block %d (%s, section %q) needs the quick-start server, which the README has not started yet", i, line, b.section)
			default:
				out := sh(work, strings.ReplaceAll(line, "localhost:8080", httpAddr))
				checkReadmeOutput(t, line, out)
			}
		}
	}
	if !installed || !checkout || !served {
		t.Fatalf("install line run %v, checkout build run %v, server started %v: want all three", installed, checkout, served)
	}
	runReadmeClient(t, root, tmp, blocks, grpcAddr)
}

// startReadmeServer starts the quick start's firn serve and waits until it
// is ready.
func startReadmeServer(t *testing.T, env []string, httpAddr string) {
	t.Helper()
	var log bytes.Buffer
	srv := exec.Command("sh", "-c", "exec firn serve")
	srv.Env, srv.Stderr = env, &log
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = srv.Process.Kill()
		_ = srv.Wait()
		if t.Failed() {
			t.Logf("firn serve's log:\n%s", log.String())
		}
	})
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if resp, err := http.Get("http://" + httpAddr + "/readyz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("the quick-start server is not ready after 15 s")
		}
	}
}

var batchCount = regexp.MustCompile(`/batch\?count=([0-9]+)`)

// checkReadmeOutput checks what the commands whose output the README
// describes printed.
func checkReadmeOutput(t *testing.T, line, out string) {
	t.Helper()
	switch {
	case line == "curl -s localhost:8080/v1/snowflake/next":
		if !regexp.MustCompile(`^\{"id":"[0-9]+"\}\n$`).MatchString(out) {
			t.Fatalf("%s printed %q, want one ID as a JSON string", line, out)
		}
	case batchCount.MatchString(line):
		n, _ := strconv.Atoi(batchCount.FindStringSubmatch(line)[1])
		var body struct{ IDs []string }
		if err := json.Unmarshal([]byte(out), &body); err != nil || len(body.IDs) != n {
			t.Fatalf("%s printed %q, want %d IDs", line, out, n)
		}
	case line == "firn tag next order -n 5":
		if ids := strings.Fields(out); fmt.Sprint(ids) != "[1 2 3 4 5]" {
			t.Fatalf("%s printed %q, want the IDs 1 to 5", line, out)
		}
	case line == "firn tag list":
		if !strings.Contains(out, "order") {
			t.Fatalf("%s printed %q, want the tag order", line, out)
		}
	}
}

// runReadmeClient runs the Go program of the README's section "The
// client" against the quick-start server, as a file of a package of this
// module (through an overlay, so nothing is written into the tree).
func runReadmeClient(t *testing.T, root, tmp string, blocks []readmeBlock, grpcAddr string) {
	t.Helper()
	var prog string
	for _, b := range blocks {
		if b.section == "The client" && b.lang == "go" {
			prog = b.text
		}
	}
	if !strings.Contains(prog, "c.Close(ctx)") || !strings.Contains(prog, "localhost:9090") {
		t.Fatalf("the README's client program does not close its client or does not reach the quick-start server:\n%s", prog)
	}
	src := filepath.Join(tmp, "main.go")
	overlay := filepath.Join(tmp, "overlay.json")
	o, err := json.Marshal(map[string]map[string]string{
		"Replace": {filepath.Join(root, "internal", "readmeclient", "main.go"): src},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(src, []byte(strings.ReplaceAll(prog, "localhost:9090", grpcAddr)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(overlay, o, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "run", "-overlay", overlay, "./internal/readmeclient")
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the README's client program: %v\n%s", err, out)
	}
	f := strings.Fields(string(out))
	if len(f) != 2 {
		t.Fatalf("the README's client program printed %q, want a snowflake ID and a segment ID", out)
	}
	id, err1 := strconv.ParseInt(f[0], 10, 64)
	order, err2 := strconv.ParseInt(f[1], 10, 64)
	if err1 != nil || err2 != nil || id <= 0 || order <= 5 {
		t.Fatalf("the README's client program printed %q, want a snowflake ID and a tag ID past the 5 the walkthrough took", out)
	}
}
