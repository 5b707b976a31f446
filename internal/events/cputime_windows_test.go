package events

import (
	"time"

	"golang.org/x/sys/windows"
)

// processCPUTime is this process's user+system CPU time
// (GetProcessTimes, in 100 ns units).
func processCPUTime() time.Duration {
	var creation, exit, kernel, user windows.Filetime
	if windows.GetProcessTimes(windows.CurrentProcess(), &creation, &exit, &kernel, &user) != nil {
		return 0
	}
	ticks := func(f windows.Filetime) int64 { return int64(f.HighDateTime)<<32 | int64(f.LowDateTime) }
	return time.Duration((ticks(kernel) + ticks(user)) * 100)
}
