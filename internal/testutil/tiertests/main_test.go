package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"regexp"
	"slices"
	"testing"
)

// TestTierTests: a test is selected when it reaches the gate directly,
// through a helper, a method, a package-level variable (or what assigns
// it), or a support package that imports the gate; the others are not, and
// the blank identifier links nothing.
func TestTierTests(t *testing.T) {
	const self = "example.com/m/p"
	gated := func(path string) bool { return path == "example.com/m/gate" || path == "example.com/m/support" }
	cases := []struct {
		name  string
		files map[string]string // file name → source; _test.go files hold tests
		want  []string
	}{
		{"direct and through a helper", map[string]string{"a_test.go": `package p
import "example.com/m/gate"
func helper(t T) { gate.Require(t) }
func TestDirect(t T) { gate.Require(t) }
func TestHelper(t T) { helper(t) }
func TestUnit(t T) { other() }
func other() {}
`}, []string{"TestDirect", "TestHelper"}},
		{"a renamed import and a support package", map[string]string{"a_test.go": `package p
import (
	g "example.com/m/gate"
	"example.com/m/support"
)
func TestRenamed(t T) { _ = g.Tier }
func TestSupport(t T) { support.Open(t) }
func TestNot(t T) {}
`}, []string{"TestRenamed", "TestSupport"}},
		{"a method, a variable and its assignment", map[string]string{
			"a_test.go": `package p
import "example.com/m/gate"
type fx struct{}
func (fx) open(t T) { gate.Require(t) }
var cases = []func(T){func(t T) { fx{}.open(t) }}
var shared string
func TestMain(m M) { shared = gate.Location() }
func TestMethod(t T) { var f fx; f.open(t) }
func TestTable(t T) { for _, c := range cases { c(t) } }
func TestShared(t T) { use(shared) }
func TestBlank(t T) { _ = 1 }
func init() { _ = gate.Tier }
func use(string) {}
`}, []string{"TestMethod", "TestShared", "TestTable"}},
		{"an external test calls the package under test", map[string]string{
			"p.go":        "package p\nfunc Plain() {}\n",
			"x_test.go":   "package p_test\nimport \"example.com/m/p\"\nfunc TestX(t T) { p.Helper(t) }\nfunc TestY(t T) { p.Plain() }\n",
			"exp_test.go": "package p\nimport \"example.com/m/gate\"\nfunc Helper(t T) { gate.Require(t) }\n",
		}, []string{"TestX"}},
		{"a test in the package's code is no test", map[string]string{
			"p.go": "package p\nimport \"example.com/m/gate\"\nfunc TestLike() { gate.Require(nil) }\n",
		}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fset := token.NewFileSet()
			files := map[string]*ast.File{}
			tests := map[string]bool{}
			for name, src := range c.files {
				f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
				if err != nil {
					t.Fatal(err)
				}
				files[name] = f
				tests[name] = regexp.MustCompile(`_test\.go$`).MatchString(name)
			}
			if got := tierTests(self, files, tests, gated); !slices.Equal(got, c.want) {
				t.Fatalf("tierTests = %v, want %v", got, c.want)
			}
		})
	}
}

// TestGatePackageRunsWhole: the gate's own tests (and a support package's)
// are all the tier's.
func TestGatePackageRunsWhole(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "g_test.go", "package gate\nfunc TestA(t T) {}\nfunc TestMain(m M) {}\nfunc Testing() {}\nfunc Test_B(t T) {}\n", 0)
	if err != nil {
		t.Fatal(err)
	}
	got := tierTests("example.com/m/gate", map[string]*ast.File{"g_test.go": f}, map[string]bool{"g_test.go": true},
		func(p string) bool { return p == "example.com/m/gate" })
	if !slices.Equal(got, []string{"TestA", "Test_B"}) {
		t.Fatalf("tierTests = %v", got)
	}
}

// TestPattern: the -run value matches exactly the named tests, and none
// when there are none.
func TestPattern(t *testing.T) {
	re := regexp.MustCompile(pattern([]string{"TestA", "TestB"}))
	for name, want := range map[string]bool{"TestA": true, "TestB": true, "TestAB": false, "XTestA": false} {
		if re.MatchString(name) != want {
			t.Errorf("%s: match = %v, want %v", name, !want, want)
		}
	}
	if none := regexp.MustCompile(pattern(nil)); none.MatchString("TestA") {
		t.Error("the empty pattern matches a test")
	}
}
