package osproc

import (
	"encoding/binary"
	"net/netip"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParsePS(t *testing.T) {
	out, err := os.ReadFile("testdata/ps-darwin.txt")
	if err != nil {
		t.Fatal(err)
	}
	got := ParsePS(out)
	want := []Process{
		{PID: 1, PPID: 0, Name: "launchd", Command: "/sbin/launchd"},
		{PID: 512, PPID: 1, Name: "Freebuff", Command: "/Applications/Freebuff.app/Contents/MacOS/Freebuff"},
		{
			PID: 533, PPID: 512, Name: "Freebuff",
			// A program path with a space splits like any argument; the
			// command line is still whole.
			Command: "/Applications/Freebuff.app/Contents/Frameworks/Freebuff Helper.app/Contents/MacOS/node orchestrator.js --port 41234",
			Env: map[string]string{
				"FREEBUFF_LAUNCH_ID": "launch-7f3a", "PORT": "41234", "HOME": "/Users/ann",
				"PS1": `\h: \w$`, "TERM": "xterm-256color",
			},
		},
		{PID: 601, PPID: 533, Name: "freebuff", Command: "/usr/local/bin/freebuff --cwd /Users/ann/src/app"},
		{PID: 700, PPID: 1, Name: "-zsh", Command: "-zsh"},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("ParsePS (-want +got):\n%s", d)
	}
}

func TestParseLsof(t *testing.T) {
	out, err := os.ReadFile("testdata/lsof-darwin.txt")
	if err != nil {
		t.Fatal(err)
	}
	got := ParseLsof(out)
	want := []Listener{
		{PID: 533, Addr: netip.MustParseAddrPort("127.0.0.1:41234")},
		{PID: 533, Addr: netip.MustParseAddrPort("[::1]:41235")},
		{PID: 601, Addr: netip.MustParseAddrPort("0.0.0.0:5173")},
		{PID: 700, Addr: netip.MustParseAddrPort("[fe80::1]:9000")},
	}
	if d := cmp.Diff(want, got, cmp.Comparer(func(a, b netip.AddrPort) bool { return a == b })); d != "" {
		t.Fatalf("ParseLsof (-want +got):\n%s", d)
	}
}

// tcpRow builds one MIB_TCPROW_OWNER_PID the way Windows lays it out.
func tcpRow(state uint32, local string, pid uint32) []byte {
	ap := netip.MustParseAddrPort(local)
	r := make([]byte, tcpRowSize)
	binary.LittleEndian.PutUint32(r[0:], state)
	a := ap.Addr().As4()
	copy(r[4:8], a[:])
	binary.BigEndian.PutUint16(r[8:], ap.Port())
	binary.LittleEndian.PutUint32(r[20:], pid)
	return r
}

func tcp6Row(state uint32, local string, pid uint32) []byte {
	ap := netip.MustParseAddrPort(local)
	r := make([]byte, tcp6RowSize)
	a := ap.Addr().As16()
	copy(r[0:16], a[:])
	binary.BigEndian.PutUint16(r[20:], ap.Port())
	binary.LittleEndian.PutUint32(r[48:], state)
	binary.LittleEndian.PutUint32(r[52:], pid)
	return r
}

func table(rows ...[]byte) []byte {
	b := binary.LittleEndian.AppendUint32(nil, uint32(len(rows)))
	for _, r := range rows {
		b = append(b, r...)
	}
	return b
}

func TestParseTCPTables(t *testing.T) {
	const established = 5
	v4 := table(tcpRow(stateListen, "127.0.0.1:4096", 4242), tcpRow(established, "127.0.0.1:50000", 4242), tcpRow(stateListen, "0.0.0.0:8788", 7))
	got, err := ParseTCPTable(v4)
	if err != nil {
		t.Fatal(err)
	}
	want := []Listener{{PID: 4242, Addr: netip.MustParseAddrPort("127.0.0.1:4096")}, {PID: 7, Addr: netip.MustParseAddrPort("0.0.0.0:8788")}}
	if d := cmp.Diff(want, got, cmp.Comparer(func(a, b netip.AddrPort) bool { return a == b })); d != "" {
		t.Fatalf("ParseTCPTable (-want +got):\n%s", d)
	}
	v6 := table(tcp6Row(stateListen, "[::1]:4097", 99), tcp6Row(established, "[::1]:50001", 99))
	got6, err := ParseTCP6Table(v6)
	if err != nil {
		t.Fatal(err)
	}
	if len(got6) != 1 || got6[0].PID != 99 || got6[0].Addr != netip.MustParseAddrPort("[::1]:4097") {
		t.Fatalf("ParseTCP6Table = %v", got6)
	}

	for name, b := range map[string][]byte{
		"no count":       {1, 0},
		"rows missing":   table(tcpRow(stateListen, "127.0.0.1:1", 1))[:20],
		"count too high": append(binary.LittleEndian.AppendUint32(nil, 1000), make([]byte, 48)...),
	} {
		if _, err := ParseTCPTable(b); err == nil {
			t.Errorf("%s: ParseTCPTable accepted a short table", name)
		}
	}
}

func TestDescendants(t *testing.T) {
	procs := []Process{{PID: 0, PPID: 0}, {PID: 4, PPID: 0}, {PID: 10, PPID: 4}, {PID: 11, PPID: 10}, {PID: 12, PPID: 10}, {PID: 13, PPID: 11}, {PID: 20, PPID: 4}}
	if d := cmp.Diff([]int{11, 12, 13}, Descendants(procs, 10)); d != "" {
		t.Fatalf("Descendants(10) (-want +got):\n%s", d)
	}
	if got := Descendants(procs, 13); len(got) != 0 {
		t.Fatalf("a leaf has descendants %v", got)
	}
}
