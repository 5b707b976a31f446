package freebuff

import (
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/agent-interop/runtime/internal/testutil/freebuffsim"
	"github.com/agent-interop/runtime/internal/testutil/leakcheck"
)

// The simulated programs are built once per test run, on first use, into a
// directory removed after the run.
var (
	binDir   string
	binOnce  = map[string]*sync.Once{"fakefreebuff": {}, "fakedesktop": {}}
	binPath  = map[string]string{}
	binErr   = map[string]error{}
	binMutex sync.Mutex
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "freebuff-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir = dir
	os.Exit(leakcheck.Main(m, func() { _ = os.RemoveAll(dir) }))
}

// program returns the path of a simulated program, building it on first use.
func program(t *testing.T, name string) string {
	t.Helper()
	binOnce[name].Do(func() {
		p, err := freebuffsim.BuildProgram(binDir, name)
		binMutex.Lock()
		binPath[name], binErr[name] = p, err
		binMutex.Unlock()
	})
	binMutex.Lock()
	defer binMutex.Unlock()
	if binErr[name] != nil {
		t.Fatal(binErr[name])
	}
	return binPath[name]
}
