package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// docBlock is one ```sh block of a document, with the heading it sits
// under: the nearest "### " heading before it, or the section's own.
type docBlock struct {
	heading, text string
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
	for _, part := range regexp.MustCompile("(?s)```sh\n(.*?)```|\n### ([^\n]*)").FindAllStringSubmatch(sec, -1) {
		if part[2] != "" {
			under = part[2]
			continue
		}
		blocks = append(blocks, docBlock{heading: under, text: part[1]})
	}
	return blocks
}

// readmeBlocks returns the ```sh blocks of the README section headed
// heading, in order, each as its command lines without comments.
func readmeBlocks(t *testing.T, heading string) [][]string {
	t.Helper()
	var blocks [][]string
	for _, b := range docBlocks(t, "README.md", heading) {
		var lines []string
		for _, l := range strings.Split(strings.TrimSpace(b.text), "\n") {
			if c, _, _ := strings.Cut(l, " # "); strings.TrimSpace(c) != "" {
				lines = append(lines, strings.TrimSpace(c))
			}
		}
		blocks = append(blocks, lines)
	}
	return blocks
}
