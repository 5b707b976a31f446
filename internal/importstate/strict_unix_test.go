//go:build unix

package importstate

import (
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
)

// specialFiles are a FIFO (an open or read of it would block forever) and,
// on Linux, /dev/zero (a read never ends).
func specialFiles(t *testing.T, dir string) []struct{ name, path, want string } {
	fifo := filepath.Join(dir, "state.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	out := []struct{ name, path, want string }{{"fifo", fifo, `is a FIFO \(named pipe\); the 0\.3\.x state file must be a regular file`}}
	if runtime.GOOS == "linux" {
		out = append(out, struct{ name, path, want string }{"dev zero", "/dev/zero", `is a device; the 0\.3\.x state file must be a regular file`})
	}
	return out
}
