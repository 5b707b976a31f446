package invariants

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/agent-interop/runtime/catalogs"
	"github.com/agent-interop/runtime/catalogs/limits"
	"github.com/agent-interop/runtime/internal/catalogtest"
)

// module is the import path prefix of the repository's packages.
const module = "github.com/agent-interop/runtime/"

// TestEveryArgumentIsBounded checks the schema every decoder enforces: each
// string (unless an enum or const) and each array of every tool and alias
// has a maxLength / maxItems, and catalogs/limits lists exactly the bounds
// of the modern tools' exact schemas.
func TestEveryArgumentIsBounded(t *testing.T) {
	table := map[string]int{}
	for _, b := range limits.Bounds {
		table[b.Tool+" "+b.Path] = b.Max
	}
	seen := 0
	for _, e := range catalogs.All() {
		var s catalogtest.Schema
		if err := json.Unmarshal([]byte(e.ExactSchema), &s); err != nil {
			t.Fatal(err)
		}
		walkExact(s, "", func(path string, s catalogtest.Schema) {
			var key string
			switch catalogtest.TypeName(s) {
			case "string":
				if _, ok := s["enum"]; ok {
					return
				}
				if _, ok := s["const"]; ok {
					return
				}
				key = "maxLength"
			case "array":
				key = "maxItems"
			default:
				return
			}
			max, ok := s[key].(float64)
			if !ok {
				t.Errorf("%s %s: a %s without %s", e.Name, path, catalogtest.TypeName(s), key)
				return
			}
			if e.Legacy {
				return
			}
			seen++
			if got, ok := table[e.Name+" "+path]; !ok || got != int(max) {
				t.Errorf("%s %s: %s %v, catalogs/limits says %v (listed %v)", e.Name, path, key, max, got, ok)
			}
		})
	}
	if seen != len(limits.Bounds) {
		t.Errorf("the exact schemas have %d bounds, catalogs/limits %d", seen, len(limits.Bounds))
	}
}

// walkExact visits every schema below s with the bound table's path
// notation ("a.b", "a[]", the string branch of a oneOf at the property's
// own path).
func walkExact(s catalogtest.Schema, path string, visit func(string, catalogtest.Schema)) {
	if alts, ok := s["oneOf"].([]any); ok {
		for _, a := range alts {
			walkExact(a.(catalogtest.Schema), path, visit)
		}
		return
	}
	visit(path, s)
	switch catalogtest.TypeName(s) {
	case "array":
		walkExact(s["items"].(catalogtest.Schema), path+"[]", visit)
	case "object":
		for _, k := range catalogtest.PropNames(s) {
			p := k
			if path != "" {
				p = path + "." + k
			}
			walkExact(catalogtest.Props(s)[k].(catalogtest.Schema), p, visit)
		}
	}
}

// TestServedSchemasOnlyLeaveBoundsOut compares each served inputSchema with
// the exact schema the decoder enforces: they are the same document except
// for the maxLength/maxItems of the spec-wide kinds, the range of the
// shared page-size fragment (which the served one states in its description) and the
// additionalProperties:false of nested objects, all of which the served one
// leaves out (so it accepts everything the exact one accepts), and every
// bound the served schema does state equals the exact one.
func TestServedSchemasOnlyLeaveBoundsOut(t *testing.T) {
	kinds := map[string]bool{}
	for _, b := range limits.Bounds {
		if b.Kind != "" {
			kinds[b.Tool+" "+b.Path] = true
		}
	}
	for _, e := range catalogs.All() {
		var served, exact catalogtest.Schema
		if err := json.Unmarshal([]byte(e.InputSchema), &served); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(e.ExactSchema), &exact); err != nil {
			t.Fatal(err)
		}
		stripped := 0
		walkExact(exact, "", func(path string, s catalogtest.Schema) {
			if path != "" && catalogtest.TypeName(s) == "object" {
				delete(s, "additionalProperties")
			}
			// The shared page-size fragment is the limit with a description.
			if d, ok := s["description"].(string); path == "limit" && ok {
				max, _ := s["maximum"].(float64)
				if !strings.Contains(d, strconv.Itoa(int(max))) {
					t.Errorf("%s: limit's description %q does not state its maximum %v", e.Name, d, max)
				}
				delete(s, "minimum")
				delete(s, "maximum")
				stripped++
			}
			for _, k := range []string{"maxLength", "maxItems"} {
				if _, ok := s[k]; ok && (e.Legacy || kinds[e.Name+" "+path]) {
					if e.Legacy && inServed(served, path, k) {
						continue
					}
					delete(s, k)
					stripped++
				}
			}
		})
		a, _ := json.Marshal(served)
		b, _ := json.Marshal(exact)
		if string(a) != string(b) {
			t.Errorf("%s: the served schema differs from the exact one beyond the implied bounds:\nserved %s\nexact  %s", e.Name, a, b)
		}
		if !e.Legacy && stripped == 0 && len(e.InputSchema) != len(e.ExactSchema) {
			t.Errorf("%s: schemas differ but no implied bound was found", e.Name)
		}
	}
}

// inServed reports whether the served schema states keyword k at path.
func inServed(served catalogtest.Schema, path, k string) bool {
	found := false
	walkExact(served, "", func(p string, s catalogtest.Schema) {
		if p == path {
			if _, ok := s[k]; ok {
				found = true
			}
		}
	})
	return found
}

// TestServicesTakeTheirLimitsFromTheSpec scans the packages behind the
// tools (every package handlers imports, and every package that imports
// catalogs/limits) for a size check (len or utf8.RuneCountInString held
// to an upper bound) whose bound is a number of the package's own rather
// than a catalogs/limits (or ent/schema) constant. Such a check enforces a
// limit the spec does not declare, or declares twice. The bounds listed
// here are not argument limits: what the runtime builds, reads from a
// provider or buffers.
func TestServicesTakeTheirLimitsFromTheSpec(t *testing.T) {
	notArguments := map[string]string{
		"internal/workflow MaxEmbeddedEvidenceIDs":             "answer shape: evidence IDs embedded in a work",
		"internal/workflow maxEvidenceRaw":                     "evidence data the runtime records (command output, diffs)",
		"internal/claims scanCap":                              "overlap scan cap",
		"internal/providers/freebuff/desktop maxResponseBytes": "Freebuff Desktop response size",
		"internal/providers/freebuff/cli maxHistoryBytes":      "Freebuff CLI history file size",
		"internal/providers/freebuff/desktop maxThreadEvents":  "progress events buffered per thread",
		"internal/providers/freebuff ThreadMessages":           "answer shape: the newest messages get_thread carries",
		"internal/security MaxListEntries":                     "directory entries listed",
		"internal/delivery maxTotalledHandoffs":                "handoffs whose sessions a work item's usage total counts",
		"internal/delivery maxMarkBytes":                       "owner mark file size read",
		"internal/delivery maxMarkID":                          "owner id length that names a mark file",
		"internal/security MaxFileBytes":                       "project file size read",
		"internal/importstate maxFileBytes":                    "0.3.x state file size",
		"internal/importstate 80":                              "width of a value quoted in an import report",
		"internal/security 2":                                  "header bytes that recognise an X authority cookie",
		"internal/store/internal/stmtcache MaxQueryLen":        "SQL text kept as a prepared statement",
	}
	root := filepath.Join("..", "..", "..")
	dirs := servicePackages(t, root)
	if len(dirs) < 5 {
		t.Fatalf("found only %d service packages: %v", len(dirs), dirs)
	}
	used := map[string]bool{}
	for _, dir := range dirs {
		for _, c := range ownSizeBounds(t, root, dir) {
			key := dir + " " + c.bound
			if _, ok := notArguments[key]; ok {
				used[key] = true
				continue
			}
			t.Errorf("%s: %s is compared with %s (%s), not a catalogs/limits constant: declare the bound in spec/ or, if it bounds no argument, list it here", c.where, c.size, c.bound, c.value)
		}
	}
	for key := range notArguments {
		if !used[key] {
			t.Errorf("%q is listed as not an argument limit but no longer found; remove it", key)
		}
	}
}

// servicePackages are the repository-relative directories of the packages
// behind the tools.
func servicePackages(t *testing.T, root string) []string {
	t.Helper()
	set := map[string]bool{"handlers": true}
	fset := token.NewFileSet()
	add := func(path string) {
		if rel, ok := strings.CutPrefix(path, module); ok && !strings.HasPrefix(rel, "catalogs") && !strings.HasPrefix(rel, "ent") {
			set[rel] = true
		}
	}
	for _, p := range packageImports(t, fset, filepath.Join(root, "handlers")) {
		add(p)
	}
	// A package handlers imports may keep its backends in its own
	// sub-packages (internal/providers/freebuff/desktop, …/cli): they are
	// behind the tools too.
	for _, dir := range slices.Sorted(maps.Keys(set)) {
		for _, p := range packageImports(t, fset, filepath.Join(root, dir)) {
			if strings.HasPrefix(p, module+dir+"/") {
				add(p)
			}
		}
	}
	err := filepath.WalkDir(filepath.Join(root, "internal"), func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		af, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, imp := range af.Imports {
			if imp.Path.Value == strconv.Quote(module+"catalogs/limits") {
				rel, _ := filepath.Rel(root, filepath.Dir(path))
				set[filepath.ToSlash(rel)] = true
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for d := range set {
		if strings.HasPrefix(d, "internal/testutil") {
			continue
		}
		out = append(out, d)
	}
	sort.Strings(out)
	return out
}

// packageImports returns the import paths of dir's non-test Go files.
func packageImports(t *testing.T, fset *token.FileSet, dir string) []string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	var out []string
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(fset, f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range af.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			out = append(out, p)
		}
	}
	return out
}

type sizeCheck struct{ where, size, bound, value string }

// ownSizeBounds finds size checks in dir's non-test files whose upper bound
// is a number of the package's own.
func ownSizeBounds(t *testing.T, root, dir string) []sizeCheck {
	t.Helper()
	fset := token.NewFileSet()
	names, err := filepath.Glob(filepath.Join(root, dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]*ast.File{}
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files[name] = f
	}
	var out []sizeCheck
	consts := map[string]ast.Expr{}
	for _, f := range files {
		for _, d := range f.Decls {
			if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.CONST {
				for _, sp := range g.Specs {
					vs := sp.(*ast.ValueSpec)
					for i, n := range vs.Names {
						if i < len(vs.Values) {
							consts[n.Name] = vs.Values[i]
						}
					}
				}
			}
		}
	}
	for name, f := range files {
		// Locals holding a size (n := utf8.RuneCountInString(s)) count
		// as the size itself.
		sizes := map[string]bool{}
		ast.Inspect(f, func(n ast.Node) bool {
			if as, ok := n.(*ast.AssignStmt); ok && len(as.Lhs) == len(as.Rhs) {
				for i, r := range as.Rhs {
					if id, ok := as.Lhs[i].(*ast.Ident); ok && isSizeCall(r) {
						sizes[id.Name] = true
					}
				}
			}
			return true
		})
		isSize := func(e ast.Expr) bool {
			if id, ok := e.(*ast.Ident); ok {
				return sizes[id.Name]
			}
			return isSizeCall(e)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			be, ok := n.(*ast.BinaryExpr)
			if !ok {
				return true
			}
			// Upper bounds only: size > b, size <= b, b < size, b >= size.
			var size, bound ast.Expr
			switch be.Op {
			case token.GTR, token.LEQ:
				size, bound = be.X, be.Y
			case token.LSS, token.GEQ:
				size, bound = be.Y, be.X
			default:
				return true
			}
			if !isSize(size) {
				return true
			}
			v, own := ownConstant(bound, consts, 0)
			if !own || v == "0" || v == "1" {
				return true
			}
			label := renderExpr(bound)
			if _, lit := bound.(*ast.BasicLit); lit {
				label = v
			}
			out = append(out, sizeCheck{
				where: filepath.ToSlash(filepath.Join(dir, filepath.Base(name))) + ":" + strconv.Itoa(fset.Position(be.Pos()).Line),
				size:  renderExpr(size), bound: label, value: v,
			})
			return true
		})
	}
	return out
}

func isSizeCall(e ast.Expr) bool {
	c, ok := e.(*ast.CallExpr)
	if !ok {
		return false
	}
	switch f := c.Fun.(type) {
	case *ast.Ident:
		return f.Name == "len"
	case *ast.SelectorExpr:
		return f.Sel.Name == "RuneCountInString" || f.Sel.Name == "RuneCount"
	}
	return false
}

// ownConstant reports whether e is a constant built from the package's own
// numbers (literals and its constants), with its source text. A constant
// that refers to catalogs/limits or ent/schema is derived from the spec; a
// variable, a parameter or another package's constant is not the
// package's own number.
func ownConstant(e ast.Expr, consts map[string]ast.Expr, depth int) (string, bool) {
	if depth > 20 {
		return "", false
	}
	switch x := e.(type) {
	case *ast.BasicLit:
		return x.Value, x.Kind == token.INT
	case *ast.ParenExpr:
		return ownConstant(x.X, consts, depth+1)
	case *ast.Ident:
		v, ok := consts[x.Name]
		if !ok {
			return "", false
		}
		return ownConstant(v, consts, depth+1)
	case *ast.BinaryExpr:
		a, ok1 := ownConstant(x.X, consts, depth+1)
		b, ok2 := ownConstant(x.Y, consts, depth+1)
		return a + " " + x.Op.String() + " " + b, ok1 && ok2
	}
	return "", false
}

func renderExpr(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.Ident:
		return x.Name
	case *ast.BasicLit:
		return x.Value
	case *ast.SelectorExpr:
		return renderExpr(x.X) + "." + x.Sel.Name
	case *ast.CallExpr:
		args := make([]string, len(x.Args))
		for i, a := range x.Args {
			args[i] = renderExpr(a)
		}
		return renderExpr(x.Fun) + "(" + strings.Join(args, ", ") + ")"
	case *ast.ArrayType:
		return "[]" + renderExpr(x.Elt)
	case *ast.ParenExpr:
		return "(" + renderExpr(x.X) + ")"
	case *ast.BinaryExpr:
		return renderExpr(x.X) + " " + x.Op.String() + " " + renderExpr(x.Y)
	}
	return "…"
}

// TestEveryAnswerSchemaCompiles compiles each tool's and alias's answer
// schema with santhosh-tekuri/jsonschema: a modern answer is an object
// (structuredContent must be one), and a legacy alias answers its target's
// shape, a field of it, or a one-element array of it.
func TestEveryAnswerSchemaCompiles(t *testing.T) {
	modern := map[string]catalogtest.Schema{}
	for _, e := range catalogs.All() {
		catalogtest.CompileSchema(t, e.Name+".output", e.OutputSchema)
		var s catalogtest.Schema
		if err := json.Unmarshal([]byte(e.OutputSchema), &s); err != nil {
			t.Fatal(err)
		}
		if !e.Legacy {
			if catalogtest.TypeName(s) != "object" {
				t.Errorf("%s answers a %v, not an object", e.Name, s["type"])
			}
			modern[e.Name] = s
		}
	}
	for _, e := range catalogs.All() {
		if !e.Legacy {
			continue
		}
		target := modern[e.Target]
		var s catalogtest.Schema
		_ = json.Unmarshal([]byte(e.OutputSchema), &s)
		same := func(a, b any) bool { x, _ := json.Marshal(a); y, _ := json.Marshal(b); return string(x) == string(y) }
		if same(s, target) || same(s["items"], target) {
			continue
		}
		found := false
		for _, p := range catalogtest.Props(target) {
			found = found || same(p, s)
		}
		if !found {
			t.Errorf("%s answers neither %s's shape, nor a field of it, nor an array of it", e.Name, e.Target)
		}
	}
}
