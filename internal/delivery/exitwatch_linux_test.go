//go:build linux

package delivery

import (
	"os/exec"
	"testing"
	"time"

	"github.com/agent-interop/runtime/internal/testutil/wait"
)

// TestWatchExitSeesAProcessEnd watches a real child process: the channel
// stays open while it runs and closes once it is killed, before it is
// reaped (a zombie is gone, as pidAlive says).
func TestWatchExitSeesAProcessEnd(t *testing.T) {
	cmd := exec.Command("sleep", "300")
	if err := cmd.Start(); err != nil {
		t.Skipf("no sleep program: %v", err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	exited, stop := watchExit(cmd.Process.Pid)
	defer stop()
	if exited == nil {
		t.Skip("this kernel has no pidfd_open")
	}
	select {
	case <-exited:
		t.Fatal("the watch says a running process exited")
	default:
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-exited:
	case <-time.After(wait.InProcess):
		t.Fatalf("the watch did not see the process end within %s", wait.InProcess)
	}
	if pidAlive(cmd.Process.Pid) {
		t.Fatal("pidAlive says the killed process runs")
	}
}

// TestWatchExitOfNoProcess: a pid that does not run cannot be watched.
func TestWatchExitOfNoProcess(t *testing.T) {
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skipf("no true program: %v", err)
	}
	if exited, stop := watchExit(cmd.Process.Pid); exited != nil {
		stop()
		t.Fatal("a reaped process was watched")
	}
}
