package procgroup

import (
	"os/exec"
	"syscall"
)

// SetWithParentDeath is Set, and the kernel sends sig to the child when
// the thread that started it ends (Pdeathsig), so a crashed runtime does
// not leave a managed server behind.
func SetWithParentDeath(cmd *exec.Cmd, sig syscall.Signal) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: sig}
}
