package atinit

import (
	"go/build"
	"slices"
	"testing"
)

// TestImportsNothingToInitialize: the package runs first among the
// initializers only while neither it nor growstack imports a package that
// has to be initialized before it.
func TestImportsNothingToInitialize(t *testing.T) {
	for dir, want := range map[string][]string{
		".":  {"github.com/agent-interop/runtime/internal/growstack"},
		"..": nil,
	} {
		p, err := build.ImportDir(dir, 0)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(p.Imports, want) {
			t.Errorf("%s imports %v, want %v: an import initialized first would run its initializers before the stack grows", p.ImportPath, p.Imports, want)
		}
	}
}
