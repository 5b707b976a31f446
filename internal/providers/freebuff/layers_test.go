package freebuff

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"testing"
)

// TestImportArrowsPointOneWay: the service imports its backends and their
// shared core, never the other way round, and neither backend imports the
// other.
func TestImportArrowsPointOneWay(t *testing.T) {
	const pkg = "github.com/agent-interop/runtime/internal/providers/freebuff"
	for _, tc := range []struct {
		dir       string
		forbidden []string
	}{
		{"core", []string{pkg, pkg + "/desktop", pkg + "/cli"}},
		{"desktop", []string{pkg, pkg + "/cli"}},
		{"cli", []string{pkg, pkg + "/desktop"}},
	} {
		files, err := filepath.Glob(filepath.Join(tc.dir, "*.go"))
		if err != nil || len(files) == 0 {
			t.Fatalf("%s: no Go files (%v)", tc.dir, err)
		}
		for _, f := range files {
			af, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			for _, imp := range af.Imports {
				p, _ := strconv.Unquote(imp.Path.Value)
				for _, bad := range tc.forbidden {
					if p == bad {
						t.Errorf("%s imports %s", f, p)
					}
				}
			}
		}
	}
}
