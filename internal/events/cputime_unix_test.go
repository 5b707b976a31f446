//go:build unix

package events

import (
	"syscall"
	"time"
)

// processCPUTime is this process's user+system CPU time (getrusage).
func processCPUTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
