//go:build unix

package verify

import (
	"os/exec"
	"syscall"

	"golang.org/x/sys/unix"
)

// exitStatus returns the exit code, or the terminating signal's name.
func exitStatus(cmd *exec.Cmd) (*int, *string) {
	if cmd.ProcessState == nil {
		return nil, nil
	}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		name := unix.SignalName(ws.Signal())
		if name == "" {
			name = ws.Signal().String()
		}
		return nil, &name
	}
	code := cmd.ProcessState.ExitCode()
	if code < 0 {
		return nil, nil
	}
	return &code, nil
}
