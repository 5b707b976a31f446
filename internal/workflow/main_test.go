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

// envHelperReady names a file "ignore-term" creates once SIGTERM is
// ignored.
const envHelperReady = "WORKFLOW_TEST_HELPER_READY"

func TestMain(m *testing.M) {
	switch os.Getenv(envHelper) {
	case "ignore-term":
		signal.Ignore(syscall.SIGTERM)
		fmt.Println("ready")
		if f := os.Getenv(envHelperReady); f != "" {
			_ = os.WriteFile(f, nil, 0o600)
		}
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
