package opencode

import (
	"net/netip"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agent-interop/runtime/internal/osproc"
)

// TestCandidatesFrom covers the listener list macOS and Windows give
// (lsof, the IP Helper table): loopback and wildcard binds are probed,
// other addresses are not, duplicates collapse.
func TestCandidatesFrom(t *testing.T) {
	ls := []osproc.Listener{
		{PID: 1, Addr: netip.MustParseAddrPort("127.0.0.1:4096")},
		{PID: 1, Addr: netip.MustParseAddrPort("0.0.0.0:4096")},
		{PID: 2, Addr: netip.MustParseAddrPort("[::1]:5000")},
		{PID: 2, Addr: netip.MustParseAddrPort("[::]:4100")},
		{PID: 3, Addr: netip.MustParseAddrPort("192.168.1.20:4200")},
		{PID: 4, Addr: netip.MustParseAddrPort("[::ffff:127.0.0.1]:3000")},
	}
	want := []candidate{
		{port: 3000, base: "http://127.0.0.1:3000"},
		{port: 4096, base: "http://127.0.0.1:4096"},
		{port: 4100, base: "http://[::1]:4100"},
		{port: 5000, base: "http://[::1]:5000"},
	}
	if d := cmp.Diff(want, candidatesFrom(ls), cmp.AllowUnexported(candidate{})); d != "" {
		t.Fatalf("candidatesFrom (-want +got):\n%s", d)
	}
}
