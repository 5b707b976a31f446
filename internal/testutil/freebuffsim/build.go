package freebuffsim

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// BuildProgram compiles the program in cmd/<name> of this package into
// dir/<name> with `go build` and returns the executable's path.
func BuildProgram(dir, name string) (string, error) {
	_, self, _, ok := runtime.Caller(0)
	if !ok {
		return "", fmt.Errorf("freebuffsim: cannot locate the package source")
	}
	src := filepath.Join(filepath.Dir(self), "cmd", name)
	out := filepath.Join(dir, name)
	cmd := exec.Command("go", "build", "-o", out, ".")
	cmd.Dir = src
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build %s: %v\n%s", name, err, b)
	}
	return out, nil
}

// Build is BuildProgram for a test: it fails the test on error.
func Build(t testing.TB, dir, name string) string {
	t.Helper()
	p, err := BuildProgram(dir, name)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
