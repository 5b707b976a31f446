package proctest

import "golang.org/x/sys/windows"

// stillActive is STILL_ACTIVE, the exit code of a running process.
const stillActive = 259

// Exists reports whether pid names a running process.
func Exists(pid int) bool {
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	if err != nil {
		return false
	}
	defer windows.CloseHandle(h)
	var code uint32
	return windows.GetExitCodeProcess(h, &code) == nil && code == stillActive
}

// GroupExists reports whether the group's leader runs (Windows process
// groups cannot be enumerated).
func GroupExists(pgid int) bool { return Exists(pgid) }
