//go:build unix

package importstate

import (
	"os"
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
	// A state file named like one, that is a symlink to a FIFO (the
	// hostile kind the helper of issue 18 added): refused the same way.
	link := filepath.Join(dir, "state.json")
	if err := os.Symlink(fifo, link); err != nil {
		t.Fatal(err)
	}
	out := []struct{ name, path, want string }{
		{"fifo", fifo, `is a FIFO \(named pipe\); the 0\.3\.x state file must be a regular file`},
		{"symlink to a fifo", link, `is a FIFO \(named pipe\); the 0\.3\.x state file must be a regular file`},
	}
	if runtime.GOOS == "linux" {
		zero := filepath.Join(dir, "zero.json")
		if err := os.Symlink("/dev/zero", zero); err != nil {
			t.Fatal(err)
		}
		out = append(out, struct{ name, path, want string }{"dev zero", "/dev/zero", `is a device; the 0\.3\.x state file must be a regular file`},
			struct{ name, path, want string }{"symlink to dev zero", zero, `is a device; the 0\.3\.x state file must be a regular file`})
	}
	return out
}
