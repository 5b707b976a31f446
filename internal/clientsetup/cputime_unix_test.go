//go:build unix

package clientsetup

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time (user + system) this process has used: the
// benchmarks report it beside the wall time, which a busy machine inflates.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
