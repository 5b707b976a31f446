//go:build e2e

package archtest

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestNoReflectMethodInTheBinary links interop-runtime as the README builds
// it and fails when the linker sees a reachable call that looks a method up
// by reflection (reflect.Type.Method, MethodByName: a <ReflectMethod>
// symbol in -dumpdep's output). One such call anywhere makes the linker
// keep every exported method of every type in the binary: text/template's
// executor and the field descriptors of ent's schema package did, and the
// binary was 63 MB instead of 53 MB, with more of it touched at every
// start (ent/schema/rules.go, internal/desk/doc.go, docs/benchmarks.md).
// It builds the binary, so it runs in the e2e tier, not in go test ./....
func TestNoReflectMethodInTheBinary(t *testing.T) {
	cmd := exec.Command("go", "build", "-ldflags=-dumpdep", "-o", filepath.Join(t.TempDir(), "interop-runtime"), "./cmd/interop-runtime")
	cmd.Dir = repoRoot
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go build -ldflags=-dumpdep ./cmd/interop-runtime: %v\n%s", err, tail(out))
	}
	var found []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		from, to, ok := strings.Cut(sc.Text(), " -> ")
		if !ok {
			continue
		}
		if strings.Contains(to, "<ReflectMethod>") && len(found) < 20 {
			found = append(found, from+" -> "+to)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("read the linker's dependency dump: %v", err)
	}
	if len(found) > 0 {
		t.Errorf("the runtime binary reaches a method lookup by reflection, so the linker keeps every exported method of every type (a 20%% larger binary, more pages touched at start-up); remove the call or move it out of the binary (go build -ldflags=-dumpdep ./cmd/interop-runtime 2>&1 | grep ReflectMethod):\n%s", strings.Join(found, "\n"))
	}
}

// tail is the end of a command's output, for an error message.
func tail(out []byte) string {
	if len(out) > 4000 {
		out = out[len(out)-4000:]
	}
	return string(out)
}
