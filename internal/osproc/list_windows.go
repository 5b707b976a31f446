package osproc

import (
	"context"
	"errors"
	"fmt"
	"unsafe"

	"golang.org/x/sys/windows"
)

// List reads the Toolhelp process snapshot: pid, parent pid and image
// name of every process (no command lines, no environments).
func List(context.Context) ([]Process, error) {
	snap, err := windows.CreateToolhelp32Snapshot(windows.TH32CS_SNAPPROCESS, 0)
	if err != nil {
		return nil, fmt.Errorf("process snapshot: %w", err)
	}
	defer windows.CloseHandle(snap)
	var e windows.ProcessEntry32
	e.Size = uint32(unsafe.Sizeof(e))
	var out []Process
	for err = windows.Process32First(snap, &e); err == nil; err = windows.Process32Next(snap, &e) {
		out = append(out, Process{PID: int(e.ProcessID), PPID: int(e.ParentProcessID), Name: windows.UTF16ToString(e.ExeFile[:])})
	}
	if !errors.Is(err, windows.ERROR_NO_MORE_FILES) {
		return out, fmt.Errorf("process snapshot: %w", err)
	}
	return out, nil
}

var (
	iphlpapi            = windows.NewLazySystemDLL("iphlpapi.dll")
	getExtendedTcpTable = iphlpapi.NewProc("GetExtendedTcpTable")
)

// tcpTableOwnerPIDListener is TCP_TABLE_OWNER_PID_LISTENER.
const tcpTableOwnerPIDListener = 3

// Listeners reads the IPv4 and IPv6 listener tables of the IP Helper API
// (GetExtendedTcpTable, TCP_TABLE_OWNER_PID_LISTENER).
func Listeners(context.Context) ([]Listener, error) {
	v4, err := tcpTable(windows.AF_INET)
	if err != nil {
		return nil, err
	}
	out, err := ParseTCPTable(v4)
	if err != nil {
		return nil, err
	}
	if v6, err := tcpTable(windows.AF_INET6); err == nil {
		if l6, err := ParseTCP6Table(v6); err == nil {
			out = append(out, l6...)
		}
	}
	return out, nil
}

func tcpTable(family uint32) ([]byte, error) {
	if err := getExtendedTcpTable.Find(); err != nil {
		return nil, fmt.Errorf("GetExtendedTcpTable: %w", err)
	}
	size := uint32(16 << 10)
	for attempt := 0; attempt < 4; attempt++ {
		buf := make([]byte, size)
		r, _, _ := getExtendedTcpTable.Call(uintptr(unsafe.Pointer(&buf[0])), uintptr(unsafe.Pointer(&size)), 0, uintptr(family), tcpTableOwnerPIDListener, 0)
		switch windows.Errno(r) {
		case 0:
			return buf[:size], nil
		case windows.ERROR_INSUFFICIENT_BUFFER:
			continue // size now holds what is needed
		default:
			return nil, fmt.Errorf("GetExtendedTcpTable: %w", windows.Errno(r))
		}
	}
	return nil, errors.New("GetExtendedTcpTable: the table kept growing")
}
