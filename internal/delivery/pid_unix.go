//go:build unix

package delivery

import (
	"bytes"
	"errors"
	"os"
	"strconv"
	"syscall"
)

// pidAlive reports whether a process with this pid runs (signal 0; a
// process we may not signal still runs). A zombie, which has exited but not
// been reaped, does not count.
func pidAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	if err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	if stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); err == nil {
		// "pid (comm) S ...": the state follows the last ')'.
		if i := bytes.LastIndexByte(stat, ')'); i >= 0 && i+2 < len(stat) && stat[i+2] == 'Z' {
			return false
		}
	}
	return true
}
