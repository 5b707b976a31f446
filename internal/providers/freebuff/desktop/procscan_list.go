package desktop

import (
	"sort"
	"strconv"
	"strings"

	"github.com/agent-interop/runtime/internal/osproc"
	"github.com/agent-interop/runtime/internal/providers/freebuff/core"
)

// orchestratorsFrom picks the orchestrator processes out of a process list
// and listener table (the macOS and Windows path; Linux reads /proc):
//   - a process whose environment has FREEBUFF_LAUNCH_ID, or whose command
//     line runs orchestrator.js (macOS: ps shows both);
//   - where the system shows neither (Windows), a process whose image
//     name starts with "freebuff", or whose parent's does: the Desktop
//     app's orchestrator child. Probing /api/projects then tells the
//     Desktop from the CLI, and with no launch id such a candidate stays
//     read-only.
//
// Ports are its loopback or wildcard listeners, PORT and --port.
func orchestratorsFrom(procs []osproc.Process, ls []osproc.Listener, self int) []orchestratorProc {
	name := map[int]string{}
	for _, p := range procs {
		name[p.PID] = strings.ToLower(p.Name)
	}
	ports := map[int][]int{}
	for _, l := range ls {
		ip := l.Addr.Addr().Unmap()
		if l.Addr.Port() != 0 && (ip.IsLoopback() || ip.IsUnspecified()) {
			ports[l.PID] = append(ports[l.PID], int(l.Addr.Port()))
		}
	}
	var out []orchestratorProc
	for _, p := range procs {
		if p.PID == self || p.PID <= 0 {
			continue
		}
		launchID := strings.TrimSpace(p.Env[core.EnvLaunchID])
		switch {
		case launchID != "" || strings.Contains(p.Command, "orchestrator.js"):
		case p.Command == "" && p.Env == nil &&
			(strings.HasPrefix(name[p.PID], "freebuff") || strings.HasPrefix(name[p.PPID], "freebuff")):
		default:
			continue
		}
		ps := append([]int(nil), ports[p.PID]...)
		if v, err := strconv.Atoi(strings.TrimSpace(p.Env["PORT"])); err == nil && v > 0 && v < 65536 {
			ps = append(ps, v)
		}
		if m := portFlag.Get().FindStringSubmatch(p.Command); m != nil {
			if v, _ := strconv.Atoi(m[1]); v > 0 && v < 65536 {
				ps = append(ps, v)
			}
		}
		ps = uniqueInts(ps)
		if len(ps) == 0 {
			continue
		}
		out = append(out, orchestratorProc{PID: p.PID, LaunchID: launchID, Ports: ps})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].PID > out[j].PID })
	return out
}
