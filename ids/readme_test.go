package ids_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/firn-id/firn/internal/testenv"
)

// readmeProgram is the Go program of the README's section "Embedding
// firn in a service".
func readmeProgram(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "\n## Embedding firn in a service\n")
	section, _, _ = strings.Cut(section, "\n## ")
	m := regexp.MustCompile("(?s)```go\n(.*?)```").FindStringSubmatch(section)
	if !ok || m == nil {
		t.Fatal(`README.md has no Go program under "## Embedding firn in a service"`)
	}
	return m[1]
}

// body is the text of the function name in src, between its braces.
func body(t *testing.T, src, name string) string {
	t.Helper()
	_, rest, ok := strings.Cut(src, "\nfunc "+name+"() {\n")
	if !ok {
		t.Fatalf("no func %s", name)
	}
	b, _, _ := strings.Cut(rest, "\n}\n")
	return b
}

// TestReadmeEmbedding holds the README's embedding program to
// Example_postgres, which TestExamples runs, and runs the program itself
// on a database of its own, as a reader would: go run, DATABASE_URL set.
func TestReadmeEmbedding(t *testing.T) {
	prog := readmeProgram(t)
	ex, err := os.ReadFile("example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := body(t, prog, "main"), body(t, string(ex), "Example_postgres"); got != strings.TrimSuffix(want, "\n\t// Output: true") && got != want {
		t.Errorf("the README's program is not Example_postgres:\nREADME:\n%s\nExample_postgres:\n%s", got, want)
	}
	testenv.NotShort(t, "a go build")
	name, dsn := freshPostgres(t)
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	src, overlay := filepath.Join(tmp, "main.go"), filepath.Join(tmp, "overlay.json")
	o, err := json.Marshal(map[string]map[string]string{"Replace": {filepath.Join(root, "internal", "readmeembed", "main.go"): src}})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(src, []byte(prog), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(overlay, o, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "run", "-overlay", overlay, "./internal/readmeembed")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), name+"="+dsn)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the README's embedding program: %v\n%s", err, out)
	}
	if strings.TrimSpace(string(out)) != "true" {
		t.Errorf("the README's embedding program printed %q, want true", out)
	}
}
