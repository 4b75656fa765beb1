package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// docBlock is one ```sh block of a document, with the heading it sits
// under: the nearest "### " heading before it, or the section's own; and
// the ```text block right after it, if any: what the document shows it
// printing.
type docBlock struct {
	heading, text, output string
}

// docBlocks returns the ```sh blocks of the section of file (a path from
// the repository's root) headed "## heading", in order.
func docBlocks(t *testing.T, file, heading string) []docBlock {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", file))
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(b), "\n## "+heading+"\n")
	if !ok {
		t.Fatalf("%s has no section %q", file, heading)
	}
	if i := strings.Index(sec, "\n## "); i >= 0 {
		sec = sec[:i]
	}
	var blocks []docBlock
	under := heading
	for _, part := range regexp.MustCompile("(?s)```sh\n(.*?)```(?:\n\n```text\n(.*?)```)?|\n### ([^\n]*)").FindAllStringSubmatch(sec, -1) {
		if part[3] != "" {
			under = part[3]
			continue
		}
		blocks = append(blocks, docBlock{heading: under, text: part[1], output: part[2]})
	}
	return blocks
}
