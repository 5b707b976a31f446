// Package osproc lists the computer's processes and loopback TCP
// listeners without /proc, for the systems that have none: `ps` and
// `lsof` on macOS (and any Unix), the Toolhelp process snapshot and the
// IP Helper TCP tables on Windows. Linux callers keep reading /proc.
//
// The parsers are plain functions over a program's output or a table's
// bytes, so they are tested with fixtures on every system; List and
// Listeners run the real thing.
package osproc

import "net/netip"

// Process is one entry of the process list.
type Process struct {
	PID, PPID int
	// Name is the program's file name (Windows: the image name, e.g.
	// "node.exe"); Command is the command line where the system shows it
	// (empty on Windows, whose snapshot has no command lines).
	Name    string
	Command string
	// Env is the process's environment where the system shows it (ps e on
	// Unix shows it for the user's own processes; Windows: nil).
	Env map[string]string
}

// Listener is a TCP socket in the LISTEN state and the process owning it.
type Listener struct {
	PID  int
	Addr netip.AddrPort
}

// Descendants returns the PIDs of every process below root in procs
// (children, their children, ...), parents before children.
func Descendants(procs []Process, root int) []int {
	children := map[int][]int{}
	for _, p := range procs {
		if p.PID != p.PPID { // PID 0 on Windows is its own parent
			children[p.PPID] = append(children[p.PPID], p.PID)
		}
	}
	var out []int
	seen := map[int]bool{root: true}
	queue := []int{root}
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		for _, c := range children[pid] {
			if !seen[c] {
				seen[c] = true
				out = append(out, c)
				queue = append(queue, c)
			}
		}
	}
	return out
}
