package workflow

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"testing"
	"time"

	"github.com/agent-interop/runtime/internal/testutil/pgtest"
)

// envHelper turns the test binary into a small helper program for the
// verification tests (no shell needed): "ignore-term" ignores SIGTERM and
// sleeps; "env" prints its environment.
const envHelper = "WORKFLOW_TEST_HELPER"

func TestMain(m *testing.M) {
	switch os.Getenv(envHelper) {
	case "ignore-term":
		signal.Ignore(syscall.SIGTERM)
		fmt.Println("ready")
		time.Sleep(time.Minute)
		os.Exit(0)
	case "env":
		for _, kv := range os.Environ() {
			fmt.Println(kv)
		}
		os.Exit(0)
	}
	os.Exit(pgtest.Main(m))
}
