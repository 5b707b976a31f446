package pgtest

import (
	"os"
	"testing"
)

// TestMain stops the cluster the tests share and fails the package when a
// goroutine outlives its tests.
func TestMain(m *testing.M) { os.Exit(Main(m)) }
