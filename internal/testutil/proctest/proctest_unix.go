//go:build unix

package proctest

import (
	"errors"
	"syscall"
)

// Exists reports whether pid names a process (a zombie still counts).
func Exists(pid int) bool {
	return !errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}

// GroupExists reports whether any process of the group pgid remains.
func GroupExists(pgid int) bool {
	return !errors.Is(syscall.Kill(-pgid, 0), syscall.ESRCH)
}
