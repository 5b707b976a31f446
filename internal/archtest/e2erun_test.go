package archtest

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// e2eRun is one `go test` command of scripts/test.sh that builds with the
// e2e tag: the packages it names and its -run pattern ("" runs them all).
type e2eRun struct {
	line     int
	packages []string // slash-separated, relative to the root ("internal/store")
	run      *regexp.Regexp
}

// goTestLine matches a `go test` command; shellVar a single-quoted
// assignment (e2e_tests='^(...)$').
var (
	goTestLine = regexp.MustCompile(`(?:^|\s)go test\s(.*)$`)
	shellVar   = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_]*)='([^']*)'\s*$`)
)

// e2eRuns reads the go test commands of a test script that set the e2e
// tag. A -run value may be a literal or "$name" of a single-quoted
// variable assigned earlier in the script.
func e2eRuns(script string) ([]e2eRun, error) {
	vars := map[string]string{}
	var runs []e2eRun
	for i, line := range strings.Split(script, "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "#") {
			continue
		}
		if m := shellVar.FindStringSubmatch(line); m != nil {
			vars[m[1]] = m[2]
			continue
		}
		m := goTestLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		fields := strings.Fields(strings.TrimSuffix(strings.TrimSpace(strings.SplitN(m[1], "||", 2)[0]), "\\"))
		r := e2eRun{line: i + 1}
		e2e := false
		for j := 0; j < len(fields); j++ {
			f := fields[j]
			switch {
			case f == "-tags" && j+1 < len(fields):
				j++
				e2e = slices.Contains(strings.Split(fields[j], ","), "e2e")
			case f == "-run" && j+1 < len(fields):
				j++
				pattern := strings.Trim(fields[j], `'"`)
				if name, ok := strings.CutPrefix(pattern, "$"); ok {
					v, known := vars[strings.Trim(name, "{}")]
					if !known {
						return nil, fmt.Errorf("scripts/test.sh:%d: -run %s names no single-quoted variable assigned before it", i+1, fields[j])
					}
					pattern = v
				}
				re, err := regexp.Compile(pattern)
				if err != nil {
					return nil, fmt.Errorf("scripts/test.sh:%d: -run %q: %w", i+1, pattern, err)
				}
				r.run = re
			case strings.HasPrefix(f, "./"):
				r.packages = append(r.packages, path.Clean(strings.TrimPrefix(f, "./")))
			}
		}
		if e2e {
			runs = append(runs, r)
		}
	}
	return runs, nil
}

// covers reports whether one of runs runs test in package dir.
func covers(runs []e2eRun, dir, test string) bool {
	for _, r := range runs {
		for _, p := range r.packages {
			base, below := strings.CutSuffix(p, "/...")
			in := p == dir || p == "..." || (below && (dir == base || strings.HasPrefix(dir, base+"/")))
			if in && (r.run == nil || r.run.MatchString(test)) {
				return true
			}
		}
	}
	return false
}

// requireCallers returns the Test functions of a parsed test file that call
// e2etest.Require (Require inside package e2etest), directly or through a
// function of the same file.
func requireCallers(f *ast.File) []string {
	callsRequire := func(body ast.Node, helpers map[string]bool) bool {
		found := false
		ast.Inspect(body, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return !found
			}
			switch fn := call.Fun.(type) {
			case *ast.SelectorExpr:
				if id, ok := fn.X.(*ast.Ident); ok && id.Name == "e2etest" && fn.Sel.Name == "Require" {
					found = true
				}
			case *ast.Ident:
				if (fn.Name == "Require" && f.Name.Name == "e2etest") || helpers[fn.Name] {
					found = true
				}
			}
			return !found
		})
		return found
	}
	helpers := map[string]bool{}
	for changed := true; changed; {
		changed = false
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if ok && fd.Recv == nil && fd.Body != nil && !helpers[fd.Name.Name] && !strings.HasPrefix(fd.Name.Name, "Test") && callsRequire(fd.Body, helpers) {
				helpers[fd.Name.Name], changed = true, true
			}
		}
	}
	var tests []string
	for _, d := range f.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil && fd.Body != nil && strings.HasPrefix(fd.Name.Name, "Test") && callsRequire(fd.Body, helpers) {
			tests = append(tests, fd.Name.Name)
		}
	}
	return tests
}

// TestE2ETierRunsEveryRequire: a test outside internal/e2e that calls
// e2etest.Require runs only when scripts/test.sh names it in an e2e-tagged
// `go test` (the multi-process list e2e_tests, the bench smoke step); a new
// one missing from the list would be skipped everywhere without a word.
func TestE2ETierRunsEveryRequire(t *testing.T) {
	script, err := os.ReadFile(filepath.Join(repoRoot, "scripts", "test.sh"))
	if err != nil {
		t.Fatal(err)
	}
	runs, err := e2eRuns(string(script))
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) == 0 {
		t.Fatal("scripts/test.sh has no go test command with the e2e tag")
	}
	fset := token.NewFileSet()
	found := 0
	err = fs.WalkDir(os.DirFS(repoRoot), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if skipDir(d.Name()) || p == "internal/e2e" {
				return fs.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, filepath.Join(repoRoot, filepath.FromSlash(p)), nil, 0)
		if err != nil {
			return fmt.Errorf("parse %s: %w", p, err)
		}
		for _, test := range requireCallers(f) {
			found++
			if !covers(runs, path.Dir(p), test) {
				t.Errorf("%s: %s calls e2etest.Require, but no e2e-tagged go test in scripts/test.sh runs it: add it to e2e_tests (and its package to that step's list)", p, test)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if found == 0 {
		t.Fatal("found no test calling e2etest.Require outside internal/e2e; the scan is broken")
	}
}

// TestE2ETierGuardCatches: the guard reads a -run list through its shell
// variable and finds a Require call made through a helper.
func TestE2ETierGuardCatches(t *testing.T) {
	runs, err := e2eRuns("list='^(TestA|TestB)$'\n" +
		"go test -race -tags e2e -count=1 -run \"$list\" ./internal/x ./internal/y ||\n" +
		"go test -tags e2e,postgres -run '^TestC$' ./internal/z\n" +
		"go test -race -count=1 ./...\n" +
		"go test -tags e2e,browser ./internal/w\n")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		dir, test string
		want      bool
	}{
		{"internal/x", "TestA", true}, {"internal/y", "TestB", true}, {"internal/x", "TestAB", false},
		{"internal/z", "TestC", true}, {"internal/z", "TestA", false}, {"internal/v", "TestA", false},
		{"internal/w", "TestAnything", true},
	} {
		if got := covers(runs, c.dir, c.test); got != c.want {
			t.Errorf("covers(%s, %s) = %v, want %v", c.dir, c.test, got, c.want)
		}
	}
	src := `package p
import "x/e2etest"
func spawn(t T) { e2etest.Require(t) }
func TestDirect(t T) { e2etest.Require(t) }
func TestViaHelper(t T) { spawn(t) }
func TestUnit(t T) {}
`
	f, err := parser.ParseFile(token.NewFileSet(), "p_test.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := requireCallers(f); !slices.Equal(got, []string{"TestDirect", "TestViaHelper"}) {
		t.Fatalf("requireCallers = %v", got)
	}
	if _, err := e2eRuns("go test -tags e2e -run \"$missing\" ./x\n"); err == nil {
		t.Fatal("an unknown -run variable was accepted")
	}
}
