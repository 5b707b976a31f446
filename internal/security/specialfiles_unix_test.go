//go:build unix

package security

import "syscall"

// makeFIFO creates a named pipe at path.
func makeFIFO(path string) error { return syscall.Mkfifo(path, 0o644) }

// makeCharDevice creates /dev/null's twin at path. It needs CAP_MKNOD;
// without it the entry simply does not exist and is still unreadable.
func makeCharDevice(path string) {
	_ = syscall.Mknod(path, syscall.S_IFCHR|0o666, 1<<8|3)
}
