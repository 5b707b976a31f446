package procgroup

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"syscall"

	"golang.org/x/sys/windows"

	"github.com/agent-interop/runtime/internal/osproc"
)

// Set makes cmd start a new process group (CREATE_NEW_PROCESS_GROUP).
func Set(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: windows.CREATE_NEW_PROCESS_GROUP}
}

// SetWithParentDeath is Set: Windows has no parent-death signal.
func SetWithParentDeath(cmd *exec.Cmd, _ syscall.Signal) { Set(cmd) }

// Terminate sends CTRL_BREAK_EVENT to the process group led by pid (what
// a console program sees as Ctrl-Break); when the group shares no console
// with the runtime that fails, and the group is killed instead.
func Terminate(pid int) error {
	if pid <= 0 {
		return errors.New("procgroup: no process")
	}
	if err := windows.GenerateConsoleCtrlEvent(windows.CTRL_BREAK_EVENT, uint32(pid)); err == nil {
		return nil
	}
	return Kill(pid)
}

// Kill ends pid and every descendant in the system's process list.
func Kill(pid int) error {
	if pid <= 0 {
		return errors.New("procgroup: no process")
	}
	procs, err := osproc.List(context.Background())
	if err != nil {
		return killOne(pid)
	}
	var errs []error
	for _, p := range append([]int{pid}, osproc.Descendants(procs, pid)...) {
		errs = append(errs, killOne(p))
	}
	return errors.Join(errs...)
}

func killOne(pid int) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return nil // already gone
	}
	if err := p.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return err
	}
	return nil
}
