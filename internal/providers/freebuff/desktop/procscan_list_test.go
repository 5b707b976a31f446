package desktop

import (
	"net/netip"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agent-interop/runtime/internal/osproc"
)

// TestOrchestratorsFromPS is the macOS path: ps (with environments) and
// lsof output, parsed by osproc, select the orchestrator and its ports.
func TestOrchestratorsFromPS(t *testing.T) {
	procs := osproc.ParsePS([]byte(`    1     0 /sbin/launchd
  512     1 /Applications/Freebuff.app/Contents/MacOS/Freebuff HOME=/Users/ann
  533   512 /Applications/Freebuff.app/Contents/Resources/node orchestrator.js FREEBUFF_LAUNCH_ID=launch-7f3a PORT=41234 HOME=/Users/ann
  540   512 /usr/bin/node server.js --port 5000 HOME=/Users/ann
  600     1 /usr/bin/node orchestrator.js --port=41300
  999     1 /usr/bin/node orchestrator.js --port 41999
`))
	ls := osproc.ParseLsof([]byte("p533\nn127.0.0.1:41234\nn[::1]:41240\nn192.168.0.5:41250\np540\nn127.0.0.1:5000\n"))
	got := orchestratorsFrom(procs, ls, 999)
	want := []orchestratorProc{
		{PID: 600, Ports: []int{41300}},
		{PID: 533, LaunchID: "launch-7f3a", Ports: []int{41234, 41240}},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("orchestratorsFrom (-want +got):\n%s", d)
	}
}

// TestOrchestratorsFromWindowsSnapshot is the Windows path: image names
// and parents only, ports from the listener table, no launch id.
func TestOrchestratorsFromWindowsSnapshot(t *testing.T) {
	procs := []osproc.Process{
		{PID: 4, PPID: 0, Name: "System"},
		{PID: 7100, PPID: 900, Name: "Freebuff.exe"},
		{PID: 7200, PPID: 7100, Name: "node.exe"},
		{PID: 7300, PPID: 900, Name: "node.exe"},
	}
	ls := []osproc.Listener{
		{PID: 7200, Addr: netip.MustParseAddrPort("127.0.0.1:41234")},
		{PID: 7300, Addr: netip.MustParseAddrPort("127.0.0.1:3000")},
		{PID: 7100, Addr: netip.MustParseAddrPort("10.0.0.2:9")},
	}
	got := orchestratorsFrom(procs, ls, 1)
	want := []orchestratorProc{{PID: 7200, Ports: []int{41234}}}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("orchestratorsFrom (-want +got):\n%s", d)
	}
}
