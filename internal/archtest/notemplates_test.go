package archtest

import (
	"fmt"
	"sort"
	"strings"
	"testing"
)

// templateFree are directories (with everything below them) whose non-test
// files must not import html/template or text/template. text/template's
// executor calls reflect's MethodByName with a name known only at run
// time, and that one call makes the Go linker keep every exported method
// of every reachable type (no method dead-code elimination): the runtime
// binary grew by megabytes and its resident memory with it. The desk
// renders with internal/desk/markup instead.
var templateFree = []string{"internal/desk", "cmd/interop-runtime"}

var templatePackages = map[string]bool{"html/template": true, "text/template": true}

// TestNoTemplatesInTheBinary fails when the desk (or the binary's main
// package) imports a template package again.
func TestNoTemplatesInTheBinary(t *testing.T) {
	for _, b := range templateImports(loadTree(t)) {
		t.Error(b)
	}
}

// TestTemplateImportsAreCaught runs the check on a made-up tree.
func TestTemplateImportsAreCaught(t *testing.T) {
	tr := &tree{module: "example.com/m", imports: map[string][]string{
		"internal/desk":        {"html/template", "net/url"},
		"internal/desk/markup": {"text/template"},
		"internal/deskother":   {"html/template"}, // not below internal/desk
		"internal/doctor":      {"text/template"},
	}}
	if got := templateImports(tr); len(got) != 2 {
		t.Errorf("got %d findings, want 2: %q", len(got), got)
	}
}

func templateImports(tr *tree) []string {
	var bad []string
	for _, dir := range tr.dirs() {
		if !underAny(dir, templateFree) {
			continue
		}
		for _, ip := range tr.imports[dir] {
			if templatePackages[ip] {
				bad = append(bad, fmt.Sprintf("%s imports %s: text/template's executor calls reflect's MethodByName with a "+
					"run-time name, which turns off the linker's method dead-code elimination for the whole binary "+
					"(megabytes of code and resident memory); write HTML with internal/desk/markup", dir, ip))
			}
		}
	}
	sort.Strings(bad)
	return bad
}

func underAny(dir string, roots []string) bool {
	for _, r := range roots {
		if dir == r || strings.HasPrefix(dir, r+"/") {
			return true
		}
	}
	return false
}
