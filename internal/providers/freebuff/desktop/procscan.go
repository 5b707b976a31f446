package desktop

import (
	"bytes"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/agent-interop/runtime/internal/lazy"
	"github.com/agent-interop/runtime/internal/osproc"
	"github.com/agent-interop/runtime/internal/providers/freebuff/core"
)

// orchestratorProc is a process that looks like the Freebuff Desktop
// orchestrator: it has FREEBUFF_LAUNCH_ID in its environment or runs
// orchestrator.js.
type orchestratorProc struct {
	PID      int
	LaunchID string
	Ports    []int // listening loopback (or wildcard) TCP ports
}

var portFlag = lazy.Regexp{Expr: `--port[= ](\d{1,5})`}

// scanProc looks through procDir (normally /proc) for orchestrator
// processes and their listening ports, skipping self. Unreadable processes
// (other users') are skipped silently.
func scanProc(procDir string, self int) []orchestratorProc {
	entries, err := os.ReadDir(procDir)
	if err != nil {
		return nil
	}
	var out []orchestratorProc
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self || pid <= 0 {
			continue
		}
		dir := filepath.Join(procDir, e.Name())
		env, err := os.ReadFile(filepath.Join(dir, "environ"))
		if err != nil {
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join(dir, "cmdline"))
		cmd := string(bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '}))
		var launchID, portEnv string
		for _, kv := range bytes.Split(env, []byte{0}) {
			k, v, _ := bytes.Cut(kv, []byte("="))
			switch string(k) {
			case core.EnvLaunchID:
				launchID = strings.TrimSpace(string(v))
			case "PORT":
				portEnv = string(v)
			}
		}
		if launchID == "" && !strings.Contains(cmd, "orchestrator.js") {
			continue
		}
		ports := listeningPorts(dir)
		if p, err := strconv.Atoi(strings.TrimSpace(portEnv)); err == nil && p > 0 && p < 65536 {
			ports = append(ports, p)
		}
		if m := portFlag.Get().FindStringSubmatch(cmd); m != nil {
			if p, _ := strconv.Atoi(m[1]); p > 0 && p < 65536 {
				ports = append(ports, p)
			}
		}
		out = append(out, orchestratorProc{PID: pid, LaunchID: launchID, Ports: uniqueInts(ports)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].PID > out[j].PID })
	return out
}

// listeningPorts returns the TCP ports the process at procPidDir listens on
// with a loopback or wildcard local address, matched through its socket
// inodes.
func listeningPorts(procPidDir string) []int {
	fds, err := os.ReadDir(filepath.Join(procPidDir, "fd"))
	if err != nil {
		return nil
	}
	inodes := map[string]struct{}{}
	for _, fd := range fds {
		target, err := os.Readlink(filepath.Join(procPidDir, "fd", fd.Name()))
		if err != nil {
			continue
		}
		if rest, ok := strings.CutPrefix(target, "socket:["); ok {
			inodes[strings.TrimSuffix(rest, "]")] = struct{}{}
		}
	}
	if len(inodes) == 0 {
		return nil
	}
	var ports []int
	for _, table := range []string{"tcp", "tcp6"} {
		ports = append(ports, parseListeners(filepath.Join(procPidDir, "net", table), inodes)...)
	}
	return ports
}

// parseListeners reads a /proc/net/tcp{,6} table and returns the ports of
// LISTEN rows owned by one of inodes whose local address is loopback or
// unspecified.
func parseListeners(path string, inodes map[string]struct{}) []int {
	var ports []int
	for _, l := range osproc.ReadProcNet(path) {
		ip := l.Addr.Addr().Unmap()
		if _, ok := inodes[l.Inode]; ok && (ip.IsLoopback() || ip.IsUnspecified()) {
			ports = append(ports, int(l.Addr.Port()))
		}
	}
	return ports
}

func uniqueInts(in []int) []int {
	seen := map[int]struct{}{}
	out := in[:0]
	for _, v := range in {
		if _, ok := seen[v]; !ok {
			seen[v] = struct{}{}
			out = append(out, v)
		}
	}
	return out
}
