//go:build unix && !linux

package procgroup

import (
	"os/exec"
	"syscall"
)

// SetWithParentDeath is Set: this system has no parent-death signal
// (Pdeathsig is Linux-only), so the child outlives a crashed runtime.
func SetWithParentDeath(cmd *exec.Cmd, _ syscall.Signal) { Set(cmd) }
