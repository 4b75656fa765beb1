package firn_test

import (
	"os/exec"
	"path"
	"strings"
	"testing"
)

// TestNoRunArtefactsTracked refuses files a run leaves behind — process
// IDs, logs, core dumps, test binaries, profiles — among the tracked ones:
// they describe one machine's run, and a clone would carry them as if they
// were the project's.
func TestNoRunArtefactsTracked(t *testing.T) {
	out, err := exec.Command("git", "ls-files").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	for _, f := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if artefact(path.Base(f)) {
			t.Errorf("%s is a run artefact: remove it from the repository (.gitignore lists the patterns)", f)
		}
	}
}

func artefact(name string) bool {
	for _, p := range []string{"*.pid", "*.log", "core", "core.[0-9]*", "*.test", "*.out", "*.prof"} {
		if ok, _ := path.Match(p, name); ok {
			return true
		}
	}
	return false
}

func TestArtefactPatterns(t *testing.T) {
	for name, want := range map[string]bool{
		"load.pid": true, "serve.log": true, "core": true, "core.1234": true, "firn.test": true,
		"cover.out": true, "cpu.prof": true, "core.go": false, "corefile": false, "log.go": false, "main.go": false,
	} {
		if got := artefact(name); got != want {
			t.Errorf("artefact(%q) = %v, want %v", name, got, want)
		}
	}
}
