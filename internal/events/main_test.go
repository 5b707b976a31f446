package events

import (
	"os"
	"testing"

	"github.com/agent-interop/runtime/internal/testutil/pgtest"
)

// TestMain stops the PostgreSQL cluster the dialect tests started.
func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }
