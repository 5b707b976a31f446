package main

import (
	"os/exec"
	"syscall"
)

// dieWithParent makes the program get SIGKILL when the gate dies.
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
