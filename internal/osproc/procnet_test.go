package osproc

import (
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestReadProcNet: the LISTEN rows with a port, addresses decoded from the
// kernel's word order (tcp and tcp6, IPv4-mapped too), the owner's uid and
// the inode kept; the
// header, other states, port 0 and undecodable rows are skipped.
func TestReadProcNet(t *testing.T) {
	const rest = " 00000000:00000000 00:00000000 00000000  1000        0 "
	table := strings.Join([]string{
		"  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode",
		"   0: 0100007F:B26D 00000000:0000 0A" + rest + "9001 1",
		"   1: 0100007F:0016 0100007F:9C40 01" + rest + "9002 1", // established
		"   2: 00000000:0000 00000000:0000 0A" + rest + "9003 1", // port 0
		"   3: 0A01020A:0050 00000000:0000 0A" + rest + "9004 1", // 10.2.1.10
		"   4: zz:0050 00000000:0000 0A" + rest + "9005 1",
		"   5: 00000000000000000000000001000000:B26E 00000000000000000000000000000000:0000 0A" + rest + "9006 1",
		"   6: 0000000000000000FFFF00000100007F:1F90 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 9007 1",
		"   7: 00000000:0050 00000000:0000 0A", // no inode column
	}, "\n")
	path := filepath.Join(t.TempDir(), "tcp")
	if err := os.WriteFile(path, []byte(table+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	want := []ProcListener{
		{Addr: netip.MustParseAddrPort("127.0.0.1:45677"), Inode: "9001", UID: 1000},
		{Addr: netip.MustParseAddrPort("10.2.1.10:80"), Inode: "9004", UID: 1000},
		{Addr: netip.MustParseAddrPort("[::1]:45678"), Inode: "9006", UID: 1000},
		{Addr: netip.MustParseAddrPort("[::ffff:127.0.0.1]:8080"), Inode: "9007", UID: 0},
		{Addr: netip.MustParseAddrPort("0.0.0.0:80"), UID: -1},
	}
	if diff := cmp.Diff(want, ReadProcNet(path), cmp.Comparer(func(a, b netip.AddrPort) bool { return a == b })); diff != "" {
		t.Fatalf("ReadProcNet (-want +got):\n%s", diff)
	}
	if got := ReadProcNet(filepath.Join(t.TempDir(), "missing")); got != nil {
		t.Fatalf("a missing table = %v, want nil", got)
	}
}
