package interrupt

import (
	"os"
	"testing"

	"github.com/agent-interop/runtime/internal/testutil/leakcheck"
)

// TestMain fails the package when a goroutine outlives its tests.
func TestMain(m *testing.M) { os.Exit(leakcheck.Main(m)) }
