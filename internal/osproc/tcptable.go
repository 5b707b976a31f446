package osproc

import (
	"encoding/binary"
	"fmt"
	"net/netip"
)

// Row sizes of the IP Helper tables GetExtendedTcpTable fills with
// TCP_TABLE_OWNER_PID_LISTENER: MIB_TCPROW_OWNER_PID (six DWORDs) and
// MIB_TCP6ROW_OWNER_PID (two 16-byte addresses, scope ids, ports, state,
// pid).
const (
	tcpRowSize  = 24
	tcp6RowSize = 56
	stateListen = 2 // MIB_TCP_STATE_LISTEN
)

// ParseTCPTable decodes a MIB_TCPTABLE_OWNER_PID: a DWORD row count, then
// rows of {state, local addr, local port, remote addr, remote port, pid}.
// DWORDs are little-endian; the address is in network order and the port
// is the low 16 bits in network order. Only LISTEN rows are returned.
func ParseTCPTable(b []byte) ([]Listener, error) {
	return parseTable(b, tcpRowSize, func(r []byte) (uint32, netip.AddrPort, uint32) {
		addr := netip.AddrFrom4([4]byte(r[4:8]))
		port := binary.BigEndian.Uint16(r[8:10])
		return binary.LittleEndian.Uint32(r[0:4]), netip.AddrPortFrom(addr, port), binary.LittleEndian.Uint32(r[20:24])
	})
}

// ParseTCP6Table decodes a MIB_TCP6TABLE_OWNER_PID: a DWORD row count,
// then rows of {local addr[16], local scope, local port, remote addr[16],
// remote scope, remote port, state, pid}.
func ParseTCP6Table(b []byte) ([]Listener, error) {
	return parseTable(b, tcp6RowSize, func(r []byte) (uint32, netip.AddrPort, uint32) {
		addr := netip.AddrFrom16([16]byte(r[0:16]))
		port := binary.BigEndian.Uint16(r[20:22])
		return binary.LittleEndian.Uint32(r[48:52]), netip.AddrPortFrom(addr, port), binary.LittleEndian.Uint32(r[52:56])
	})
}

func parseTable(b []byte, rowSize int, row func([]byte) (state uint32, local netip.AddrPort, pid uint32)) ([]Listener, error) {
	if len(b) < 4 {
		return nil, fmt.Errorf("TCP table of %d bytes has no row count", len(b))
	}
	n := int(binary.LittleEndian.Uint32(b[0:4]))
	// Windows aligns the rows after the count on their natural boundary;
	// both row types are made of DWORDs, so they start at byte 4.
	if need := 4 + n*rowSize; n < 0 || len(b) < need {
		return nil, fmt.Errorf("TCP table says %d rows of %d bytes but has %d bytes", n, rowSize, len(b))
	}
	var out []Listener
	for i := 0; i < n; i++ {
		r := b[4+i*rowSize : 4+(i+1)*rowSize]
		state, local, pid := row(r)
		if state != stateListen || local.Port() == 0 {
			continue
		}
		out = append(out, Listener{PID: int(pid), Addr: local})
	}
	return out, nil
}
