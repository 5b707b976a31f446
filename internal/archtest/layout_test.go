package archtest

import (
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// layoutNames reads the paths README.md's Layout section names: the code
// block after "## Layout", where each line that does not start with a space
// names one or more comma-separated paths before a gap of two spaces.
func layoutNames(readme string) ([]string, bool) {
	_, after, ok := strings.Cut(readme, "\n## Layout\n")
	if !ok {
		return nil, false
	}
	_, block, ok := strings.Cut(after, "\n```\n")
	if !ok {
		return nil, false
	}
	block, _, ok = strings.Cut(block, "\n```")
	if !ok {
		return nil, false
	}
	var names []string
	for _, line := range strings.Split(block, "\n") {
		if line == "" || line[0] == ' ' {
			continue
		}
		head, _, _ := strings.Cut(line, "  ")
		for _, n := range strings.Split(head, ",") {
			if n = strings.TrimSuffix(strings.TrimSpace(n), "/"); n != "" {
				names = append(names, n)
			}
		}
	}
	return names, true
}

// goInternal matches a Go internal directory below a package
// (internal/store/internal/ddl): private to that package, not named.
var goInternal = regexp.MustCompile(`^internal/.+/internal(/|$)`)

// layoutRequired is what the Layout must name: every top-level directory
// (but .git and the provider cache), every package directory under cmd/, and
// every package directory under internal/ down to internal/<a>/<b>, with
// each directory that holds those.
func layoutRequired(t *testing.T, tr *tree) []string {
	t.Helper()
	entries, err := os.ReadDir(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	for _, e := range entries {
		if e.IsDir() && e.Name() != ".git" && e.Name() != ".cache" {
			want[e.Name()] = true
		}
	}
	for _, d := range tr.dirs() {
		parts := strings.Split(d, "/")
		switch {
		case parts[0] == "cmd" && len(parts) == 2:
			want[d] = true
		case parts[0] == "internal" && !goInternal.MatchString(d):
			for n := 2; n <= len(parts) && n <= 3; n++ {
				want[path.Join(parts[:n]...)] = true
			}
		}
	}
	out := make([]string, 0, len(want))
	for d := range want {
		out = append(out, d)
	}
	sort.Strings(out)
	return out
}

// TestReadmeLayoutIsComplete fails when a directory the Layout must name is
// missing from it, or when it names a path that does not exist.
func TestReadmeLayoutIsComplete(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	names, ok := layoutNames(string(raw))
	if !ok {
		t.Fatal("README.md has no \"## Layout\" section with a ``` block")
	}
	named := map[string]bool{}
	for _, n := range names {
		named[n] = true
		if _, err := os.Stat(filepath.Join(repoRoot, filepath.FromSlash(n))); err != nil {
			t.Errorf("README.md Layout names %s, which does not exist", n)
		}
	}
	for _, d := range layoutRequired(t, loadTree(t)) {
		if !named[d] {
			t.Errorf("README.md Layout does not name %s: add one line for it", d)
		}
	}
}

func TestLayoutNames(t *testing.T) {
	readme := "intro\n\n## Layout\n\ntext\n\n```\n" +
		"spec/          YAML\n" +
		"gen/, cmd/x    generator: a, b\n" +
		"               a continuation, not/a/path\n" +
		"internal/app\n" +
		"```\n\n## Next\n"
	got, ok := layoutNames(readme)
	want := []string{"spec", "gen", "cmd/x", "internal/app"}
	if !ok || strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("layoutNames = %q, %v; want %q", got, ok, want)
	}
	if _, ok := layoutNames("# no layout here\n"); ok {
		t.Error("layoutNames found a Layout in a README without one")
	}
}
