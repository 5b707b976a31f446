//go:build unix

package bench

import (
	"errors"
	"os/exec"
	"syscall"
)

// ownProcessGroup makes the command lead a new process group, so that
// killProcessGroup also reaches anything it started.
func ownProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// killProcessGroup sends SIGKILL to the command's process group. Call it
// before Wait: an unreaped leader keeps the group id from being reused.
func killProcessGroup(cmd *exec.Cmd) error {
	err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	if err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
	}
	return nil
}
