// Command tiertests prints the -run pattern of a test tier: the top-level
// tests of the given packages that can reach the tier's gate package (a
// call of pgtest or realpeers, directly, through a helper of the same
// package, or through a test-support package that imports the gate). A
// tier run with that pattern runs each test once per CI pass: the tests
// that never touch the tier already ran, identically, in the unit tier.
//
//	go run ./internal/testutil/tiertests -tags postgres,e2e \
//	    -gate github.com/…/internal/testutil/pgtest ./internal/store ./internal/claims
//
// The analysis is syntactic and errs on the side of running a test: any
// name a test uses that matches a declaration of its package (a function, a
// method of any type by that name, a package-level variable and whatever
// assigns it) is followed. A package whose own code imports the gate (the
// gate's own tests, a helper package) has every test selected.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

func main() {
	tags := flag.String("tags", "", "build tags of the tier (as go test -tags)")
	gate := flag.String("gate", "", "import path of the tier's gate package")
	flag.Parse()
	if *gate == "" || flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: tiertests -tags t1,t2 -gate importpath packages...")
		os.Exit(2)
	}
	names, err := run(*tags, *gate, flag.Args())
	if err != nil {
		fmt.Fprintln(os.Stderr, "tiertests:", err)
		os.Exit(1)
	}
	fmt.Println(pattern(names))
}

// pattern is the -run value selecting exactly the named top-level tests;
// with none it selects none.
func pattern(names []string) string {
	if len(names) == 0 {
		return "^$"
	}
	quoted := make([]string, len(names))
	for i, n := range names {
		quoted[i] = regexp.QuoteMeta(n)
	}
	return "^(" + strings.Join(quoted, "|") + ")$"
}

// listed is what tiertests reads of `go list -json`.
type listed struct {
	ImportPath   string
	Dir          string
	GoFiles      []string
	CgoFiles     []string
	TestGoFiles  []string
	XTestGoFiles []string
	Deps         []string
	Imports      []string
}

func goList(tags string, args ...string) ([]listed, error) {
	cmd := exec.Command("go", append([]string{"list", "-e", "-json", "-tags", tags}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list %s: %w\n%s", strings.Join(args, " "), err, stderr.Bytes())
	}
	var pkgs []listed
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p listed
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			return nil, fmt.Errorf("go list output: %w", err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs, nil
}

// run lists the packages and the module's packages, decides which import
// paths reach the gate, and returns the union of the selected test names.
func run(tags, gate string, args []string) ([]string, error) {
	all, err := goList(tags, "./...")
	if err != nil {
		return nil, err
	}
	reaches := map[string]bool{gate: true}
	for _, p := range all {
		for _, d := range p.Deps {
			if d == gate {
				reaches[p.ImportPath] = true
			}
		}
	}
	pkgs, err := goList(tags, args...)
	if err != nil {
		return nil, err
	}
	set := map[string]bool{}
	for _, p := range pkgs {
		files := map[string]*ast.File{}
		fset := token.NewFileSet()
		for _, group := range [][]string{p.GoFiles, p.CgoFiles, p.TestGoFiles, p.XTestGoFiles} {
			for _, name := range group {
				f, err := parser.ParseFile(fset, filepath.Join(p.Dir, name), nil, parser.SkipObjectResolution)
				if err != nil {
					return nil, fmt.Errorf("parse: %w", err)
				}
				files[name] = f
			}
		}
		tests := make(map[string]bool)
		for _, name := range append(append([]string{}, p.TestGoFiles...), p.XTestGoFiles...) {
			tests[name] = true
		}
		for _, n := range tierTests(p.ImportPath, files, tests, func(path string) bool { return reaches[path] }) {
			set[n] = true
		}
	}
	names := make([]string, 0, len(set))
	for n := range set {
		names = append(names, n)
	}
	sort.Strings(names)
	return names, nil
}

// testName matches the name of a top-level test function.
var testName = regexp.MustCompile(`^Test($|[^a-z])`)

// why, when TIERTESTS_WHY is set, prints each selected test with the first
// steps of a path towards the gate (for a reader wondering why it runs).
var why = os.Getenv("TIERTESTS_WHY") != ""

// tierTests returns the top-level tests declared in the files named in
// testFiles that reach a package for which gated is true. files are all the
// package's files (its code, its tests, its external tests) by name; self
// is its import path (an external test's import of it is local).
func tierTests(self string, files map[string]*ast.File, testFiles map[string]bool, gated func(string) bool) []string {
	if gated(self) {
		var all []string
		for name, f := range files {
			if testFiles[name] {
				all = append(all, topTests(f)...)
			}
		}
		sort.Strings(all)
		return all
	}
	// Nodes: "f" a function or variable f, ".m" any method m. Edges: the
	// names a declaration uses. direct: the nodes that use the gate.
	edges := map[string]map[string]bool{}
	direct := map[string]bool{}
	declared := map[string]bool{}
	add := func(from, to string) {
		if from == "_" || to == "_" {
			return // the blank identifier names nothing
		}
		if edges[from] == nil {
			edges[from] = map[string]bool{}
		}
		edges[from][to] = true
	}
	var tests []string
	for name, f := range files {
		imports := map[string]string{} // local name → import path
		for _, im := range f.Imports {
			path := strings.Trim(im.Path.Value, `"`)
			local := path[strings.LastIndex(path, "/")+1:]
			if im.Name != nil {
				local = im.Name.Name
			}
			imports[local] = path
		}
		uses := func(node string, body ast.Node) {
			if body == nil {
				return
			}
			ast.Inspect(body, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.SelectorExpr:
					if x, ok := n.X.(*ast.Ident); ok {
						if path, ok := imports[x.Name]; ok {
							if path == self {
								add(node, n.Sel.Name)
							} else if gated(path) {
								direct[node] = true
							}
							return false
						}
					}
					add(node, "."+n.Sel.Name)
				case *ast.Ident:
					add(node, n.Name)
				}
				return true
			})
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				node := d.Name.Name
				if d.Recv != nil {
					node = "." + node
				} else if testFiles[name] && testName.MatchString(node) && node != "TestMain" {
					tests = append(tests, node)
				}
				declared[node] = true
				uses(node, d.Body)
				// A function that assigns a package-level variable is
				// reached through that variable (a TestMain setting up
				// a shared store).
				ast.Inspect(d.Body, func(n ast.Node) bool {
					if as, ok := n.(*ast.AssignStmt); ok {
						for _, l := range as.Lhs {
							if id, ok := l.(*ast.Ident); ok {
								add(id.Name, node)
							}
						}
					}
					return true
				})
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.ValueSpec:
						for _, n := range s.Names {
							declared[n.Name] = true
							for _, v := range s.Values {
								uses(n.Name, v)
							}
						}
					case *ast.TypeSpec:
						// Methods are reached by name; a type's
						// declaration uses nothing that runs.
					}
				}
			}
		}
	}
	reached := map[string]bool{}
	for n := range direct {
		reached[n] = true
	}
	// Reverse reachability: a node reaches the gate when one of its edges
	// leads to a node that does. Iterate to a fixed point.
	for changed := true; changed; {
		changed = false
		for from, tos := range edges {
			if reached[from] {
				continue
			}
			for to := range tos {
				if reached[to] && declared[to] {
					reached[from], changed = true, true
					break
				}
			}
		}
	}
	var out []string
	for _, t := range tests {
		if reached[t] {
			out = append(out, t)
			if why {
				path := []string{t}
				for n := t; !direct[n]; {
					for to := range edges[n] {
						if reached[to] && declared[to] && !contains(path, to) {
							n = to
							break
						}
					}
					if n == path[len(path)-1] {
						break
					}
					path = append(path, n)
				}
				fmt.Fprintln(os.Stderr, self, strings.Join(path, " → "))
			}
		}
	}
	sort.Strings(out)
	return out
}

// topTests are the top-level test functions of a file.
func topTests(f *ast.File) []string {
	var out []string
	for _, d := range f.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil && testName.MatchString(fd.Name.Name) && fd.Name.Name != "TestMain" {
			out = append(out, fd.Name.Name)
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
