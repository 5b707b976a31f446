//go:build unix

package httpserve

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time (user and system) this process has used: client
// and server both, which on a loaded machine moves far less than wall time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
