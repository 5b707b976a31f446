//go:build unix

package procgroup

import (
	"errors"
	"os/exec"
	"syscall"
)

// Set makes cmd lead a new process group when it starts.
func Set(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// Terminate asks the process group led by pid to end (SIGTERM).
func Terminate(pid int) error { return signalGroup(pid, syscall.SIGTERM) }

// Kill ends the process group led by pid at once (SIGKILL). Call it
// before the leader is reaped when the group's other members must go too:
// an unreaped leader keeps the group id from being reused.
func Kill(pid int) error { return signalGroup(pid, syscall.SIGKILL) }

func signalGroup(pid int, sig syscall.Signal) error {
	if pid <= 0 {
		return errors.New("procgroup: no process")
	}
	err := syscall.Kill(-pid, sig)
	if errors.Is(err, syscall.ESRCH) {
		return nil // already gone
	}
	return err
}
