// Package stdiogate builds stdiogate, a test program that sits between the
// runtime and a provider program spoken to over stdio (codex app-server,
// claude-agent-acp) and can hold one request line: the runtime wrote it,
// the provider never receives it. A fault test uses it to kill the runtime
// while a dispatch is in flight but has certainly not reached the provider.
//
// Usage: stdiogate PROGRAM [ARGS...]. Everything is passed through, except
// that the first line from the runtime containing $STDIOGATE_HOLD (when
// set) is held forever; $STDIOGATE_HELD (a path) is created when that
// happens. The program runs in stdiogate's process group and is stopped
// when stdiogate dies.
package stdiogate

import (
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// Build compiles stdiogate into dir and returns its path.
func Build(tb testing.TB, dir string) string {
	tb.Helper()
	out, err := BuildTo(dir)
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

// BuildTo compiles stdiogate into dir and returns its path: Build for a
// caller that builds it once for several tests.
func BuildTo(dir string) (string, error) {
	_, self, _, ok := runtime.Caller(0)
	if !ok {
		return "", errors.New("stdiogate: cannot locate the package source")
	}
	out := filepath.Join(dir, "stdiogate")
	cmd := exec.Command("go", "build", "-o", out, ".")
	cmd.Dir = filepath.Join(filepath.Dir(self), "cmd", "stdiogate")
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build stdiogate: %w\n%s", err, b)
	}
	return out, nil
}
