package main

import (
	"bytes"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/firn-id/firn/internal/servetest"
)

// TestReadmeWalkthrough runs the README's quick start and its segment
// walkthrough as written, with the server still running. Two
// substitutions only: `go run ./cmd/firn` and `firn` are the built binary,
// and localhost:8080 is the free port the server was given (through
// FIRN_HTTP_LISTEN, which the README's configuration section documents).
func TestReadmeWalkthrough(t *testing.T) {
	bin := servetest.Binary(t)
	state := t.TempDir()
	addrs := servetest.Addrs(t, 2)
	httpAddr, grpcAddr := addrs[0], addrs[1]
	env := append(os.Environ(), "XDG_STATE_HOME="+state, "HOME="+state,
		"FIRN_HTTP_LISTEN="+httpAddr, "FIRN_GRPC_LISTEN="+grpcAddr)
	expand := func(line string) string {
		line = strings.Replace(line, "go run ./cmd/firn", bin, 1)
		if strings.HasPrefix(line, "firn ") {
			line = bin + line[len("firn"):]
		}
		return strings.ReplaceAll(line, "localhost:8080", httpAddr)
	}
	quick := readmeBlocks(t, "Quick start")
	if len(quick) < 2 || len(quick[0]) != 1 || !strings.HasSuffix(quick[0][0], " serve") {
		t.Fatalf("the quick start's first block is not one serve command: %q", quick)
	}
	var log bytes.Buffer
	srv := exec.Command("sh", "-c", "exec "+expand(quick[0][0]))
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
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("the quick-start server is not ready after 15 s")
		}
	}
	run := func(line string) string {
		t.Helper()
		cmd := exec.Command("sh", "-c", expand(line))
		cmd.Env = env
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		if err := cmd.Run(); err != nil {
			t.Fatalf("%s: %v\n%s%s", line, err, out.String(), errOut.String())
		}
		return out.String()
	}
	if out := run(quick[1][0]); !regexp.MustCompile(`^\{"id":"[0-9]+"\}\n$`).MatchString(out) {
		t.Fatalf("%s printed %q, want one ID as a JSON string", quick[1][0], out)
	}
	segs := readmeBlocks(t, "Segment mode")
	if len(segs) == 0 || len(segs[0]) < 2 {
		t.Fatalf("the segment walkthrough has no commands: %q", segs)
	}
	for _, line := range segs[0] {
		out := run(line)
		if strings.Contains(line, "tag next order -n 5") {
			if ids := strings.Fields(out); len(ids) != 5 || ids[0] != "1" || ids[4] != "5" {
				t.Fatalf("%s printed %q, want the IDs 1 to 5", line, out)
			}
		}
	}
}
