package codex_test

import (
	"os"
	"testing"

	"github.com/agent-interop/runtime/internal/providers/codex"
	"github.com/agent-interop/runtime/internal/testutil/leakcheck"
)

// TestMain lets the test binary play two other programs: the simulated
// app-server (CODEX_SIM_APP_SERVER=1) and a runtime process that is killed
// mid-send by the no-replay fault test (FAULT_CHILD_DB set).
func TestMain(m *testing.M) {
	switch {
	case os.Getenv("CODEX_SIM_APP_SERVER") == "1":
		codex.RunSim(os.Stdin, os.Stdout, os.Getenv("CODEX_SIM_STATE"))
		os.Exit(0)
	case os.Getenv(childDBEnv) != "":
		os.Exit(runRuntimeChild())
	}
	os.Exit(leakcheck.Main(m))
}
