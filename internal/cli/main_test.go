package cli

import (
	"os"
	"testing"

	"github.com/agent-interop/runtime/internal/testutil/leakcheck"
)

// TestMain fails the package when a goroutine outlives its tests, and
// removes the interop-runtime build the real-client tests shared.
func TestMain(m *testing.M) { os.Exit(leakcheck.Main(m, removeRuntimeBuild)) }
