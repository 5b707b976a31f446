package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/agent-interop/runtime/gen/spec"
)

// envFamilies are the prefixes of the variables the runtime owns or reads
// for its providers. A Go string literal that is exactly such a name, in
// product code, is a variable the runtime reads.
var envFamilies = regexp.MustCompile(`^(INTEROP|AGENT_INTEROP|OPENCODE|CODEX|CLAUDE|CURSOR|FREEBUFF)_[A-Z0-9_]+$`)

// envLiteral is any string literal shaped like an environment variable.
var envLiteral = regexp.MustCompile(`^[A-Z][A-Z0-9]*(_[A-Z0-9]+)*$`)

// literals maps each env-shaped string literal of the repository's Go files
// to the package directories that hold it, split by product code and
// test code (test support packages and _test.go files).
type literals struct {
	product, test map[string][]string
}

func scanLiterals(t *testing.T) literals {
	t.Helper()
	lits := literals{product: map[string][]string{}, test: map[string][]string{}}
	fset := token.NewFileSet()
	err := fs.WalkDir(os.DirFS(repoRoot), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if skipDir(d.Name()) || p == "ent" {
				return fs.SkipDir // ent/ is generated and reads no environment
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, filepath.Join(repoRoot, filepath.FromSlash(p)), nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		dir := path.Dir(p)
		l, _ := layerOf(dir)
		into := lits.product
		if strings.HasSuffix(p, "_test.go") || l == nil || l.name == "test support" || l.name == "generator" {
			into = lits.test
		}
		ast.Inspect(f, func(n ast.Node) bool {
			bl, ok := n.(*ast.BasicLit)
			if !ok || bl.Kind != token.STRING {
				return true
			}
			if s, err := strconv.Unquote(bl.Value); err == nil && envLiteral.MatchString(s) {
				into[s] = append(into[s], dir)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return lits
}

func loadEnv(t *testing.T) []*spec.EnvVar {
	t.Helper()
	s, err := spec.Load(os.DirFS(repoRoot))
	if err != nil {
		t.Fatalf("load the spec: %v", err)
	}
	if s.Env == nil {
		t.Fatalf("the spec has no %s", spec.EnvPath)
	}
	return s.Env.Variables
}

// TestEnvironmentIsDeclared: every variable of the runtime's families that
// product code names is declared in spec/env.yaml with scope runtime, and
// every INTEROP_* variable test code names is declared (runtime or test).
func TestEnvironmentIsDeclared(t *testing.T) {
	declared := map[string]*spec.EnvVar{}
	for _, v := range loadEnv(t) {
		for _, n := range append([]string{v.Name}, v.Aliases...) {
			declared[n] = v
		}
	}
	lits := scanLiterals(t)
	for _, name := range sortedKeys(lits.product) {
		if !envFamilies.MatchString(name) {
			continue
		}
		switch v := declared[name]; {
		case v == nil:
			t.Errorf("%s (read in %s) is not declared in %s", name, strings.Join(uniq(lits.product[name]), ", "), spec.EnvPath)
		case v.Scope != "runtime":
			t.Errorf("%s is read by product code (%s) but declared with scope %s", name, strings.Join(uniq(lits.product[name]), ", "), v.Scope)
		}
	}
	for _, name := range sortedKeys(lits.test) {
		if strings.HasPrefix(name, "INTEROP_") && declared[name] == nil && !testInternal[name] {
			t.Errorf("%s (read in %s) is not declared in %s (scope test), nor a test-internal marker of archtest", name, strings.Join(uniq(lits.test[name]), ", "), spec.EnvPath)
		}
	}
}

// testInternal are variables a test sets for a child copy of its own test
// binary (re-exec markers): nothing a person sets.
var testInternal = map[string]bool{
	"INTEROP_BENCH_FAKE_SERVER": true,
	// The file a fake server in mode store appends to (internal/bench).
	"INTEROP_BENCH_FAKE_STORE_LOG": true,
	"INTEROP_FAULT_SCALE":          true,
	"INTEROP_STORE_TEST_WRITER":    true,
}

// TestDeclaredEnvironmentIsRead: every variable in spec/env.yaml (and each
// alias) is named by the code: a runtime one by product code, a test one by
// test code or scripts/.
func TestDeclaredEnvironmentIsRead(t *testing.T) {
	lits := scanLiterals(t)
	scripts, err := filepath.Glob(filepath.Join(repoRoot, "scripts", "*.sh"))
	if err != nil {
		t.Fatal(err)
	}
	var shell strings.Builder
	for _, s := range scripts {
		b, err := os.ReadFile(s)
		if err != nil {
			t.Fatal(err)
		}
		shell.Write(b)
	}
	for _, v := range loadEnv(t) {
		for _, n := range append([]string{v.Name}, v.Aliases...) {
			switch v.Scope {
			case "runtime":
				if len(lits.product[n]) == 0 {
					t.Errorf("%s declares %s (scope runtime), which no product code reads", spec.EnvPath, n)
				}
			case "test":
				if len(lits.test[n]) == 0 && len(lits.product[n]) == 0 && !regexp.MustCompile(`\b`+n+`\b`).MatchString(shell.String()) {
					t.Errorf("%s declares %s (scope test), which no test code or script reads", spec.EnvPath, n)
				}
			}
		}
	}
}

func sortedKeys(m map[string][]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func uniq(xs []string) []string {
	xs = slices.Clone(xs)
	slices.Sort(xs)
	return slices.Compact(xs)
}
