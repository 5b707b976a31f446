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
	"sort"
	"strconv"
	"strings"
	"testing"
)

// wallClockFuncs are the package functions that read or wait on the wall
// clock, by import path. Production code reaches time through the injected
// github.com/coder/quartz clock instead, so a test can drive it.
var wallClockFuncs = map[string]map[string]bool{
	"time": {
		"Now": true, "Since": true, "Until": true, "Sleep": true, "After": true,
		"AfterFunc": true, "NewTimer": true, "NewTicker": true, "Tick": true,
	},
	// A context deadline is a wall-clock timer (internal/clockctx arms one
	// on the injected clock instead).
	"context": {
		"WithTimeout": true, "WithDeadline": true,
		"WithTimeoutCause": true, "WithDeadlineCause": true,
	},
}

// wallClockExempt are the directories whose code is not production code:
// test support, the end-to-end and benchmark harnesses, and the generator.
var wallClockExempt = []string{
	"internal/testutil", "internal/e2e", "internal/bench", "internal/catalogtest", "cmd/interopgen",
}

// wallClockUse is one reference to a wall-clock function: a call or a
// function value (time.Now passed as a func is the same clock).
type wallClockUse struct {
	file string // slash-separated, relative to the repository root
	fn   string // the enclosing function: Name, Recv.Name, or "-" at package level
	name string // e.g. "time.Now"
	line int
}

func (u wallClockUse) key() string { return u.file + " " + u.fn + " " + u.name }

// scanWallClock returns every wall-clock reference in the non-test Go files
// of the repository outside wallClockExempt.
func scanWallClock(t *testing.T) []wallClockUse {
	t.Helper()
	var uses []wallClockUse
	fset := token.NewFileSet()
	err := fs.WalkDir(os.DirFS(repoRoot), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if skipDir(d.Name()) {
				return fs.SkipDir
			}
			for _, ex := range wallClockExempt {
				if p == ex {
					return fs.SkipDir
				}
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, filepath.Join(repoRoot, filepath.FromSlash(p)), nil, parser.ParseComments)
		if err != nil {
			return fmt.Errorf("parse %s: %w", p, err)
		}
		if isIgnored(f.Comments) {
			return nil
		}
		uses = append(uses, wallClockIn(fset, p, f)...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return uses
}

// wallClockIn returns the wall-clock references of one parsed file.
func wallClockIn(fset *token.FileSet, name string, f *ast.File) []wallClockUse {
	local := map[string]string{} // the name a file uses for a package → its import path
	for _, imp := range f.Imports {
		ip, err := strconv.Unquote(imp.Path.Value)
		if err != nil || wallClockFuncs[ip] == nil {
			continue
		}
		n := path.Base(ip)
		if imp.Name != nil {
			n = imp.Name.Name
		}
		local[n] = ip
	}
	if len(local) == 0 {
		return nil
	}
	var uses []wallClockUse
	for _, decl := range f.Decls {
		fn := "-"
		if fd, ok := decl.(*ast.FuncDecl); ok {
			fn = fd.Name.Name
			if fd.Recv != nil && len(fd.Recv.List) == 1 {
				fn = recvName(fd.Recv.List[0].Type) + "." + fn
			}
		}
		ast.Inspect(decl, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			id, ok := sel.X.(*ast.Ident)
			if !ok || id.Obj != nil { // id.Obj != nil: a local variable, not a package
				return true
			}
			ip, ok := local[id.Name]
			if !ok || !wallClockFuncs[ip][sel.Sel.Name] {
				return true
			}
			uses = append(uses, wallClockUse{
				file: name, fn: fn, name: path.Base(ip) + "." + sel.Sel.Name,
				line: fset.Position(sel.Pos()).Line,
			})
			return true
		})
	}
	return uses
}

func recvName(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.StarExpr:
		return recvName(x.X)
	case *ast.IndexExpr:
		return recvName(x.X)
	case *ast.IndexListExpr:
		return recvName(x.X)
	case *ast.Ident:
		return x.Name
	}
	return "?"
}

// wallClockAllowFile is the explicit allow-list: one line per permitted
// reference, "<file> <function> <pkg.Func>  # why it must be real time".
const wallClockAllowFile = "wallclock_allow.txt"

// loadWallClockAllow returns how many references each key may have, and
// fails on a line without a reason.
func loadWallClockAllow(t *testing.T) map[string]int {
	t.Helper()
	f, err := os.Open(wallClockAllowFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	allow := map[string]int{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		entry, reason, ok := strings.Cut(line, "#")
		fields := strings.Fields(entry)
		if !ok || strings.TrimSpace(reason) == "" || len(fields) != 3 {
			t.Errorf("%s:%d: want \"<file> <function> <pkg.Func>  # reason\", got %q", wallClockAllowFile, n, line)
			continue
		}
		allow[strings.Join(fields, " ")]++
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return allow
}

// TestOneClock fails on a wall-clock reference in production code that the
// allow-list does not name, and on an allow-list line that names nothing
// (so the list shrinks as code is converted).
func TestOneClock(t *testing.T) {
	uses := scanWallClock(t)
	allow := loadWallClockAllow(t)
	found := map[string][]wallClockUse{}
	for _, u := range uses {
		found[u.key()] = append(found[u.key()], u)
	}
	keys := make([]string, 0, len(found))
	for k := range found {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		us := found[k]
		if len(us) > allow[k] {
			for _, u := range us[allow[k]:] {
				t.Errorf("%s:%d: %s in %s reads the wall clock; use the injected quartz.Clock (internal/clockctx for a context deadline), or name it with a reason in internal/archtest/%s",
					u.file, u.line, u.name, u.fn, wallClockAllowFile)
			}
		}
	}
	for k, n := range allow {
		if len(found[k]) < n {
			t.Errorf("%s allows %d × %q but the code has %d: remove the stale line", wallClockAllowFile, n, k, len(found[k]))
		}
	}
	t.Logf("%d wall-clock references in production code, all allow-listed", len(uses))
}

// TestOneClockCatches checks the scanner sees calls, function values and
// renamed imports, and ignores a local variable that shadows the package.
func TestOneClockCatches(t *testing.T) {
	const src = `package p

import (
	"context"
	stdtime "time"
)

func a() { _ = stdtime.Now(); stdtime.Sleep(1) }

var f = stdtime.Now

func (x *T) b(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, 1)
	defer cancel()
	time := struct{ Now int }{}
	_ = time.Now
}
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, u := range wallClockIn(fset, "p.go", f) {
		got = append(got, u.key())
	}
	want := []string{"p.go a time.Now", "p.go a time.Sleep", "p.go - time.Now", "p.go T.b context.WithTimeout"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("found %q, want %q", got, want)
	}
}
