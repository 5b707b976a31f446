package archtest

import (
	"bufio"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// repoRoot is the repository root, relative to this package.
const repoRoot = "../.."

// tree is the repository's Go packages, read from the sources: every
// non-test .go file of every directory, whatever its build constraints, so
// the import graph is the union over every system the runtime builds for.
type tree struct {
	module string
	// imports maps every package directory (slash-separated, relative to
	// the root; test-only packages included) to the import paths its
	// non-test files name.
	imports map[string][]string
}

// skipDir reports the directories that hold no package of the module:
// hidden ones, testdata and the provider cache.
func skipDir(name string) bool {
	return name != "." && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata")
}

func loadTree(t *testing.T) *tree {
	t.Helper()
	module, err := modulePath(filepath.Join(repoRoot, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	tr := &tree{module: module, imports: map[string][]string{}}
	fset := token.NewFileSet()
	err = fs.WalkDir(os.DirFS(repoRoot), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if skipDir(d.Name()) {
				return fs.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") {
			return nil
		}
		dir := path.Dir(p)
		if _, ok := tr.imports[dir]; !ok {
			tr.imports[dir] = nil // a package, even with test files only
		}
		if strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, filepath.Join(repoRoot, filepath.FromSlash(p)), nil, parser.ImportsOnly|parser.ParseComments)
		if err != nil {
			return fmt.Errorf("parse %s: %w", p, err)
		}
		if isIgnored(f.Comments) {
			return nil
		}
		for _, imp := range f.Imports {
			ip, err := strconv.Unquote(imp.Path.Value)
			if err != nil {
				return fmt.Errorf("%s: import %s: %w", p, imp.Path.Value, err)
			}
			tr.imports[dir] = append(tr.imports[dir], ip)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for dir, ips := range tr.imports {
		sort.Strings(ips)
		tr.imports[dir] = slices.Compact(ips)
	}
	return tr
}

// isIgnored reports a file excluded from every build (`//go:build ignore`,
// as ent/entc.go is).
func isIgnored(groups []*ast.CommentGroup) bool {
	for _, g := range groups {
		for _, c := range g.List {
			if strings.TrimSpace(c.Text) == "//go:build ignore" {
				return true
			}
		}
	}
	return false
}

// local returns the module-relative directory of an import path inside the
// module, or false for any other import.
func (tr *tree) local(importPath string) (string, bool) {
	if importPath == tr.module {
		return ".", true
	}
	rest, ok := strings.CutPrefix(importPath, tr.module+"/")
	return rest, ok
}

// dirs returns every package directory, sorted.
func (tr *tree) dirs() []string {
	out := make([]string, 0, len(tr.imports))
	for d := range tr.imports {
		out = append(out, d)
	}
	sort.Strings(out)
	return out
}

// deps returns every module package that dir depends on, transitively.
func (tr *tree) deps(dir string) map[string]bool {
	seen := map[string]bool{}
	var visit func(string)
	visit = func(d string) {
		for _, ip := range tr.imports[d] {
			l, ok := tr.local(ip)
			if !ok || seen[l] {
				continue
			}
			seen[l] = true
			visit(l)
		}
	}
	visit(dir)
	return seen
}

func modulePath(goMod string) (string, error) {
	f, err := os.Open(goMod)
	if err != nil {
		return "", fmt.Errorf("read the module path: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if m, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "module "); ok {
			return strings.TrimSpace(m), nil
		}
	}
	return "", fmt.Errorf("%s has no module line", goMod)
}
