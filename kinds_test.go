package firn_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// storeKinds are the names of the store kinds, as --store takes them.
var storeKinds = []string{"local", "etcd", "postgres", "mysql", "zookeeper"}

// kindNamers are the product files allowed to name a store kind as a Go
// string literal: each kind's row of the store table (package store),
// and the SQL dialects' own names, which firn schema --dialect and firn
// migrate --dialect read.
var kindNamers = []string{
	"localstore/kind.go",
	"etcdstore/kind.go",
	"zkstore/kind.go",
	"sqlstore/postgres/postgres.go",
	"sqlstore/mysql/mysql.go",
	"sqlstore/dialect.go",
}

// sections are literals that are a kind's name and something else: the
// configuration section zookeeper, which a command's flags take whole
// (config.Register).
var sections = map[string]string{"cmd/firn/store.go": "zookeeper"}

// TestStoreKindsNamedOnlyInTheirRows: a store kind is one row of the
// store table, registered from its own package; no other product code —
// the binary and every package it links, and every public package —
// names a kind, so adding a store is its row and its package. Help and
// messages list the kinds from the table.
func TestStoreKindsNamedOnlyInTheirRows(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", "./cmd/firn").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	linked := map[string]bool{}
	for _, p := range strings.Fields(string(out)) {
		linked[p] = true
	}
	rel := func(p string) string { return strings.TrimPrefix(strings.TrimPrefix(p, module), "/") }
	var files int
	for _, p := range packages(t) {
		name := rel(p.ImportPath)
		if !linked[p.ImportPath] && (strings.HasPrefix(name, "internal/") || p.Name == "main") {
			continue // a test helper, or a program of the tests
		}
		for _, f := range p.GoFiles {
			path := filepath.Join(p.Dir, f)
			file, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			files++
			where := filepath.ToSlash(filepath.Join(name, f))
			ast.Inspect(file, func(n ast.Node) bool {
				lit, ok := n.(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					return true
				}
				v, err := strconv.Unquote(lit.Value)
				if err == nil && slices.Contains(storeKinds, v) && !slices.Contains(kindNamers, where) && sections[where] != v {
					t.Errorf("%s names the store kind %q: ask the store table (store.Lookup, a Kind's fields) instead", where, v)
				}
				return true
			})
		}
	}
	if files < 100 {
		t.Fatalf("read %d product files; is the module intact?", files)
	}
}
