package archtest

import (
	"bytes"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func readDoc(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestArchitectureNamesEveryLayer: ARCHITECTURE.md's layer table has a row
// for each layer of layers_test.go and names each of its packages (by path
// or by last element), so a layer added to the test is documented too.
func TestArchitectureNamesEveryLayer(t *testing.T) {
	doc := readDoc(t, "ARCHITECTURE.md")
	for _, l := range layers {
		if !strings.HasPrefix(l.name, "adapter ") && !strings.Contains(doc, "\n| "+l.name+" |") {
			t.Errorf("ARCHITECTURE.md has no row for layer %q", l.name)
		}
		for _, d := range l.dirs {
			full := strings.TrimSuffix(d, "/...")
			if !strings.Contains(doc, "`"+d+"`") && !strings.Contains(doc, "`"+full+"`") && !strings.Contains(doc, "`"+path.Base(full)+"`") {
				t.Errorf("ARCHITECTURE.md does not name %s (layer %s)", d, l.name)
			}
		}
	}
}

var updateFlag = regexp.MustCompile(`flag\.Bool\("update"`)

// TestContributingListsEveryUpdateFlag: every test package with an -update
// flag appears in CONTRIBUTING.md as `go test ./<dir> ... -update`.
func TestContributingListsEveryUpdateFlag(t *testing.T) {
	doc := readDoc(t, "CONTRIBUTING.md")
	found := 0
	err := fs.WalkDir(os.DirFS(repoRoot), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if skipDir(d.Name()) {
				return fs.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(filepath.Join(repoRoot, filepath.FromSlash(p)))
		if err != nil {
			return err
		}
		if !updateFlag.Match(b) || bytes.Contains(b, []byte("package archtest")) {
			return nil
		}
		found++
		cmd := regexp.MustCompile("`go test \\./" + regexp.QuoteMeta(path.Dir(p)) + " [^`]*-update`")
		if !cmd.MatchString(doc) {
			t.Errorf("%s has an -update flag; CONTRIBUTING.md's golden table has no `go test ./%s ... -update`", p, path.Dir(p))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if found == 0 {
		t.Fatal("found no -update flag at all; the scan is broken")
	}
}
