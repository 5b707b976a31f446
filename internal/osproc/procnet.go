package osproc

import (
	"bufio"
	"encoding/binary"
	"encoding/hex"
	"net/netip"
	"os"
	"strconv"
	"strings"
)

// ProcListener is a LISTEN row of a Linux listener table.
type ProcListener struct {
	Addr netip.AddrPort
	// Inode is the socket's inode, as a process's fd links name it
	// ("socket:[<inode>]"); "" when the row has no inode column.
	Inode string
	// UID is the user id that owns the socket; -1 when the row has no uid
	// column.
	UID int
}

// ReadProcNet reads a Linux listener table (/proc/net/tcp or tcp6, or a
// process's /proc/<pid>/net/...) and returns its LISTEN rows with a port,
// in table order; nil when the file cannot be read. Rows it cannot decode
// are skipped.
func ReadProcNet(path string) []ProcListener {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []ProcListener
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 4 || fields[3] != "0A" { // 0A = TCP_LISTEN; the header says "st"
			continue
		}
		hostHex, portHex, ok := strings.Cut(fields[1], ":")
		if !ok {
			continue
		}
		port, err := strconv.ParseUint(portHex, 16, 16)
		ip, ok := procAddr(hostHex)
		if err != nil || port == 0 || !ok {
			continue
		}
		l := ProcListener{Addr: netip.AddrPortFrom(ip, uint16(port)), UID: -1}
		if len(fields) >= 8 {
			if uid, err := strconv.ParseUint(fields[7], 10, 32); err == nil {
				l.UID = int(uid)
			}
		}
		if len(fields) >= 10 {
			l.Inode = fields[9]
		}
		out = append(out, l)
	}
	return out
}

// procAddr decodes an address of a listener table: 8 hex digits (tcp) or
// 32 (tcp6), each 32-bit word in the kernel's byte order.
func procAddr(s string) (netip.Addr, bool) {
	b, err := hex.DecodeString(s)
	if err != nil || (len(b) != 4 && len(b) != 16) {
		return netip.Addr{}, false
	}
	for i := 0; i < len(b); i += 4 {
		binary.BigEndian.PutUint32(b[i:i+4], binary.NativeEndian.Uint32(b[i:i+4]))
	}
	return netip.AddrFromSlice(b)
}
