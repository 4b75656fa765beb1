package firn_test

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/firn-id/firn"

type pkg struct {
	ImportPath string
	Dir        string
	Name       string
	GoFiles    []string
	Imports    []string
	Deps       []string
	Standard   bool
}

// packages lists the module's packages with their dependencies.
func packages(t *testing.T) []pkg {
	t.Helper()
	out, err := exec.Command("go", "list", "-json=ImportPath,Dir,Name,GoFiles,Imports,Deps", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []pkg
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for dec.More() {
		var p pkg
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	if len(pkgs) < 5 {
		t.Fatalf("go list found %d packages; is the module intact?", len(pkgs))
	}
	return pkgs
}

// standardPackages lists the standard library once: `go list std` costs a
// quarter of a second, and the rules ask about every package's deps.
func standardPackages(t *testing.T) func(path string) bool {
	t.Helper()
	out, err := exec.Command("go", "list", "std").Output()
	if err != nil {
		t.Fatal(err)
	}
	std := map[string]bool{}
	for _, p := range strings.Fields(string(out)) {
		std[p] = true
	}
	return func(p string) bool {
		return std[p] || strings.HasPrefix(p, "vendor/") || strings.HasPrefix(p, "internal/")
	}
}

func TestPackageDocs(t *testing.T) {
	for _, p := range packages(t) {
		fset := token.NewFileSet()
		var withDoc []string
		for _, f := range p.GoFiles {
			file, err := parser.ParseFile(fset, filepath.Join(p.Dir, f), nil, parser.PackageClauseOnly|parser.ParseComments)
			if err != nil {
				t.Fatal(err)
			}
			if file.Doc != nil {
				withDoc = append(withDoc, f)
			}
		}
		if len(withDoc) != 1 {
			t.Errorf("package %s: %d files carry a package doc comment %v, want exactly one", p.ImportPath, len(withDoc), withDoc)
		}
	}
}

func TestImportRules(t *testing.T) {
	pkgs := packages(t)
	rel := func(p string) string { return strings.TrimPrefix(strings.TrimPrefix(p, module), "/") }
	backends := []string{"localstore", "etcdstore", "sqlstore", "zkstore"}
	// backendOf is the backend a package belongs to: sqlstore/postgres,
	// a SQL row, is sqlstore's. "" for a package of no backend.
	backendOf := func(p string) string {
		top, _, _ := strings.Cut(p, "/")
		if slices.Contains(backends, top) {
			return top
		}
		return ""
	}
	// rowClients are the store clients each row links, which no other
	// row may: a program embedding one store links only its driver.
	rowClients := map[string][]string{
		"etcdstore":         {"go.etcd.io/etcd/client/"},
		"zkstore":           {"github.com/go-zookeeper/"},
		"sqlstore/postgres": {"github.com/jackc/pgx", "github.com/lib/pq"},
		"localstore":        {},
		"sqlstore/mysql":    {},
	}
	usesSQLStore := map[string]bool{}
	for _, p := range pkgs {
		usesSQLStore[rel(p.ImportPath)] = rel(p.ImportPath) == "sqlstore" || slices.Contains(p.Deps, module+"/sqlstore")
	}
	const mysqlDriver = "github.com/go-sql-driver/mysql"
	dsnParsers := []string{mysqlDriver, "github.com/jackc/pgx/v5/pgconn"}
	drivers := []string{"github.com/jackc/pgx", mysqlDriver, "github.com/lib/pq"}
	isDriver := func(dep string) bool {
		return slices.ContainsFunc(drivers, func(d string) bool { return strings.HasPrefix(dep, d) })
	}
	rules := []struct {
		name   string
		applys func(p string) bool
		// direct: bad is asked about the package's own imports, not
		// everything it depends on.
		direct bool
		bad    func(p, dep string, std bool) bool
	}{
		{name: "domain packages import only the standard library",
			applys: func(p string) bool { return p == "snowflake" || p == "segment" || p == "opaque" || p == "idtext" },
			bad:    func(_, dep string, std bool) bool { return !std }},
		{name: "wide imports the standard library, snowflake, google/uuid and oklog/ulid only",
			applys: func(p string) bool { return p == "wide" },
			bad: func(_, dep string, std bool) bool {
				return !std && rel(dep) != "snowflake" && dep != "github.com/google/uuid" && dep != "github.com/oklog/ulid/v2"
			}},
		{name: "api imports the standard library and the domain packages whose values its bodies carry",
			applys: func(p string) bool { return p == "api" },
			bad: func(_, dep string, std bool) bool {
				d := rel(dep)
				return !std && d != "snowflake" && d != "segment" && d != "wide" &&
					dep != "github.com/google/uuid" && dep != "github.com/oklog/ulid/v2"
			}},
		{name: "nodeid does not import snowflake",
			applys: func(p string) bool { return p == "nodeid" },
			bad:    func(_, dep string, _ bool) bool { return rel(dep) == "snowflake" }},
		{name: "backends import no other backend and no server",
			applys: func(p string) bool { return backendOf(p) != "" },
			bad: func(p, dep string, _ bool) bool {
				d := rel(dep)
				return strings.HasPrefix(dep, module) && (backendOf(d) != "" && backendOf(d) != backendOf(p) || d == "server")
			}},
		// The store table is the one place a kind is named: it knows
		// none, and the rows register in it from their own packages.
		{name: "store imports only the standard library, the domain packages and internal/secret",
			applys: func(p string) bool { return p == "store" },
			bad: func(_, dep string, std bool) bool {
				d := rel(dep)
				return !std && d != "nodeid" && d != "segment" && d != "internal/secret"
			}},
		// The database/sql pattern: a program that imports one store's
		// package links that store's client alone (go list -deps).
		{name: "a store's row links no other store's client",
			applys: func(p string) bool { _, ok := rowClients[p]; return ok },
			bad: func(p, dep string, _ bool) bool {
				for row, clients := range rowClients {
					for _, c := range clients {
						if row != p && strings.HasPrefix(dep, c) {
							return true
						}
					}
				}
				return false
			}},
		// internal/legacytest stands in for a Leaf instance, itself a
		// ZooKeeper client: no firn code path reaches it.
		{name: "only zkstore (and the Leaf stand-in of the tests) imports the ZooKeeper client",
			applys: func(p string) bool { return p != "zkstore" && p != "internal/legacytest" },
			direct: true,
			bad:    func(_, dep string, _ bool) bool { return strings.HasPrefix(dep, "github.com/go-zookeeper/") }},
		{name: "node imports no backend and no server",
			applys: func(p string) bool { return p == "node" },
			bad: func(_, dep string, _ bool) bool {
				d := rel(dep)
				return slices.Contains(backends, d) || d == "server"
			}},
		{name: "server imports no backend",
			applys: func(p string) bool { return p == "server" },
			bad:    func(_, dep string, _ bool) bool { return slices.Contains(backends, rel(dep)) }},
		{name: "client imports no server, backend, etcd or database/sql",
			applys: func(p string) bool { return p == "client" },
			bad: func(_, dep string, _ bool) bool {
				d := rel(dep)
				return d == "server" || slices.Contains(backends, d) || strings.HasPrefix(dep, "go.etcd.io/") || dep == "database/sql"
			}},
		{name: "client imports no Prometheus (client/clientprom does, for those who want it)",
			applys: func(p string) bool { return p == "client" },
			bad:    func(_, dep string, _ bool) bool { return strings.HasPrefix(dep, "github.com/prometheus/") }},
		// sqlstore classifies its own errors: MySQL's by their type (its
		// one driver import), PostgreSQL's by a method, with no import;
		// cmd/firn/internal/backend classifies a store's failure by the same type.
		// A SQL row registers its driver, as database/sql drivers do, and
		// reads DSNs with the driver's own parser, so the address it
		// names is the one the driver dials. cmd/firn imports the rows.
		{name: "only the SQL rows (sqlstore/postgres, sqlstore/mysql) and cmd/firn import SQL drivers, but sqlstore and cmd/firn/internal/backend the MySQL driver for its error type",
			applys: func(p string) bool { return p != "cmd/firn" },
			direct: true,
			bad: func(p, dep string, _ bool) bool {
				allowed := (p == "sqlstore" || p == "cmd/firn/internal/backend" || p == "sqlstore/mysql") && dep == mysqlDriver ||
					p == "sqlstore/postgres" && slices.Contains(dsnParsers[1:], dep) || p == "sqlstore/postgres" && dep == "github.com/jackc/pgx/v5/stdlib"
				return isDriver(dep) && !allowed
			}},
		{name: "outside cmd/firn a SQL driver is reached only as sqlstore's MySQL error type, or through its row",
			applys: func(p string) bool { return p != "cmd/firn" },
			bad: func(p, dep string, _ bool) bool {
				allowed := strings.HasPrefix(dep, mysqlDriver) && usesSQLStore[p] || p == "sqlstore/postgres"
				return isDriver(dep) && !allowed
			}},
		// A store is opened by its row, with its refusals and its dial
		// deadline; a program reaches it by importing the row's package.
		{name: "only etcdstore (and the test cluster) imports the etcd client",
			applys: func(p string) bool { return p != "etcdstore" && p != "internal/testserver" },
			direct: true,
			bad: func(_, dep string, _ bool) bool {
				return strings.HasPrefix(dep, "go.etcd.io/etcd/client/")
			}},
		{name: "migrate imports no SQL driver and no backend but sqlstore (its registry comes in as a nodeid.Store)",
			applys: func(p string) bool { return p == "migrate" },
			direct: true,
			bad: func(_, dep string, _ bool) bool {
				d := rel(dep)
				return isDriver(dep) || slices.Contains(backends, d) && d != "sqlstore"
			}},
	}
	isStd := standardPackages(t)
	for _, p := range pkgs {
		name := rel(p.ImportPath)
		for _, r := range rules {
			if !r.applys(name) {
				continue
			}
			deps := p.Deps
			if r.direct {
				deps = p.Imports
			}
			for _, dep := range deps {
				if r.bad(name, dep, isStd(dep)) {
					t.Errorf("%s: %s imports %s", r.name, p.ImportPath, dep)
				}
			}
		}
	}
}

// TestOnlyMainExits: only cmd/firn calls os.Exit or reads the environment
// (internal/testenv reads the test endpoints).
// getenvAllowed are the packages besides cmd/firn that read the
// environment, each for one reason.
var getenvAllowed = map[string]bool{
	// The endpoints of the real servers integration tests run against.
	"internal/testenv": true,
	// XDG_STATE_HOME, which places the user's node directory: firn's
	// commands and a program embedding package ids must read it alike
	// (localstore.UserDirs), or two node directories hand out one node.
	"localstore": true,
}

func TestOnlyMainExits(t *testing.T) {
	for _, p := range packages(t) {
		if p.Name == "main" {
			continue
		}
		fset := token.NewFileSet()
		for _, f := range p.GoFiles {
			file, err := parser.ParseFile(fset, filepath.Join(p.Dir, f), nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			ast.Inspect(file, func(n ast.Node) bool {
				if sel, ok := n.(*ast.SelectorExpr); ok {
					if id, ok := sel.X.(*ast.Ident); ok && id.Name == "os" && (sel.Sel.Name == "Exit" || sel.Sel.Name == "Getenv" && !getenvAllowed[strings.TrimPrefix(p.ImportPath, module+"/")]) {
						t.Errorf("%s: %s calls os.%s (only cmd/firn may)", p.ImportPath, fset.Position(sel.Pos()), sel.Sel.Name)
					}
				}
				return true
			})
		}
	}
}

// errorTextExempt lists the functions that may still read another
// layer's error text, each because the error has no other form.
var errorTextExempt = map[string]string{
	// gopkg.in/yaml.v3 reports a syntax error as text only ("yaml: line
	// 3: …"): the configuration's message drops the decoder's name.
	"cmd/firn/internal/config.yamlMessage": "yaml.v3's syntax errors have no type",
	// The one line a command prints: an error whose own package is the
	// command's name ("config: …" under firn config) does not say it
	// twice. It shapes the whole message for the terminal and passes no
	// reason between layers.
	"cmd/firn.message": "presentation of the final line",
	// PostgreSQL drivers' errors share SQLState() and no method for the
	// server's message alone; sqlstore imports neither driver (STYLE).
	"sqlstore.pgMessage": "pgx's and lib/pq's errors have no message method",
}

// textEdits are the calls that cut or rewrite a string.
var textEdits = map[string]bool{
	"TrimPrefix": true, "TrimSuffix": true, "TrimLeft": true, "TrimRight": true, "CutPrefix": true, "CutSuffix": true,
	"Replace": true, "ReplaceAll": true, "ReplaceAllString": true, "ReplaceAllStringFunc": true, "ReplaceAllLiteralString": true,
}

// errorTextEdits returns, for one parsed file, each call that cuts or
// rewrites the text of an error (X.Error() among its arguments, however
// deep), by the name of the function it is in.
func errorTextEdits(fset *token.FileSet, file *ast.File) (found []string) {
	for _, d := range file.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Body == nil {
			continue
		}
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok || !textEdits[sel.Sel.Name] {
				return true
			}
			for _, arg := range call.Args {
				if callsError(arg) {
					found = append(found, fmt.Sprintf("%s: %s", fn.Name.Name, fset.Position(call.Pos())))
					return false
				}
			}
			return true
		})
	}
	return found
}

// callsError reports whether e contains a call X.Error() with no arguments.
func callsError(e ast.Expr) bool {
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		if call, ok := n.(*ast.CallExpr); ok && len(call.Args) == 0 {
			if sel, ok := call.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Error" {
				found = true
			}
		}
		return !found
	})
	return found
}

// TestErrorTextRule: no package strips or rewrites another's error
// message; the package that makes an error says what a caller needs by
// its type (a Kind, a field, a Reason method), so rewording a message in
// one package cannot silently change another's. Tests may.
func TestErrorTextRule(t *testing.T) {
	for _, p := range packages(t) {
		rel := strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, module), "/")
		for _, f := range p.GoFiles {
			fset := token.NewFileSet()
			file, err := parser.ParseFile(fset, filepath.Join(p.Dir, f), nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			for _, at := range errorTextEdits(fset, file) {
				fn, _, _ := strings.Cut(at, ":")
				if _, ok := errorTextExempt[rel+"."+fn]; ok {
					continue
				}
				t.Errorf("%s: %s rewrites an error's text: give the error a type the caller reads instead", rel, at)
			}
		}
	}
}

// TestErrorTextRuleFixture holds the rule to a file of what it must find
// and what it must let pass.
func TestErrorTextRuleFixture(t *testing.T) {
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, filepath.Join("testdata", "errortext", "fixture.go"), nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	found := errorTextEdits(fset, file)
	if len(found) != 6 {
		t.Fatalf("found %d rewrites, want the fixture's 6:\n%s", len(found), strings.Join(found, "\n"))
	}
	for _, at := range found {
		if !strings.HasPrefix(at, "refused:") {
			t.Errorf("%s: not one of the fixture's refused calls", at)
		}
	}
}

// The shell's bounds: cmd/firn parses, wires and words; logic a library
// user needs too lives in the packages, so the shell stays small enough
// to read in a sitting and each command function fits a screen.
const (
	shellMaxLines    = 4200 // 4,000 before firn site, a command of its own
	shellMaxFuncLine = 80
)

// TestShellSize holds cmd/firn's non-test code to shellMaxLines lines and
// each of its functions to shellMaxFuncLine.
func TestShellSize(t *testing.T) {
	files, err := filepath.Glob("cmd/firn/*.go")
	if err != nil {
		t.Fatal(err)
	}
	lines := 0
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		lines += fset.File(file.Pos()).LineCount()
		for _, d := range file.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok {
				continue
			}
			if n := fset.Position(fn.End()).Line - fset.Position(fn.Pos()).Line + 1; n > shellMaxFuncLine {
				t.Errorf("%s: %s is %d lines (at most %d): move its logic to the package that owns it", fset.Position(fn.Pos()), fn.Name.Name, n, shellMaxFuncLine)
			}
		}
	}
	if lines > shellMaxLines {
		t.Errorf("cmd/firn holds %d non-test lines (at most %d): move logic a library user needs too into its package", lines, shellMaxLines)
	}
	if lines < 1000 {
		t.Errorf("cmd/firn holds %d non-test lines: did the glob miss its files?", lines)
	}
}

// storeClients are the store packages an embedding program imports, each
// with the import path prefix of the client it links.
var storeClients = map[string]string{
	"sqlstore/postgres": "github.com/jackc/pgx/",
	"sqlstore/mysql":    "github.com/go-sql-driver/mysql",
	"etcdstore":         "go.etcd.io/etcd/client/",
	"zkstore":           "github.com/go-zookeeper/zk",
	"localstore":        "",
}

// TestEmbeddingLinksOneClient: a program that embeds firn (package ids)
// on one store links that store's client and no other store's, as a
// database/sql program links only the drivers it imports.
func TestEmbeddingLinksOneClient(t *testing.T) {
	for pkg, own := range storeClients {
		out, err := exec.Command("go", "list", "-deps", module+"/ids", module+"/"+pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps ids %s: %v", pkg, err)
		}
		deps := strings.Fields(string(out))
		if own != "" && !slices.ContainsFunc(deps, func(d string) bool { return strings.HasPrefix(d, own) }) {
			t.Errorf("ids with %s does not link %s: is the table right?", pkg, own)
		}
		for other, client := range storeClients {
			if other == pkg || client == "" {
				continue
			}
			for _, d := range deps {
				if strings.HasPrefix(d, client) {
					t.Errorf("a program embedding firn on %s links %s, %s's client", pkg, d, other)
				}
			}
		}
	}
}
