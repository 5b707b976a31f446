package archtest

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// runtimeForbidden are modules the runtime binary must not link: tiktoken-go
// (its four vocabularies, a 200k-entry map built on first use; 12 MB of
// binary) and regexp2 (its split pattern's engine, whose package init runs
// at every start). internal/tokens counts o200k tokens without them, over a
// generated table; they stay in go.mod for the generator and the tests.
var runtimeForbidden = []string{"github.com/tiktoken-go/", "github.com/dlclark/regexp2"}

// TestRuntimeLinksNoTokenizerModule lists cmd/interop-runtime's packages,
// transitively and third-party ones included, for each system it is built
// for, and fails on any package of runtimeForbidden.
func TestRuntimeLinksNoTokenizerModule(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go tool not on PATH")
	}
	for _, goos := range []string{"linux", "darwin", "windows"} {
		cmd := exec.Command(goTool, "list", "-deps", "./cmd/interop-runtime")
		cmd.Dir = repoRoot
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+goos)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("GOOS=%s go list -deps ./cmd/interop-runtime: %v", goos, err)
		}
		deps := strings.Fields(string(out))
		if len(deps) < 10 {
			t.Fatalf("GOOS=%s: cmd/interop-runtime has %d dependencies; the list was not read", goos, len(deps))
		}
		if bad := forbiddenDeps(deps); len(bad) > 0 {
			t.Errorf("GOOS=%s: cmd/interop-runtime links %s; count tokens with internal/tokens (go list -deps ./cmd/interop-runtime shows the path)", goos, strings.Join(bad, ", "))
		}
	}
}

// forbiddenDeps returns the packages of deps under runtimeForbidden.
func forbiddenDeps(deps []string) []string {
	var bad []string
	for _, d := range deps {
		for _, f := range runtimeForbidden {
			if strings.HasPrefix(d, f) {
				bad = append(bad, d)
			}
		}
	}
	return bad
}

// TestForbiddenDepsAreCaught: the guard names the tokenizer's packages and
// passes the runtime's own.
func TestForbiddenDepsAreCaught(t *testing.T) {
	deps := []string{"fmt", "github.com/agent-interop/runtime/internal/tokens", "github.com/tiktoken-go/tokenizer",
		"github.com/tiktoken-go/tokenizer/codec", "github.com/dlclark/regexp2/v2", "github.com/dlclark/regexp2/v2/syntax"}
	got := forbiddenDeps(deps)
	if strings.Join(got, " ") != strings.Join(deps[2:], " ") {
		t.Errorf("forbiddenDeps = %v, want %v", got, deps[2:])
	}
}
